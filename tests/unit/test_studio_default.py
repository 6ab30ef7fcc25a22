"""Studio out of the box (issue 28 item 3): langgraph.json names a shipped server config that offers
the sample KB and SmolLM2 (and the model HYBRIDRAG_LLM names), so every LLM method runs with no key;
the operator's own file still wins; errors inside a server name settings, never CLI flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hybridrag.app.policy import PolicyError, build_context
from hybridrag.app.server_config import (
    DEFAULT_CONFIG_ENV,
    SERVER_CONFIG_ENV,
    ModelChoice,
    ServerConfig,
    active_config,
)
from hybridrag.graphs import context_class

ROOT = Path(__file__).resolve().parents[2]
LLM_METHODS = ("hybgrag", "mor", "hydrarag", "ssrag")


@pytest.fixture
def studio_env(monkeypatch: pytest.MonkeyPatch) -> dict:
    """The environment langgraph.json gives the Agent Server (no operator file, no model variable)."""
    env = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))["env"]
    monkeypatch.delenv(SERVER_CONFIG_ENV, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def test_langgraph_json_names_the_shipped_default_and_leaves_the_operators_variable_alone(studio_env):
    assert SERVER_CONFIG_ENV not in studio_env, "langgraph.json would overwrite the operator's own file"
    assert (ROOT / studio_env[DEFAULT_CONFIG_ENV]).is_file()
    config = active_config()
    assert dict(config.kbs) == {"sample": "sample"}
    assert dict(config.models) == {"smollm2": ModelChoice("local:smollm2")} and config.model_name() == "smollm2"


def test_the_default_is_found_from_any_working_directory(studio_env, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # the relative path is read from the package's folder then
    assert active_config().model_name() == "smollm2"


@pytest.mark.parametrize("method", LLM_METHODS)
def test_every_llm_method_runs_smollm2_with_no_key(studio_env, method):
    cls = context_class(method)
    assert build_context(cls, {}, active_config()).llm == "local:smollm2"
    assert build_context(cls, {"llm": "smollm2"}, active_config()).llm == "local:smollm2"
    with pytest.raises(PolicyError, match=r"^llm: unknown model 'gpt-4o'; this server offers: smollm2$"):
        build_context(cls, {"llm": "gpt-4o"}, active_config())
    by_spec = r"^llm: unknown model 'local:smollm2'; this server offers: smollm2 \(a model is picked by its name: "
    with pytest.raises(PolicyError, match=by_spec + r"'smollm2' runs local:smollm2\)$"):
        build_context(cls, {"llm": "local:smollm2"}, active_config())


def test_the_model_the_environment_names_is_offered_first(studio_env, monkeypatch):
    monkeypatch.setenv("HYBRIDRAG_LLM", "openai:qwen2.5")
    monkeypatch.setenv("HYBRIDRAG_LLM_BASE_URL", "http://10.0.0.5:8000/v1")
    config = active_config()
    assert list(config.models) == ["openai-qwen2.5", "smollm2"] and config.model_name() == "openai-qwen2.5"
    assert config.models["openai-qwen2.5"] == ModelChoice("openai:qwen2.5", "http://10.0.0.5:8000/v1")
    ctx = build_context(context_class("ssrag"), {}, config)
    assert (ctx.llm, ctx.llm_base_url) == ("openai:qwen2.5", "http://10.0.0.5:8000/v1")
    monkeypatch.setenv("HYBRIDRAG_LLM", "local:smollm2")
    monkeypatch.delenv("HYBRIDRAG_LLM_BASE_URL")
    assert list(active_config().models) == ["smollm2"], "the same model is not offered twice"


def test_env_model_in_any_config_file_and_without_it_nothing(monkeypatch):
    monkeypatch.setenv("HYBRIDRAG_LLM", "openai:gpt-4o-mini")
    assert ServerConfig().with_env_model().models == {}
    assert ServerConfig.from_mapping({}).models == {}
    offered = ServerConfig.from_mapping({"env_model": True})  # also `hybridrag serve --config FILE`
    assert offered.models == {"openai-gpt-4o-mini": ModelChoice("openai:gpt-4o-mini")}


def test_the_operators_file_wins(studio_env, monkeypatch, tmp_path):
    path = tmp_path / "server.json"
    path.write_text(json.dumps({"models": {"fast": {"spec": "openai:x", "base_url": "http://h/v1"}}}), encoding="utf-8")
    monkeypatch.setenv(SERVER_CONFIG_ENV, str(path))
    assert list(active_config().models) == ["fast"]
    monkeypatch.setenv(SERVER_CONFIG_ENV, str(tmp_path / "other.json"))
    with pytest.raises(ValueError, match=f"^server config {SERVER_CONFIG_ENV}: "):
        active_config()


def test_a_model_error_names_the_setting_not_a_cli_flag():
    from hybridrag.agents.llm.models import ModelConfigError, load_chat_model

    with pytest.raises(ModelConfigError) as info:
        load_chat_model("openai:gpt-4o-mini", "")
    assert str(info.value).startswith("llm 'openai:gpt-4o-mini' needs OPENAI_API_KEY") and "--" not in str(info.value)


def test_install_builds_the_sample_kbs_bank():
    """scripts/install.sh builds the bank of the sample KB, so Studio's first run finds it built."""
    lines = (ROOT / "scripts" / "install.sh").read_text(encoding="utf-8").splitlines()
    build = [line for line in lines if "hybridrag bank build" in line and not line.startswith("#")]
    assert build == ['.venv/bin/hybridrag bank build --kb "$SAMPLE_KB"'], build
    assert any(line.startswith("SAMPLE_KB=") and "sample_kb_dir()" in line for line in lines)
