"""The LangServe playground renders every method: no null type anywhere in the schemas it reads.

Its form renderer throws 'Unknown type: {"type":"null"}' on an ``X | None`` field, which left
/<method>/playground/ a blank page; the settings are now plain typed fields a client leaves out.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from hybridrag.app.server_config import ModelChoice, ServerConfig
from hybridrag.graphs import list_graphs


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

    from hybridrag.app.server import create_app

    config = ServerConfig(kbs={"sample": "sample", "other": "sample"}, models={"smol": ModelChoice("local:smollm2")})
    import hybridrag.app.operator as operator

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


@pytest.mark.parametrize("method", list_graphs())
def test_the_playground_page_embeds_schemas_without_nulls(client, method):
    """The page inlines the config and input schemas its forms start from: no null type, no null default."""
    html = client.get(f"/{method}/playground/").text
    assert "window.CONFIG_SCHEMA" in html and "window.INPUT_SCHEMA" in html
    assert '"type": "null"' not in html and '"default": null' not in html
    config = client.get(f"/{method}/config_schema").json()
    assert "default" not in config["properties"]["configurable"] and null_types(config) == []
    assert '"default": null' not in json.dumps(config)


@pytest.mark.parametrize("method", list_graphs())
def test_approve_is_refused_by_name_where_nothing_can_pause(client, method):
    """LangServe runs are single requests: the form marks approve as refused here, and a request
    (settings or configurable) that sets it is a 400 naming it."""
    schema = client.get(f"/{method}/input_schema").json()
    settings = next(d for d in schema["$defs"].values() if d["title"].endswith("Settings"))["properties"]
    assert "refused by this server" in settings["approve"]["description"]
    body = {"input": {"question": "who directed Big", "settings": {"approve": True}}}
    r = client.post(f"/{method}/invoke", json=body)
    assert r.status_code == 400 and r.json()["detail"].startswith("approve: needs a checkpointed thread"), r.text
    body = {"input": {"question": "who directed Big"}, "config": {"configurable": {"approve": True}}}
    assert client.post(f"/{method}/invoke", json=body).status_code == 400


def test_configurable_from_the_playground_form_runs(client):
    body = {
        "input": {"question": "who directed Forrest Gump"},
        "config": {"configurable": {"top_k": 1}, "tags": [], "metadata": {}},
    }
    r = client.post("/fusion/invoke", json=body)
    assert r.status_code == 200 and len(r.json()["output"]["ranked"]) == 1, r.text


def test_playground_renders_in_headless_chromium(tmp_path):
    """Render /fusion/playground/ in headless Chromium: the form is drawn, with its choices, and
    no validation error. Skipped, saying so, only when no chromium is installed."""
    import shutil
    import socket
    import subprocess
    import threading
    import time

    import uvicorn

    from hybridrag.app.server import create_app

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium): the playground render is not checked")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(methods=["fusion"]), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.2)
        out = subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={tmp_path / 'profile'}",
                "--virtual-time-budget=20000",
                "--dump-dom",
                f"http://127.0.0.1:{port}/fusion/playground/",
            ],
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:
        server.should_exit = True
        thread.join(30)
    dom = out.stdout
    assert ">Configurable<" in dom and ">Inputs<" in dom, "the forms were not drawn (a blank page)"
    assert 'value="vector"' in dom and 'value="bm25"' in dom, "the mode choices are offered"
    errors = [
        " ".join(re.sub(r"<[^>]+>", " ", block).split())
        for block in re.findall(r">Validation Errors(<.*?)<button", dom, flags=re.S)
    ]
    assert errors == ["must have required property 'question'"], "only the empty question, no null setting"
