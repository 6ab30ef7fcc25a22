"""Issue 14, from Python and from Studio: a user's own chat model, ``configurable``, unknown
context keys refused by the Agent Server factories, a missing KB named, choices in the schema."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from fake_chat import ScriptedChatModel

from hybridrag.app.policy import PolicyError, server_context
from hybridrag.graphs import context_class, context_for, get_graph, list_graphs
from hybridrag.graphs.runtime import KBUnavailableError, context_of, resolve_kb, with_configurable

LLM_METHODS = [m for m in list_graphs() if "llm" in context_class(m).__dataclass_fields__]
QUESTION = "who directed Big"


def test_every_llm_method_is_listed():
    assert set(LLM_METHODS) == {"hybgrag", "mor", "hydrarag", "ssrag"}


@pytest.mark.parametrize("method", LLM_METHODS)
def test_a_chat_model_object_is_accepted_as_llm(method, tiny_kb):
    """context_for(method, llm=<model>) used to fail with "unhashable type": the object is now the
    model every role calls (an empty script makes its first call fail loudly, which proves it)."""
    model = ScriptedChatModel(script=[])
    ctx = context_for(method, llm=model, kb=tiny_kb)
    with pytest.raises(AssertionError, match="unscripted LLM call #1"):
        get_graph(method).invoke({"question": QUESTION}, context=ctx)
    assert len(model.calls) == 1


def test_load_chat_model_returns_an_object_as_is_and_refuses_other_types():
    from hybridrag.agents.llm.models import ModelConfigError, load_chat_model

    model = ScriptedChatModel(script=[])
    assert load_chat_model(model) is model
    with pytest.raises(ModelConfigError, match="not int"):
        load_chat_model(3)


def test_a_server_never_takes_a_model_object(monkeypatch):
    monkeypatch.delenv("HYBRIDRAG_SERVER_CONFIG", raising=False)
    with pytest.raises(PolicyError, match="^llm: must be a string"):
        server_context({"llm": ScriptedChatModel(script=[])}, context_class("hybgrag"))


# -- config={"configurable": ...} from Python, as over HTTP --


def test_configurable_is_honoured_from_python(tiny_kb):
    graph = get_graph("fusion")
    out = graph.invoke({"question": QUESTION}, config={"configurable": {"top_k": 1, "kb": tiny_kb}})
    assert len(out["ranked"]) == 1 and out["answer"] == "Penny Marshall"


def test_an_explicit_context_wins_over_configurable(tiny_kb):
    out = get_graph("fusion").invoke(
        {"question": QUESTION},
        context={"kb": tiny_kb, "top_k": 2},
        config={"configurable": {"top_k": 1, "mode": "vector"}},
    )
    assert len(out["ranked"]) == 2  # the context's top_k; configurable's mode fills a default field
    assert {r["source"] for r in out["ranked"]} == {"doc"}  # no graph item: the vector mode


def test_with_configurable_precedence(monkeypatch):
    fusion = context_class("fusion")
    monkeypatch.setenv("HYBRIDRAG_TOP_K", "7")
    assert with_configurable(None, fusion, {"top_k": 3, "thread_id": "t"}).top_k == 3  # over the environment
    assert with_configurable(None, fusion, {}).top_k == 7
    assert with_configurable(fusion(top_k=5), fusion, {"top_k": 3}).top_k == 5
    assert with_configurable({"mode": "graph"}, fusion, {"mode": "bm25", "k1": 2}).k1 == 2
    checked = fusion(top_k=4)
    object.__setattr__(checked, "_policy_checked", True)  # a server's context: taken as it is
    assert with_configurable(checked, fusion, {"k1": 9}) is checked


# -- Studio (the Agent Server, langgraph.json) --


@pytest.mark.parametrize("method", list_graphs())
def test_studio_factory_refuses_an_unknown_context_key_by_name(method):
    from hybridrag.app.studio import FACTORIES, served_graph

    make = FACTORIES[method]
    with pytest.raises(PolicyError, match=r"^topk: unknown setting of .*a client may set: kb, top_k"):
        make(SimpleNamespace(context={"top_k": 3, "topk": 3}))
    assert make(SimpleNamespace(context={"top_k": 3, "thread_id": "t", "__pregel_x": 1})) is served_graph(method)
    assert make(SimpleNamespace()) is served_graph(method)  # schema reads carry no context
    served, own = set(served_graph(method).nodes), set(get_graph(method).nodes)
    added = served - own
    assert own <= served and "start_question" in added, "the method's graph, one question per run"
    assert all(n.startswith("approve_") for n in added - {"start_question"}), "... and its approval node"


def test_studio_factories_are_what_the_agent_server_loads():
    from langgraph_api._factory_utils import _classify_factory

    from hybridrag.app.studio import FACTORIES

    runtime = SimpleNamespace(context={"kb": "sample"})
    for method, make in FACTORIES.items():
        kwargs = _classify_factory(make)({}, runtime)
        assert kwargs == {"runtime": runtime}, "the factory must take the ServerRuntime (it carries the context)"
        assert make(**kwargs).name == method


def test_studio_shows_the_choices_and_descriptions_of_the_context():
    schema = get_graph("fusion").get_context_jsonschema()
    mode = schema["properties"]["mode"]
    assert set(mode["enum"]) == {"hybrid", "vector", "graph", "bm25"} and mode["description"]
    assert "enum" not in schema["properties"]["top_k"]
    for method in list_graphs():
        props = get_graph(method).get_context_jsonschema()["properties"]
        for name in ("structured_method", "routing", "planner"):
            if name in props:
                assert "json_mode" in props[name]["enum"] or len(props[name]["enum"]) >= 2, (method, name)


def test_a_missing_kb_is_named_in_server_mode(monkeypatch, tmp_path):
    config = tmp_path / "server.json"
    missing = tmp_path / "never-built"
    config.write_text(json.dumps({"kbs": {"movies": str(missing)}}), encoding="utf-8")
    monkeypatch.setenv("HYBRIDRAG_SERVER_MODE", "1")
    monkeypatch.setenv("HYBRIDRAG_SERVER_CONFIG", str(config))
    fusion = context_class("fusion")
    ctx = context_of(SimpleNamespace(context={}), fusion)
    with pytest.raises(KBUnavailableError) as info:
        resolve_kb(ctx)
    message = str(info.value)
    assert message.startswith("kb: the 'movies' KB cannot be opened on this server (not built)"), message
    assert str(tmp_path) not in message, "a remote client never sees a server path"
    assert isinstance(info.value, ValueError), "the Agent Server shows a ValueError's message, hides others"


def test_on_a_server_studio_lists_the_operators_kbs_and_models(monkeypatch, tmp_path):
    """The context form of a served method offers the KB and model names the operator gave, with the
    operator's defaults (a client names one of them; a path or a spec would be refused)."""
    config = tmp_path / "server.json"
    config.write_text(
        json.dumps(
            {
                "kbs": {"movies": "sample", "docs": str(tmp_path)},
                "default_kb": "docs",
                "models": {"smol": {"spec": "local:smollm2"}},
            }
        ),
        encoding="utf-8",
    )
    monkeypatch.setenv("HYBRIDRAG_SERVER_MODE", "1")
    monkeypatch.setenv("HYBRIDRAG_SERVER_CONFIG", str(config))
    props = get_graph("hybgrag").get_context_jsonschema()["properties"]
    assert props["kb"]["enum"] == ["movies", "docs"] and props["kb"]["default"] == "docs"
    assert props["llm"]["enum"] == ["smol"] and props["llm"]["default"] == "smol"
    monkeypatch.delenv("HYBRIDRAG_SERVER_MODE")
    props = get_graph("hybgrag").get_context_jsonschema()["properties"]
    assert "enum" not in props["kb"], "from Python a KB is any directory"
