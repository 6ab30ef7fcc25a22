"""The HTTP boundary of `hybridrag serve`: request limits, malformed bodies, streams that fail mid-run.

- a body over the operator's ``max_body_bytes`` is a 413 before it is read or parsed, echoing nothing;
- every malformed body (NaN, a 5,000-digit integer, nesting 1,000 deep, not UTF-8, a lone surrogate,
  a wrong shape) is a short 4xx naming the problem, logged in one line without a traceback;
- ``config.metadata`` and ``tags`` are bounded and not echoed into every streamed event;
- ``/stream_log`` and ``/stream_events`` end a failed run with a typed ``error`` event (502 / 504,
  the messages of ``/invoke``) and a properly closed body; RemoteRunnable clients see that status.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time

import httpx
import pytest
from fake_chat import ScriptedChatModel
from fastapi.testclient import TestClient

from hybridrag.app.server_config import ModelChoice, ServerConfig

QUESTION = "who directed Forrest Gump"
HYBGRAG = {"question": QUESTION, "settings": {"llm": "fake", "max_iterations": 1}}
HEADERS = {"content-type": "application/json"}


def app_for(**config):
    from hybridrag.app.server import create_app

    return create_app(
        methods=["fusion", "hybgrag"], config=ServerConfig(models={"fake": ModelChoice("fake:test")}, **config)
    )


@pytest.fixture
def client(fake_llm):
    fake_llm()  # registered, never called by these requests
    return TestClient(app_for())


def sse_events(text: str) -> list[tuple[str, object]]:
    events, name, data = [], None, []
    for line in text.splitlines() + [""]:
        if line.startswith("event:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("data:"):
            data.append(line.split(":", 1)[1].strip())
        elif not line and name:
            events.append((name, json.loads("\n".join(data)) if data else None))
            name, data = None, []
    return events


SETTINGS = b'{"input": {"question": "who directed Forrest Gump", "settings": {"top_k": %s}}}'
MALFORMED = [
    ("nan", "invoke", SETTINGS % b"NaN", "NaN"),
    ("infinity", "stream", SETTINGS % b"Infinity", "Infinity"),
    ("minus infinity", "invoke", SETTINGS % b"-Infinity", "Infinity"),
    ("1e999", "stream", SETTINGS % b"1e999", "out of range"),
    ("5,000 digits", "invoke", SETTINGS % (b"9" * 5000), "digits"),
    ("nested 1,000 deep", "invoke", b'{"input": ' + b"[" * 1000 + b"]" * 1000 + b"}", "nested"),
    ("nested 1,000 deep", "stream", b'{"input": ' + b"[" * 1000 + b"]" * 1000 + b"}", "nested"),
    ("not UTF-8", "invoke", b'{"input": {"question": "\xff\xfe who"}}', "UTF-8"),
    ("lone surrogate", "invoke", b'{"input": {"question": "who directed \\ud800 Big"}}', "surrogate"),
    ("lone surrogate", "stream", b'{"input": {"question": "who directed \\ud800 Big"}}', "surrogate"),
    ("inputs an object", "batch", b'{"inputs": {"question": "who directed Big"}}', "inputs"),
    ("inputs a string", "batch", b'{"inputs": "who directed Big"}', "inputs"),
    ("configurable a list", "stream", b'{"input": {"question": "q"}, "config": {"configurable": [1]}}', "configurable"),
    (
        "configurable a string",
        "stream",
        b'{"input": {"question": "q"}, "config": {"configurable": "x"}}',
        "configurable",
    ),
    (
        "configurable a list",
        "stream_log",
        b'{"input": {"question": "q"}, "config": {"configurable": [1]}}',
        "configurable",
    ),
    ("a JSON list", "invoke", b"[1, 2]", "object"),
    ("not JSON", "invoke", b"{not json", "JSON"),
]


@pytest.mark.parametrize(("case", "endpoint", "body", "named"), MALFORMED, ids=[f"{c[0]}-{c[1]}" for c in MALFORMED])
def test_a_malformed_body_is_a_short_4xx_with_one_log_line(client, caplog, case, endpoint, body, named):
    caplog.set_level(logging.INFO)
    r = client.post(f"/fusion/{endpoint}", content=body, headers=HEADERS)
    assert 400 <= r.status_code < 500, (r.status_code, r.text)
    assert named in r.json()["detail"] and len(r.content) < 300, r.text
    assert not [rec for rec in caplog.records if rec.exc_info], "no traceback for a client's mistake"
    refused = [rec for rec in caplog.records if rec.name == "hybridrag.server"]
    assert len(refused) == 1 and "\n" not in refused[0].getMessage(), [rec.getMessage() for rec in refused]


def test_a_body_over_the_limit_is_413_without_echo(fake_llm):
    fake_llm()
    client = TestClient(app_for(max_body_bytes=4096))
    question = "who directed " + "Q" * 10_000
    r = client.post("/fusion/invoke", json={"input": {"question": question}})
    assert r.status_code == 413 and "4096 bytes" in r.json()["detail"], r.text[:300]
    assert "QQQQ" not in r.text and len(r.content) < 300


def test_a_chunked_body_over_the_limit_is_413_as_it_arrives(fake_llm):
    """No Content-Length: the body is counted as it arrives and refused once over the limit."""
    fake_llm()
    app, sent = app_for(max_body_bytes=4096), []

    async def chunks():
        yield b'{"input": {"question": "'
        for _ in range(100):
            sent.append(1)
            yield b"Q" * 1024

    async def post() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            return await c.post("/fusion/invoke", content=chunks(), headers=HEADERS)

    r = asyncio.run(post())
    assert r.status_code == 413 and "QQQQ" not in r.text, r.text[:300]
    assert len(sent) < 10, "the rest of the body was not read"


def test_a_validation_error_does_not_echo_a_long_input(client):
    r = client.post("/fusion/invoke", json={"input": {"question": "who directed " + "Q" * 30_000}})
    assert r.status_code == 422 and "at most 2000 characters" in r.text, r.text[:300]
    assert len(r.content) < 1000, len(r.content)


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ({"metadata": {"note": "m" * 5000}}, "config.metadata"),
        ({"tags": [f"t{i}" for i in range(100)]}, "config.tags"),
        ({"tags": ["t" * 1000]}, "config.tags"),
        ({"metadata": "not an object"}, "config.metadata"),
    ],
)
@pytest.mark.parametrize("endpoint", ["invoke", "stream_events"])
def test_metadata_and_tags_over_their_bounds_are_refused(client, endpoint, config, named):
    r = client.post(f"/fusion/{endpoint}", json={"input": {"question": QUESTION}, "config": config})
    assert 400 <= r.status_code < 500 and r.json()["detail"].startswith(named), r.text[:300]
    assert "mmmm" not in r.text and len(r.content) < 300


@pytest.mark.parametrize("endpoint", ["stream_log", "stream_events"])
def test_client_metadata_and_tags_are_not_echoed_in_every_event(client, endpoint):
    config = {"metadata": {"note": "M" * 1000}, "tags": ["T" * 100]}
    r = client.post(f"/fusion/{endpoint}", json={"input": {"question": QUESTION}, "config": config})
    assert r.status_code == 200, r.text[:300]
    events = sse_events(r.text)
    assert events[-1] == ("end", None) and len(events) > 5, events[-3:]
    assert r.text.count("M" * 1000) == 0 and r.text.count("T" * 100) == 0


@pytest.mark.parametrize("endpoint", ["stream_log", "stream_events"])
@pytest.mark.parametrize(
    ("failure", "status", "message"),
    [
        (ConnectionError("HTTP 500 from the model server"), 502, "failed or sent an unreadable reply"),
        (TimeoutError("request timed out"), 504, "did not answer in time"),
    ],
)
def test_a_stream_failing_mid_run_ends_with_a_typed_error_event(fake_llm, endpoint, failure, status, message):
    fake_llm(failure)
    client = TestClient(app_for())  # raises here if the response ends with an exception
    r = client.post(f"/hybgrag/{endpoint}", json={"input": HYBGRAG})
    assert r.status_code == 200
    events = sse_events(r.text)
    assert [e for e, _ in events if e == "data"], "the run had started streaming"
    name, data = events[-1]
    assert name == "error" and data["status_code"] == status and message in data["message"], events[-1]
    assert "error id" in data["message"] and "Traceback" not in r.text


class SlowModel(ScriptedChatModel):
    """Answers after a pause, longer than the run's budget."""

    def _next(self, messages, schema):  # type: ignore[no-untyped-def]
        time.sleep(1.0)
        return super()._next(messages, schema)


@pytest.mark.parametrize("endpoint", ["stream_log", "stream_events"])
def test_a_stream_over_its_budget_ends_with_a_504_event(endpoint):
    from hybridrag.agents.llm.models import forget_model, register_model

    register_model("fake:test", SlowModel(script=["{}"] * 3))
    try:
        client = TestClient(app_for(run_timeout=0.3))
        r = client.post(f"/hybgrag/{endpoint}", json={"input": HYBGRAG})
    finally:
        forget_model("fake:test")
    name, data = sse_events(r.text)[-1]
    assert name == "error" and data == {"status_code": 504, "message": data["message"]}, (name, data)
    assert "exceeded its 0.3 s budget" in data["message"]


def test_a_remote_runnable_sees_the_status_of_a_failed_stream(fake_llm):
    """LangServe's client reads our events: its astream_events raises the run's status."""
    from langserve import RemoteRunnable

    fake_llm(ConnectionError("HTTP 500 from the model server"))
    remote = RemoteRunnable("http://t/hybgrag", client_kwargs={"transport": httpx.ASGITransport(app=app_for())})

    async def events() -> list:
        return [e async for e in remote.astream_events(HYBGRAG, version="v2")]

    with pytest.raises(httpx.HTTPStatusError) as info:
        asyncio.run(events())
    assert info.value.response.status_code == 502


def test_a_remote_runnable_streams_the_log_of_a_run_without_echoing_metadata(client):
    from langserve import RemoteRunnable

    remote = RemoteRunnable("http://t/fusion", client_kwargs={"transport": httpx.ASGITransport(app=client.app)})

    async def patches() -> list:
        # chain runs only: LangServe's client cannot decode the log entry of a tool run (KeyError 'tool_call_id')
        return [
            p
            async for p in remote.astream_log(
                {"question": QUESTION}, config={"metadata": {"k": "v"}}, include_types=["chain"]
            )
        ]

    ops = [op for p in asyncio.run(patches()) for op in p.ops]
    chunks = [op["value"] for op in ops if op["path"] == "/streamed_output/-"]
    assert chunks[-1]["node"] == "__end__" and chunks[-1]["output"]["answer"] == "Robert Zemeckis"
    entries = [
        op["value"]
        for op in ops
        if op["op"] == "add" and op["path"].count("/") == 2 and op["path"].startswith("/logs/")
    ]
    assert entries and all("k" not in e["metadata"] for e in entries), "the client's metadata is not echoed"


def test_serve_flags_set_the_request_limits():
    from hybridrag.app.cli import build_parser
    from hybridrag.app.operator import operator_config

    args = build_parser().parse_args(
        ["serve", "--max-body-bytes", "100000", "--max-metadata-bytes", "512", "--max-tags", "4"]
    )
    config = operator_config(args)
    assert (config.max_body_bytes, config.max_metadata_bytes, config.max_tags) == (100_000, 512, 4)
    assert ServerConfig().max_body_bytes == 65536
    with pytest.raises(ValueError, match="max_body_bytes"):
        ServerConfig(max_body_bytes=0)
