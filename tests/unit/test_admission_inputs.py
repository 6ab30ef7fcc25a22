"""Admission sees what the run runs: a body with both ``input`` and ``inputs`` is refused, and
settings are strictly typed (``true`` or ``"1"`` is no number, ``0`` no boolean): 422 naming the field."""

from __future__ import annotations

import pytest

UNKNOWN = "who directed Zzyzx Qwerty Blorp"
KNOWN = "who directed Forrest Gump"


@pytest.fixture(scope="module")
def client():
    from fastapi.testclient import TestClient

    from hybridrag.app.server import create_app
    from hybridrag.app.server_config import ServerConfig

    return TestClient(create_app(methods=["fusion"], config=ServerConfig()))


@pytest.mark.parametrize("endpoint", ["invoke", "batch", "stream", "stream_log", "stream_events"])
@pytest.mark.parametrize("inputs", [[], [{"question": KNOWN}]])
def test_a_body_with_input_and_inputs_is_refused(client, endpoint, inputs):
    body = {"input": {"question": UNKNOWN}, "inputs": inputs}
    r = client.post(f"/fusion/{endpoint}", json=body)
    assert r.status_code == 422, r.text
    assert "both 'input' and 'inputs'" in r.json()["detail"], r.text


def test_each_endpoint_admits_what_it_runs(client):
    assert client.post("/fusion/invoke", json={"input": {"question": UNKNOWN}}).status_code == 400
    r = client.post("/fusion/batch", json={"inputs": [{"question": KNOWN}, {"question": UNKNOWN}]})
    assert r.status_code == 400 and "Zzyzx Qwerty Blorp" in r.json()["detail"], r.text
    r = client.post("/fusion/batch", json={"inputs": [{"question": KNOWN}] * 9})
    assert r.status_code == 413, r.text  # the batch bound is checked on /batch
    ok = client.post("/fusion/invoke", json={"input": {"question": KNOWN}})
    assert ok.status_code == 200 and ok.json()["output"]["answer"] == "Robert Zemeckis", ok.text


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("top_k", True),
        ("top_k", "1"),
        ("top_k", 1.0),
        ("k1", "2"),
        ("epsilon", "0.1"),
        ("epsilon", False),
        ("approve", 0),
        ("approve", "false"),
        ("mode", 1),
    ],
)
@pytest.mark.parametrize("endpoint", ["invoke", "stream"])
def test_settings_of_the_wrong_json_type_are_a_422_naming_the_field(client, endpoint, field, value):
    body = {"input": {"question": KNOWN, "settings": {field: value}}}
    r = client.post(f"/fusion/{endpoint}", json=body)
    assert r.status_code == 422, r.text
    locs = [err["loc"] for err in r.json()["detail"]]
    assert any(loc[-2:] == ["settings", field] for loc in locs), r.text


def test_settings_of_the_right_type_still_run(client):
    body = {"input": {"question": KNOWN, "settings": {"top_k": 1, "epsilon": 1, "approve": False}}}
    r = client.post("/fusion/invoke", json=body)
    assert r.status_code == 200 and len(r.json()["output"]["ranked"]) == 1, r.text
