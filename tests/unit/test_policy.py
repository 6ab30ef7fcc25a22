"""hybridrag.app.policy: what a remote client may set in a run's context, and within which limits."""

from __future__ import annotations

import dataclasses
import json
import math
from types import SimpleNamespace

import pytest

from hybridrag.app.policy import (
    RULES,
    PolicyError,
    build_context,
    check_batch,
    check_settings,
    client_fields,
    server_context,
)
from hybridrag.app.server_config import ModelChoice, ServerConfig
from hybridrag.graphs import context_class, list_graphs
from hybridrag.graphs.runtime import context_of

CONFIG = ServerConfig(
    kbs={"sample": "sample", "movies": "/srv/kb/movies"},
    models={"smol": ModelChoice("local:smollm2"), "vllm": ModelChoice("openai:qwen", "http://10.0.0.5:8000/v1")},
    settings={"hybgrag": {"few_shot": "/srv/shots.json"}},
)
SERVER_ONLY = [
    "llm_base_url",
    "router_llm",
    "validator_llm",
    "commentor_llm",
    "answer_llm",
    "few_shot",
    "experience",
    "reranker_weights",
    "target_types",
    "use_web",
]


def methods_with(field: str) -> list[str]:
    return [m for m in list_graphs() if field in context_class(m).__dataclass_fields__]


def refused(method: str, settings: dict, config: ServerConfig = CONFIG) -> PolicyError:
    with pytest.raises(PolicyError) as info:
        build_context(context_class(method), settings, config)
    return info.value


@pytest.mark.parametrize(
    ("method", "field", "value"),
    [
        (m, f, v)
        for f, v in [
            ("llm_base_url", "http://127.0.0.1:9/v1"),
            ("router_llm", "openai:gpt-4o"),
            ("validator_llm", "openai:gpt-4o"),
            ("commentor_llm", "openai:gpt-4o"),
            ("answer_llm", "openai:gpt-4o"),
            ("few_shot", "/etc/passwd"),
            ("experience", "/dev/zero"),
            ("reranker_weights", "/tmp/fifo"),
            ("target_types", "x"),
            ("use_web", True),
        ]
        for m in methods_with(f)
    ],
)
def test_server_side_fields_are_refused_with_the_field_named(method, field, value):
    err = refused(method, {field: value})
    assert err.field == field and str(err).startswith(f"{field}: ") and "server-side" in str(err)


def test_every_server_only_field_exists_somewhere():
    # the parametrisation above must not silently shrink when a field is renamed
    assert all(methods_with(f) for f in SERVER_ONLY)


@pytest.mark.parametrize("method", list_graphs())
def test_unknown_fields_are_refused_and_the_allowed_ones_listed(method):
    err = refused(method, {"not_a_setting": 1})
    assert str(err).startswith("not_a_setting: unknown setting; a client may set: kb, top_k")


@pytest.mark.parametrize("kb", ["/etc", "../kb", "/srv/kb/movies", "sample/../../etc", ""])
def test_kb_is_a_name_never_a_path(kb):
    err = refused("fusion", {"kb": kb})
    assert err.field == "kb" and "this server offers: sample, movies" in str(err)


def test_kb_names_the_operator_gave_resolve_to_their_directory():
    assert build_context(context_class("fusion"), {"kb": "movies"}, CONFIG).kb == "/srv/kb/movies"
    assert build_context(context_class("fusion"), {}, CONFIG).kb == "sample"  # the first is the default
    cfg = dataclasses.replace(CONFIG, default_kb="movies")
    assert build_context(context_class("fusion"), {}, cfg).kb == "/srv/kb/movies"


@pytest.mark.parametrize("llm", ["openai:gpt-4o-mini", "local:smollm2", "http://127.0.0.1:9/v1", "SMOL"])
def test_llm_is_a_model_name_never_a_spec_or_url(llm):
    for method in methods_with("llm"):
        err = refused(method, {"llm": llm})
        assert err.field == "llm" and "this server offers: smol, vllm" in str(err)


def test_model_names_resolve_to_the_operators_spec_and_base_url():
    ctx = build_context(context_class("hybgrag"), {"llm": "vllm"}, CONFIG)
    assert (ctx.llm, ctx.llm_base_url) == ("openai:qwen", "http://10.0.0.5:8000/v1")
    ctx = build_context(context_class("ssrag"), {}, CONFIG)  # the first named model is the default
    assert (ctx.llm, ctx.llm_base_url) == ("local:smollm2", "")
    no_models = ServerConfig()
    assert "this server offers: none" in str(refused("hybgrag", {"llm": "smol"}, no_models))


def test_operator_settings_apply_and_stay_out_of_client_reach():
    ctx = build_context(context_class("hybgrag"), {"top_k": 3}, CONFIG)
    assert ctx.few_shot == "/srv/shots.json" and ctx.top_k == 3
    assert refused("hybgrag", {"few_shot": "/etc/passwd"}).field == "few_shot"


@pytest.mark.parametrize(
    ("method", "settings", "field"),
    [
        ("fusion", {"top_k": 0}, "top_k"),
        ("fusion", {"top_k": -1}, "top_k"),
        ("fusion", {"top_k": 100000}, "top_k"),
        ("fusion", {"k1": -5}, "k1"),
        ("fusion", {"k1": 100000}, "k1"),
        ("hybgrag", {"max_iterations": 10**6}, "max_iterations"),
        ("hydrarag", {"max_iterations": 0}, "max_iterations"),
        ("fusion", {"top_k": 2.5}, "top_k"),
        ("fusion", {"top_k": True}, "top_k"),
        ("fusion", {"top_k": "10"}, "top_k"),
        ("fusion", {"epsilon": math.nan}, "epsilon"),
        ("fusion", {"epsilon": math.inf}, "epsilon"),
        ("hydrarag", {"beam_width": 10**9}, "beam_width"),
        ("mor", {"max_frontier": 10**7}, "max_frontier"),
        ("ssrag", {"graph_k": 51}, "graph_k"),
        ("ssrag", {"llm_dedup": "yes"}, "llm_dedup"),
        ("fusion", {"text_rrf_k": 10**6}, "text_rrf_k"),
        ("fusion", {"text_rrf_k": -1}, "text_rrf_k"),
        ("fusion", {"corroborate": "yes"}, "corroborate"),
    ],
)
def test_numbers_out_of_bounds_or_of_the_wrong_type_are_refused(method, settings, field):
    err = refused(method, settings)
    assert err.field == field and "must be" in str(err)


def test_bounds_follow_the_operators_limits():
    cfg = ServerConfig(limits={"max_top_k": 5, "max_iterations": 2}, bounds={"radius": (1, 1)})
    fusion, hybgrag = context_class("fusion"), context_class("hybgrag")
    assert build_context(fusion, {"top_k": 5, "k1": 5}, cfg).top_k == 5
    assert "from 1 to 5, not 6" in str(refused("fusion", {"top_k": 6}, cfg))
    assert "from 1 to 2, not 3" in str(refused("hybgrag", {"max_iterations": 3}, cfg))
    assert "from 1 to 1, not 2" in str(refused("hybgrag", {"radius": 2}, cfg))
    assert build_context(hybgrag, {"max_iterations": 2, "radius": 1}, cfg).max_iterations == 2


@pytest.mark.parametrize(
    ("method", "field", "good", "bad"),
    [
        ("fusion", "mode", "vector", "telepathy"),
        ("fusion", "tokenizer", "word", "regex"),
        ("hybgrag", "structured_method", "json_mode", "eval"),
        ("ssrag", "routing", "rules", "web"),
        ("mor", "planner", "triplets", "oracle"),
        ("mor", "reranker_features", "tf,ti", "tf,xx"),
        ("hydrarag", "variant", "hydrarag-e", "hydrarag-x"),
    ],
)
def test_fixed_choices(method, field, good, bad):
    assert getattr(build_context(context_class(method), {field: good}, CONFIG), field) == good
    err = refused(method, {field: bad})
    assert err.field == field and "must be" in str(err) and good.split(",")[0] in str(err)


@pytest.mark.parametrize("method", list_graphs())
def test_every_default_a_client_may_send_back_is_accepted(method):
    cls = context_class(method)
    defaults = {f.name: f.default for f in dataclasses.fields(cls) if f.name in RULES and f.name not in ("kb", "llm")}
    ctx = build_context(cls, defaults, CONFIG)
    assert all(getattr(ctx, k) == v for k, v in defaults.items())
    assert set(client_fields(cls)) <= set(RULES)


def test_a_choice_field_is_one_table_entry(monkeypatch):
    from hybridrag.app import policy

    fusion = context_class("fusion")
    assert build_context(fusion, {"tokenizer": "bigram"}, CONFIG).tokenizer == "bigram"  # allowed today
    monkeypatch.delitem(policy.RULES, "tokenizer")
    assert "server-side" in str(refused("fusion", {"tokenizer": "word"}))
    monkeypatch.setitem(policy.RULES, "tokenizer", policy.choice("word"))
    assert build_context(fusion, {"tokenizer": "word"}, CONFIG).tokenizer == "word"
    assert refused("fusion", {"tokenizer": "bigram"}).field == "tokenizer"


def test_batch_size_is_bounded():
    check_batch(8, ServerConfig())
    with pytest.raises(PolicyError, match="inputs: a batch holds at most 8 inputs, not 9"):
        check_batch(9, ServerConfig())
    check_batch(20, ServerConfig(max_batch=20))


def test_check_settings_returns_context_values_only():
    values = check_settings(context_class("fusion"), {"kb": "movies", "top_k": 4}, CONFIG)
    assert values == {"kb": "/srv/kb/movies", "top_k": 4}


@pytest.mark.parametrize(
    "data, message",
    [
        ({"kbs": {"a b": "/x"}}, "KB name 'a b'"),
        ({"kbs": {}}, "no KB"),
        ({"default_kb": "nope"}, "default KB 'nope'"),
        ({"models": {"m": {"spec": "local:smollm2"}}, "default_model": "x"}, "default model 'x'"),
        ({"limits": {"max_top": 3}}, "unknown limit(s) max_top"),
        ({"limits": {"max_top_k": 0}}, "limit max_top_k must be at least 1"),
        ({"kb": "x"}, "unknown server config key(s) kb"),
        ({"run_timeout": 0}, "run_timeout"),
        ({"models": {"m": {"spec": "x", "url": "y"}}}, "malformed server config"),
    ],
)
def test_server_config_refuses_mistakes_in_one_line(data, message):
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")[:20]) as info:
        ServerConfig.from_mapping(data)
    assert message in str(info.value) and "\n" not in str(info.value)


# -- server mode: graphs.runtime.context_of applies the policy (the Agent Server deployment) --


@pytest.fixture
def server_mode(monkeypatch, tmp_path):
    path = tmp_path / "server.json"
    path.write_text(json.dumps({"kbs": {"sample": "sample"}, "limits": {"max_top_k": 20}}), encoding="utf-8")
    monkeypatch.setenv("HYBRIDRAG_SERVER_MODE", "1")
    monkeypatch.setenv("HYBRIDRAG_SERVER_CONFIG", str(path))


def test_context_of_refuses_a_forbidden_context_in_server_mode(server_mode):
    hyb = context_class("hybgrag")
    for ctx in ({"llm_base_url": "http://127.0.0.1:9/v1"}, hyb(few_shot="/etc/passwd"), {"kb": "/etc"}):
        with pytest.raises(PolicyError) as info:
            context_of(SimpleNamespace(context=ctx), hyb)
        assert info.value.field in ("llm_base_url", "few_shot", "kb")
    with pytest.raises(PolicyError, match="top_k: must be an integer from 1 to 20"):
        context_of(SimpleNamespace(context=context_class("fusion")(top_k=100000)), context_class("fusion"))


def test_context_of_in_server_mode_keeps_allowed_settings_and_operator_defaults(server_mode):
    fusion = context_class("fusion")
    ctx = context_of(SimpleNamespace(context=fusion(top_k=7, mode="vector")), fusion)
    assert (ctx.top_k, ctx.mode, ctx.kb) == (7, "vector", "sample")
    assert context_of(SimpleNamespace(context=None), fusion).top_k == fusion().top_k
    assert context_of(SimpleNamespace(context=ctx), fusion) is ctx  # checked once, then passed through
    assert server_context({"top_k": 3}, fusion).top_k == 3


def test_python_callers_keep_full_control_outside_server_mode(monkeypatch):
    monkeypatch.delenv("HYBRIDRAG_SERVER_MODE", raising=False)
    hyb = context_class("hybgrag")
    ctx = context_of(SimpleNamespace(context={"few_shot": "/my/shots.json", "llm_base_url": "http://h/v1"}), hyb)
    assert (ctx.few_shot, ctx.llm_base_url) == ("/my/shots.json", "http://h/v1")


def test_docs_serving_lists_what_a_client_may_set_and_what_it_may_not():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "serving.md").read_text(encoding="utf-8")
    client = text.split("## What a client may set", 1)[1].split("## Server-only settings", 1)
    fields = {f.name for m in list_graphs() for f in dataclasses.fields(context_class(m))}
    for name in fields:
        listed_as_client = f"`{name}`" in client[0]
        assert listed_as_client == (name in RULES), f"docs/serving.md: `{name}` in the wrong section"
        assert name in RULES or f"`{name}`" in client[1], f"docs/serving.md: server-only `{name}` not listed"


@pytest.mark.parametrize("method", ["hybgrag", "mor"])
@pytest.mark.parametrize("settings", [{"answer_chars": 10**9}, {"answer_documents": False}])
def test_a_client_cannot_set_the_answerers_window_or_qa_mode(method, settings):
    """answer_chars (an unbounded size) and answer_documents are the operator's, refused by name."""
    assert next(iter(settings)) in str(refused(method, settings))


def test_a_client_choice_of_ssrag_joint_rerank_is_one_of_two():
    """joint_rerank is a bounded choice: anything but interleave / paper is refused by name."""
    assert "joint_rerank" in str(refused("ssrag", {"joint_rerank": "/srv/x"}))


@pytest.mark.parametrize(
    ("method", "settings"),
    [
        ("hybgrag", {"router_rules": False}),
        ("hybgrag", {"link_rules": False}),
        ("mor", {"ground_plan": "off"}),
        ("mor", {"small_model_iterations": 10**6}),
        ("mor", {"plan_relations": "all"}),
    ],
)
def test_a_client_cannot_set_the_small_model_rules(method, settings):
    """This session's small-model settings (a loop bound among them) are the operator's, refused by name."""
    assert next(iter(settings)) in str(refused(method, settings))


@pytest.mark.parametrize("method", ["fusion", "hybgrag", "mor", "hydrarag", "ssrag"])
def test_a_client_may_turn_spelling_off_but_only_with_a_boolean(method):
    """spelling is a flag: false is taken, a string or a path is refused by name."""
    ctx = build_context(context_class(method), {"spelling": False}, CONFIG)
    assert ctx.spelling is False
    assert "spelling" in str(refused(method, {"spelling": "/etc/passwd"}))
