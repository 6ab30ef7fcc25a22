"""The LangServe playground renders every method: no null type anywhere in the schemas it reads.

Its form renderer throws 'Unknown type: {"type":"null"}' on an ``X | None`` field, which left
/<method>/playground/ a blank page; the settings are now plain typed fields a client leaves out.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from graphs import list_graphs
from graphs.server_config import ModelChoice, ServerConfig


def null_types(schema: Any, where: str = "$") -> list[str]:
    """JSON paths of every ``{"type": "null"}`` (or a type list naming null) in a schema."""
    found = []
    if isinstance(schema, dict):
        kind = schema.get("type")
        if kind == "null" or (isinstance(kind, list) and "null" in kind):
            found.append(where)
        for key, value in schema.items():
            found += null_types(value, f"{where}.{key}")
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            found += null_types(value, f"{where}[{i}]")
    return found


def test_null_types_finds_what_the_playground_cannot_render():
    assert null_types({"anyOf": [{"type": "integer"}, {"type": "null"}]}) == ["$.anyOf[1]"]
    assert null_types({"properties": {"a": {"type": ["string", "null"]}}}) == ["$.properties.a"]


@pytest.fixture(scope="module")
def client():
    from fastapi.testclient import TestClient

    from app.server import create_app

    config = ServerConfig(kbs={"sample": "sample", "other": "sample"},
                          models={"smol": ModelChoice("local:smollm2")})
    import app.operator as operator

    original = operator.check_config
    operator.check_config = lambda config, load_models=True: original(config, load_models=False)
    try:
        yield TestClient(create_app(config=config))
    finally:
        operator.check_config = original


@pytest.mark.parametrize("method", list_graphs())
def test_no_null_type_in_any_schema_the_playground_reads(client, method):
    for endpoint in ("input_schema", "config_schema", "output_schema"):
        r = client.get(f"/{method}/{endpoint}")
        assert r.status_code == 200, r.text
        assert null_types(r.json()) == [], f"/{method}/{endpoint}: {json.dumps(r.json())[:300]}"


@pytest.mark.parametrize("method", list_graphs())
def test_the_playground_form_offers_the_choices(client, method):
    schema = client.get(f"/{method}/input_schema").json()
    settings = next(d for d in schema["$defs"].values() if d["title"].endswith("Settings"))["properties"]
    assert settings["kb"]["enum"] == ["sample", "other"]
    assert all("default" not in p for p in settings.values()), "an unset setting is left out, not null"
    if "llm" in settings:
        assert settings["llm"]["enum"] == ["smol"]
    if method == "fusion":
        assert settings["mode"]["enum"] == ["hybrid", "vector", "graph", "bm25"]
    assert "settings" not in schema.get("required", [])


def test_a_request_without_settings_and_one_with_a_bad_choice(client):
    ok = client.post("/fusion/invoke", json={"input": {"question": "who directed Forrest Gump"}})
    assert ok.status_code == 200 and ok.json()["output"]["answer"] == "Robert Zemeckis", ok.text
    bad = client.post("/fusion/invoke", json={"input": {"question": "q", "settings": {"mode": "nope"}}})
    assert bad.status_code == 400 and bad.json()["detail"].startswith("mode: must be one of"), bad.text
