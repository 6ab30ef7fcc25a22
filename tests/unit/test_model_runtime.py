"""The local model's runtime guards and the LLM layer's handling of failing model servers."""

from __future__ import annotations

import threading
import time

import httpx
import openai
import pytest
from fake_chat import ScriptedChatModel
from pydantic import BaseModel

from hybridrag.agents.llm import models
from hybridrag.agents.llm.models import LLMUnavailableError, ModelConfigError
from hybridrag.agents.llm.structured import call_structured


class Verdict(BaseModel):
    verdict: str


MSGS = [("human", "is this fine?")]


def test_cpu_check_names_the_missing_instructions():
    with pytest.raises(ModelConfigError) as err:
        models.check_cpu_support(built={"avx2", "avx512f", "avx512_bf16"}, have={"avx", "avx2", "fma"})
    msg = str(err.value)
    assert "avx512_bf16, avx512f" in msg and "scripts/install.sh" in msg and "\n" not in msg


def test_cpu_check_passes_when_the_cpu_has_every_instruction():
    models.check_cpu_support(built={"avx2", "fma"}, have={"avx", "avx2", "fma", "avx512f"})
    models.check_cpu_support(built=set(), have={"avx2"})  # no record: nothing to check


def test_build_record_is_read_from_the_override_file(tmp_path, monkeypatch):
    record = tmp_path / "flags"
    record.write_text("avx2 avx9000\n", encoding="utf-8")
    monkeypatch.setenv("HYBRIDRAG_LLAMA_CPU_FLAGS_FILE", str(record))
    assert models.llama_build_flags() == {"avx2", "avx9000"}
    with pytest.raises(ModelConfigError, match="avx9000"):
        models.check_cpu_support()


def test_threads_setting(monkeypatch):
    monkeypatch.setenv("HYBRIDRAG_LOCAL_THREADS", "3")
    assert models.local_threads() == 3
    monkeypatch.delenv("HYBRIDRAG_LOCAL_THREADS")
    assert 1 <= models.local_threads() <= 4


def test_openmp_threads_do_not_spin():
    import os

    from hybridrag import kb  # noqa: F401 - importing the KB layer sets the policy before torch / llama.cpp load

    assert os.environ["OMP_WAIT_POLICY"].upper() == "PASSIVE"


def _timeout() -> Exception:
    return openai.APITimeoutError(request=httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions"))


def _server_error() -> Exception:
    req = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    return openai.InternalServerError("boom", response=httpx.Response(500, request=req), body=None)


@pytest.mark.parametrize(
    "make", [_timeout, _server_error, lambda: httpx.ConnectError("refused"), lambda: TimeoutError("read timed out")]
)
def test_a_failing_model_server_is_one_clear_error(make):
    fake = ScriptedChatModel(script=[make()])
    with pytest.raises(LLMUnavailableError) as err:
        call_structured(fake, Verdict, MSGS, role="router")
    assert "language model's server failed" in str(err.value) and "\n" not in str(err.value)


def test_an_unreadable_reply_is_still_the_fallback_not_an_error():
    fake = ScriptedChatModel(script=["garbage", "more garbage"])
    out, usage = call_structured(fake, Verdict, MSGS, role="router")
    assert out is None and usage["fallbacks"] == 1


def test_remote_models_get_a_timeout_and_bounded_retries(monkeypatch):
    monkeypatch.setenv("HYBRIDRAG_LLM_TIMEOUT", "7")
    monkeypatch.setenv("HYBRIDRAG_LLM_MAX_RETRIES", "0")
    model = models._openai_compatible("m", "http://127.0.0.1:9/v1")
    assert model.request_timeout == 7 and model.max_retries == 0


def test_local_model_calls_are_serialised(monkeypatch):
    """Two threads never run llama.cpp at once: the second waits for the lock."""
    active, peak = [0], [0]
    lock = threading.Lock()

    def slow_generate(*_a, **_k):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return "done"

    class Base:
        def _generate(self, *a, **k):
            return slow_generate(*a, **k)

    guarded = models.serialised(Base)()
    threads = [threading.Thread(target=guarded._generate) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 1


def test_generation_that_streams_inside_does_not_deadlock():
    """ChatLlamaCpp's _generate calls _stream when streaming: the lock must be re-entrant."""

    class Base:
        def _generate(self):
            return "".join(self._stream())

        def _stream(self):
            yield "ok"

    result: list[str] = []
    t = threading.Thread(target=lambda: result.append(models.serialised(Base)()._generate()), daemon=True)
    t.start()
    t.join(5)
    assert result == ["ok"]


def test_prompt_cache_size_is_a_setting_and_bad_values_are_named(monkeypatch):
    from hybridrag.agents.llm.models import ModelConfigError, prompt_cache_mb

    monkeypatch.delenv("HYBRIDRAG_LOCAL_PROMPT_CACHE_MB", raising=False)
    assert prompt_cache_mb() == 256
    monkeypatch.setenv("HYBRIDRAG_LOCAL_PROMPT_CACHE_MB", "0")
    assert prompt_cache_mb() == 0
    monkeypatch.setenv("HYBRIDRAG_LOCAL_PROMPT_CACHE_MB", "lots")
    with pytest.raises(ModelConfigError, match="HYBRIDRAG_LOCAL_PROMPT_CACHE_MB must be a whole number"):
        prompt_cache_mb()
