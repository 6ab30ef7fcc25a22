"""The Agent Server's run input guard (app/run_input_guard.py) in front of a stand-in server app."""

from __future__ import annotations

import json

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from hybridrag.app.run_input_guard import RunInputGuard, method_of


async def echo(request: Request) -> JSONResponse:
    """What the Agent Server's route would get: the body exactly as sent."""
    return JSONResponse({"got": (await request.body()).decode()})


@pytest.fixture(scope="module")
def client() -> TestClient:
    paths = ["/runs", "/runs/stream", "/runs/wait", "/runs/batch", "/threads/{tid}/runs", "/threads/{tid}/runs/wait"]
    inner = Starlette(routes=[Route(p, echo, methods=["POST", "GET"]) for p in [*paths, "/assistants/search"]])
    return TestClient(RunInputGuard(inner))


@pytest.mark.parametrize("path", ["/runs", "/runs/stream", "/runs/wait", "/threads/t-1/runs", "/threads/t-1/runs/wait"])
def test_an_empty_question_is_a_422_naming_it_on_every_run_route(client, path):
    r = client.post(path, json={"assistant_id": "fusion", "input": {"question": "  "}})
    assert r.status_code == 422 and r.json()["detail"].startswith("input.question: empty")


def test_an_unknown_input_key_is_a_422_naming_the_key_and_the_known_ones(client):
    r = client.post("/runs/wait", json={"assistant_id": "hybgrag", "input": {"q": "x"}})
    assert r.status_code == 422
    assert r.json()["detail"].startswith("input.q: unknown key; hybgrag takes messages, question")


def test_other_bad_inputs_are_named(client):
    cases = [
        ({"input": {}}, "input: no `question` and no `messages`"),
        ({"input": "who directed Big"}, "input: an object, not str"),
        ({"input": {"question": 7}}, "input.question: must be a string, not int"),
        ({"input": {"messages": "hi"}}, "input.messages: a list of messages, not str"),
        ({"input": {"messages": [{"role": "user", "content": ""}]}}, "input.messages: empty"),
        ({"input": {"messages": [{"type": "human", "content": [{"type": "text", "text": " "}]}]}}, "input.messages"),
    ]
    for body, detail in cases:
        r = client.post("/runs", json={"assistant_id": "ssrag", **body})
        assert r.status_code == 422 and r.json()["detail"].startswith(detail), (body, r.text)


def test_a_batch_names_the_run_that_failed(client):
    runs = [
        {"assistant_id": "fusion", "input": {"question": "who directed Big"}},
        {"assistant_id": "fusion", "input": {}},
    ]
    r = client.post("/runs/batch", json=runs)
    assert r.status_code == 422 and r.json()["detail"].startswith("[1].input: no `question`")


def test_valid_runs_and_other_requests_pass_with_their_bytes_as_sent(client):
    good = [
        {"assistant_id": "fusion", "input": {"question": "who directed Big"}},
        {"assistant_id": "mor", "input": {"messages": [{"role": "user", "content": "who directed Big"}]}},
        {"assistant_id": "mor", "command": {"resume": True}},  # a resume has no input: the server decides
    ]
    for body in good:
        raw = json.dumps(body, indent=3)
        r = client.post("/threads/t-1/runs", content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 200 and r.json()["got"] == raw
    r = client.post("/assistants/search", content=b'{"input": {"q": 1}}')  # not a run route: untouched
    assert r.status_code == 200 and r.json()["got"] == '{"input": {"q": 1}}'


def test_a_body_over_the_operators_limit_is_a_413_and_bad_json_a_400(client):
    r = client.post("/runs", content=b"{" + b" " * 70_000 + b"}", headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["detail"].startswith("body: at most")
    r = client.post("/runs", content=b'{"input": ', headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["detail"].startswith("body: not valid JSON")


def test_default_assistant_ids_name_their_graph():
    import uuid

    from hybridrag.app.run_input_guard import GRAPH_NAMESPACE

    assert method_of(str(uuid.uuid5(GRAPH_NAMESPACE, "ssrag"))) == "ssrag" and method_of("fusion") == "fusion"
    assert method_of("3f1c2e7a-0000-4000-8000-000000000000") is None
