"""The graph registry, langgraph.json and the LangServe app agree on every method."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from hybridrag.graphs import REGISTRY, context_class, context_for, get_builder, get_graph, list_graphs

ROOT = Path(__file__).resolve().parents[2]
OUTPUT_KEYS = {"answer", "ranked", "evidence", "trace", "usage"}


def langgraph_json() -> dict:
    return json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))


def graph_path(name: str) -> str:
    """Studio loads each method through its factory in app/studio.py (it checks the context's keys)."""
    return f"./app/studio.py:{name}"


def test_registry_lists_every_method_once():
    names = list_graphs()
    assert names and len(names) == len(set(names)) == len(REGISTRY)
    assert {"fusion", "hybgrag"} <= set(names)
    with pytest.raises(KeyError, match="unknown method 'nope'"):
        get_graph("nope")


def test_langgraph_json_matches_the_registry():
    cfg = langgraph_json()
    assert cfg["dependencies"] == ["."]
    graphs = cfg["graphs"]
    missing, extra = set(REGISTRY) - set(graphs), set(graphs) - set(REGISTRY)
    suggestion = {n: {"path": graph_path(n), "description": REGISTRY[n].description} for n in sorted(missing)}
    assert not missing, f"add to langgraph.json's graphs: {json.dumps(suggestion, ensure_ascii=False)}"
    assert not extra, f"not in graphs.REGISTRY: {sorted(extra)}"
    for name, info in REGISTRY.items():
        entry = graphs[name]
        assert isinstance(entry, dict), f"{name}: use {{'path': ..., 'description': ...}}"
        assert entry["path"] == graph_path(name), name
        assert (ROOT / entry["path"].removeprefix("./").split(":")[0]).is_file(), name
        assert entry["description"] == info.description, f"{name}: description differs from the registry"


def test_langgraph_json_is_valid_for_the_cli():
    from langgraph_cli import config

    validated = config.validate_config_file(ROOT / "langgraph.json")
    assert set(validated["graphs"]) == set(REGISTRY)


@pytest.mark.parametrize("name", list_graphs())
def test_compiled_graph_contract(name):
    graph = get_graph(name)
    assert graph.name == name
    assert "required" not in get_builder(name).compile().get_input_jsonschema()  # a question or a chat

    inp = graph.get_input_jsonschema()
    assert "required" not in inp, "a question or messages (graphs/chat.py checks that one is sent)"
    assert set(inp["properties"]) == {"question", "messages"}

    out = graph.get_output_jsonschema()
    assert set(out["properties"]) == OUTPUT_KEYS | {"messages"}  # messages only on a chat turn

    ctx_cls = context_class(name)
    assert graph.context_schema is ctx_cls
    assert dataclasses.is_dataclass(ctx_cls)
    for f in dataclasses.fields(ctx_cls):
        assert f.metadata.get("description"), f"{ctx_cls.__name__}.{f.name} has no description"
        assert f.default is not dataclasses.MISSING, f"{ctx_cls.__name__}.{f.name} needs a default"
    schema = graph.get_context_jsonschema()
    assert schema["properties"], "Studio renders the context from this schema"
    for field_name, prop in schema["properties"].items():
        assert prop.get("description"), f"{name} context field {field_name} has no description in the schema"
    assert isinstance(context_for(name), ctx_cls)


@pytest.mark.parametrize("name", list_graphs())
def test_unknown_setting_is_refused(name):
    with pytest.raises(TypeError, match="no setting"):
        context_for(name, not_a_setting=1)


def test_langgraph_json_switches_the_agent_server_into_server_mode():
    env = langgraph_json()["env"]
    assert env["HYBRIDRAG_SERVER_MODE"] == "1", "Studio / Agent Server clients must go through app.policy"
    assert float(env["BG_JOB_TIMEOUT_SECS"]) <= 600, "Agent Server runs need a wall-clock budget"


def test_langserve_app_routes_every_method():
    import langserve  # noqa: F401
    from fastapi.testclient import TestClient

    from hybridrag.app.policy import RULES
    from hybridrag.app.server import MAX_QUESTION_CHARS, create_app

    app = create_app()
    client = TestClient(app)
    client.get("/health")  # starts the warm-up (a served app starts it at startup); ok once it ended
    assert app.state.readiness.wait(120)
    health = client.get("/health")
    assert health.status_code == 200 and health.json() == {"status": "ok", "methods": list_graphs()}
    for name in list_graphs():
        allowed = set(context_class(name).__dataclass_fields__) & set(RULES)
        schema = client.get(f"/{name}/input_schema").json()
        assert schema["required"] == ["question"]
        assert schema["properties"]["question"]["maxLength"] == MAX_QUESTION_CHARS
        settings = next(d for d in schema["$defs"].values() if d["title"].endswith("Settings"))
        assert set(settings["properties"]) == allowed, "the schema shows what a client may set"
        assert {"kb", "top_k"} <= allowed and "llm_base_url" not in allowed
        assert set(client.get(f"/{name}/output_schema").json()["properties"]) == OUTPUT_KEYS
        configurable = client.get(f"/{name}/config_schema").json()["$defs"]["Configurable"]["properties"]
        assert set(configurable) == allowed
        assert client.get(f"/{name}/playground/").status_code == 200
        # validation errors never reach the graph: 422 with a message
        for bad in (
            {"question": ""},
            {"question": "  "},
            {"question": "x" * (MAX_QUESTION_CHARS + 1)},
            {"question": "q", "settings": {"top_k": "many"}},
            {},
        ):
            r = client.post(f"/{name}/invoke", json={"input": bad})
            assert r.status_code == 422, (bad, r.text)
            assert r.json()["detail"][0]["msg"]
        # settings a client may not choose: 400 naming the field, before anything runs
        for field in ("no_such_field", "kb"):
            r = client.post(f"/{name}/invoke", json={"input": {"question": "q", "settings": {field: "/etc"}}})
            assert r.status_code == 400 and r.json()["detail"].startswith(f"{field}: "), r.text
