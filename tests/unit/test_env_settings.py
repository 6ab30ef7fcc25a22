"""Settings from the environment are validated (issue 28 item 7): a misspelt boolean, a word for a number or a
value outside a field's choices is a one-line error naming the variable, never a silent default."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hybridrag.agents.context import BOOL_SPELLINGS, EnvSettingError, env_flag
from hybridrag.app.policy import server_mode
from hybridrag.graphs import context_for


@pytest.mark.parametrize(
    ("variable", "value", "method", "expected"),
    [
        ("HYBRIDRAG_APPROVE", "ture", "hybgrag", f"expected a boolean: {BOOL_SPELLINGS}"),
        ("HYBRIDRAG_TOP_K", "ten", "fusion", "expected a whole number"),
        ("HYBRIDRAG_STRUCTURED_METHOD", "json", "hybgrag", "one of function_calling, json_schema, json_mode"),
        ("HYBRIDRAG_MODE", "sql", "fusion", "one of hybrid, vector, graph, bm25"),
    ],
)
def test_a_bad_value_names_the_variable(monkeypatch, variable, value, method, expected) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(EnvSettingError) as err:
        context_for(method)
    assert str(err.value).startswith(f"{variable}={value!r}: ") and expected in str(err.value)


@pytest.mark.parametrize(("value", "flag"), [("true", True), ("YES", True), ("1", True), ("off", False), ("0", False)])
def test_good_spellings_are_read(monkeypatch, value, flag) -> None:
    monkeypatch.setenv("HYBRIDRAG_APPROVE", value)
    monkeypatch.setenv("HYBRIDRAG_TOP_K", " 3 ")
    ctx = context_for("hybgrag")
    assert ctx.approve is flag and ctx.top_k == 3


def test_a_python_value_wins_over_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("HYBRIDRAG_TOP_K", "ten")  # not read: the field is set from Python
    assert context_for("fusion", top_k=4).top_k == 4


def test_the_server_mode_flag_is_never_misread_as_off(monkeypatch) -> None:
    monkeypatch.setenv("HYBRIDRAG_SERVER_MODE", "ture")
    with pytest.raises(EnvSettingError, match="HYBRIDRAG_SERVER_MODE='ture'"):
        server_mode()
    monkeypatch.setenv("HYBRIDRAG_SERVER_MODE", "on")
    assert server_mode() is True
    monkeypatch.delenv("HYBRIDRAG_SERVER_MODE")
    assert server_mode() is False and env_flag("HYBRIDRAG_SERVER_MODE", default=True) is True


def test_the_cli_prints_one_line_naming_the_variable() -> None:
    env = {**os.environ, "HYBRIDRAG_TOP_K": "ten"}
    code = "from hybridrag.app.cli import main; raise SystemExit(main(['ask', 'who directed Big']))"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines()[-1] == "error: HYBRIDRAG_TOP_K='ten': expected a whole number"
    assert "Traceback" not in proc.stderr


def test_a_json_reply_is_read_as_one_object_not_a_greedy_span() -> None:
    """Plain-text replies (models without structured output): prose or a stray brace after the object is ignored."""
    from pydantic import BaseModel

    from hybridrag.agents.llm.structured import parse_json_reply

    class Verdict(BaseModel):
        verdict: str

    assert parse_json_reply('sure: {"verdict": "no"} (see {notes})', Verdict).verdict == "no"
    assert parse_json_reply('{"other": {"x": 1}} then {"verdict": "yes"}', Verdict).verdict == "yes"
    with pytest.raises(ValueError, match="no JSON object in the reply"):
        parse_json_reply("no braces at all", Verdict)


def test_the_server_refuses_to_start_with_a_misspelt_setting(monkeypatch) -> None:
    from hybridrag.app.operator import check_config
    from hybridrag.app.server_config import ServerConfig

    monkeypatch.setenv("HYBRIDRAG_APPROVE", "ture")
    with pytest.raises(EnvSettingError, match="HYBRIDRAG_APPROVE='ture'"):
        check_config(ServerConfig(), load_models=False)


def test_a_set_value_outside_the_choices_names_them() -> None:
    from hybridrag.app.setting_args import operator_settings, run_settings

    with pytest.raises(ValueError, match="--set mode=sql: expected one of hybrid, vector, graph, bm25"):
        run_settings("fusion", ["mode=sql"])
    with pytest.raises(ValueError, match="--set hybgrag.structured_method=json: expected one of function_calling"):
        operator_settings(["hybgrag.structured_method=json"])
    assert run_settings("fusion", ["mode=graph", "top_k=3"]) == {"mode": "graph", "top_k": 3}


@pytest.mark.parametrize(
    ("variable", "read", "expected"),
    [
        ("HYBRIDRAG_LLM_TIMEOUT", "llm_timeout", "expected a number"),
        ("HYBRIDRAG_LLM_MAX_RETRIES", "llm_max_retries", "expected a whole number"),
        ("HYBRIDRAG_LOCAL_THREADS", "local_threads", "expected a whole number"),
    ],
)
def test_model_numbers_from_the_environment_name_the_variable(monkeypatch, variable, read, expected) -> None:
    from hybridrag.agents.llm import models

    monkeypatch.setenv(variable, "soon")
    with pytest.raises(models.ModelConfigError, match=f"^{variable}='soon': {expected}$"):
        getattr(models, read)()
    monkeypatch.setenv(variable, "2")
    assert getattr(models, read)() == 2
