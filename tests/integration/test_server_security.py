"""`hybridrag serve` as an attacker and as a flaky upstream meet it (a real server subprocess).

- settings only the operator may choose (models, base URLs, file paths, KB paths, unknown
  fields) and values out of bounds are 4xx naming the field, before anything runs;
- the client cannot make the server POST anywhere (the server's OPENAI_API_KEY never leaves);
- a language model that hangs, sends garbage or fails (a fake OpenAI-compatible endpoint on
  loopback, named BY THE OPERATOR) is a one-line 5xx within the LLM timeout, with no trace
  or path, and the server answers normally afterwards;
- a run over its budget stops (504) and the model gets no further call; a client that
  disconnects stops its run the same way.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx  # noqa: E402
import pytest
from http_ready import wait_until_ready  # noqa: E402

from benchmarks.reliability.server import FakeLLM  # noqa: E402
from benchmarks.server import stop_group as stop  # noqa: E402

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-test-secret"
LLM_TIMEOUT = 2.0  # HYBRIDRAG_LLM_TIMEOUT of the servers under test
SLOW_REPLY = 0.5  # seconds the "slow" fake model takes per call
QUESTION = "who directed Forrest Gump"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[FakeLLM]:
    server = FakeLLM(slow_reply=SLOW_REPLY).start()
    yield server
    server.close()


def serve(tmp: Path, fake: FakeLLM, run_timeout: float) -> Iterator[tuple[str, Path]]:
    """``hybridrag serve`` with the fake models named by the operator; yields (URL, log path)."""
    port = free_port()
    log = tmp / "server.log"
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "LANGSMITH_TRACING": "false",
        "OPENAI_API_KEY": SECRET,
        "HYBRIDRAG_LLM_TIMEOUT": str(LLM_TIMEOUT),
        "HYBRIDRAG_LLM_MAX_RETRIES": "0",
    }
    models = [
        arg for mode in ("slow", "hang", "garbage", "fail") for arg in ("--llm", f"{mode}=openai:fake@{fake.url(mode)}")
    ]
    cmd = [
        sys.executable,
        "-m",
        "hybridrag.app.cli",
        "serve",
        "--port",
        str(port),
        "--kb",
        "sample=sample",
        *models,
        "--run-timeout",
        str(run_timeout),
        "--max-batch",
        "4",
        "--max-iterations",
        "5",
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(proc, f"{url}/health", log, 180, "server")
        yield url, log
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def server_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("secure")


@pytest.fixture(scope="module")
def server(server_dir, fake_llm) -> Iterator[str]:
    for url, _ in serve(server_dir, fake_llm, run_timeout=60):
        yield url


@pytest.fixture(scope="module")
def tight_server(tmp_path_factory, fake_llm) -> Iterator[str]:
    """A server whose runs have a 3 s budget."""
    for url, _ in serve(tmp_path_factory.mktemp("tight"), fake_llm, run_timeout=3):
        yield url


def clean(body: str, sent: dict | None = None) -> None:
    """No trace, no server path, no upstream URL or secret in a response body (beyond what the client sent)."""
    for value in (sent or {}).values():
        body = body.replace(json.dumps(value)[1:-1], "").replace(repr(value), "")
    for leak in ("Traceback", 'File "', "/work", "/srv", str(ROOT), "127.0.0.1", SECRET, "site-packages"):
        assert leak not in body, (leak, body)


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


FIFO_MARK = "<fifo>"
CAPTURE_MARK = "<capture>"
FORBIDDEN = [
    ("hybgrag", {"llm": "openai:gpt-4o-mini"}, "llm"),
    ("hybgrag", {"llm_base_url": CAPTURE_MARK}, "llm_base_url"),
    ("ssrag", {"llm": "capture", "llm_base_url": CAPTURE_MARK}, "llm"),
    ("hybgrag", {"router_llm": "openai:gpt-4o"}, "router_llm"),
    ("hybgrag", {"validator_llm": "openai:gpt-4o"}, "validator_llm"),
    ("hybgrag", {"commentor_llm": "openai:gpt-4o"}, "commentor_llm"),
    ("hybgrag", {"few_shot": "/etc/passwd"}, "few_shot"),
    ("hybgrag", {"experience": "/dev/zero"}, "experience"),
    ("mor", {"few_shot": FIFO_MARK}, "few_shot"),
    ("mor", {"reranker_weights": "/etc/passwd"}, "reranker_weights"),
    ("fusion", {"kb": "/tmp"}, "kb"),
    ("fusion", {"kb": str(ROOT / "kb" / "sample")}, "kb"),
    ("fusion", {"not_a_field": 1}, "not_a_field"),
    ("fusion", {"top_k": 100000}, "top_k"),
    ("fusion", {"top_k": 0}, "top_k"),
    ("fusion", {"top_k": -1}, "top_k"),
    ("fusion", {"k1": -5}, "k1"),
    ("fusion", {"k1": 100000}, "k1"),
    ("fusion", {"mode": "telepathy"}, "mode"),
    ("hybgrag", {"max_iterations": 1000000}, "max_iterations"),
]


@pytest.fixture
def fill(tmp_path, fake_llm):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def fill(settings: dict) -> dict:
        swap = {FIFO_MARK: str(fifo), CAPTURE_MARK: fake_llm.url("capture")}
        return {k: swap.get(v, v) if isinstance(v, str) else v for k, v in settings.items()}

    return fill


@pytest.mark.parametrize("where", ["settings", "configurable"])
@pytest.mark.parametrize("endpoint", ["invoke", "stream", "batch"])
@pytest.mark.parametrize(("method", "settings", "field"), FORBIDDEN)
def test_forbidden_settings_are_4xx_naming_the_field(server, fill, method, settings, field, endpoint, where):
    settings = fill(settings)
    one = {"question": QUESTION, "settings": settings} if where == "settings" else {"question": QUESTION}
    body = {"inputs": [one]} if endpoint == "batch" else {"input": one}
    if where == "configurable":
        body["config"] = {"configurable": settings}
    r = httpx.post(f"{server}/{method}/{endpoint}", json=body, timeout=20)
    assert 400 <= r.status_code < 500, (r.status_code, r.text)
    assert field in r.json()["detail"], r.text
    clean(r.text, settings)


def test_batch_size_is_bounded(server):
    r = httpx.post(f"{server}/fusion/batch", json={"inputs": [{"question": QUESTION}] * 5}, timeout=20)
    assert r.status_code == 413 and "at most 4 inputs" in r.json()["detail"], r.text
    r = httpx.post(f"{server}/fusion/batch", json={"inputs": [{"question": QUESTION}] * 4}, timeout=120)
    assert r.status_code == 200 and len(r.json()["output"]) == 4


def test_the_client_cannot_make_the_server_post_its_key_anywhere(server, fake_llm):
    capture = fake_llm.url("capture")
    attempts = [
        {"llm": "openai:gpt-4o-mini", "llm_base_url": capture},
        {"llm_base_url": capture},
        {"llm": f"openai:gpt-4o-mini@{capture}"},
        {"router_llm": "openai:x", "llm_base_url": capture},
    ]
    for method in ("hybgrag", "mor", "hydrarag", "ssrag"):
        for settings in attempts:
            for body in (
                {"input": {"question": QUESTION, "settings": settings}},
                {"input": {"question": QUESTION}, "config": {"configurable": settings}},
            ):
                for endpoint in ("invoke", "stream"):
                    r = httpx.post(f"{server}/{method}/{endpoint}", json=body, timeout=30)
                    assert 400 <= r.status_code < 500, (method, settings, r.text)
    time.sleep(1)
    assert fake_llm.times("capture") == []


@pytest.mark.parametrize(
    ("mode", "status", "message"),
    [
        ("hang", 504, "did not answer in time"),
        ("garbage", 502, "failed or sent an unreadable reply"),
        ("fail", 502, "failed or sent an unreadable reply"),
    ],
)
def test_a_failing_model_is_a_clear_5xx_within_the_timeout(server, server_dir, fake_llm, mode, status, message):
    body = {"input": {"question": QUESTION, "settings": {"llm": mode, "max_iterations": 1}}}
    t0 = time.monotonic()
    r = httpx.post(f"{server}/hybgrag/invoke", json=body, timeout=60)
    took = time.monotonic() - t0
    assert r.status_code == status, r.text
    detail = r.json()["detail"]
    assert message in detail and "error id" in detail and "\n" not in detail
    clean(r.text)
    assert took < LLM_TIMEOUT + 15, took  # one attempt (HYBRIDRAG_LLM_MAX_RETRIES=0) plus the run's own work
    error_id = detail.rsplit("error id ", 1)[1].rstrip(")")
    logged = [line for line in (server_dir / "server.log").read_text(errors="replace").splitlines() if error_id in line]
    assert logged and "LLMUnavailableError" in logged[0], "the detail goes to the server log under the id"
    assert fake_llm.times(mode), "the fake model was never called"
    # /stream reports the same status in its error event
    r = httpx.post(f"{server}/hybgrag/stream", json=body, timeout=60)
    events = sse_events(r.text)
    errors = [d for e, d in events if e == "error"]
    assert errors and errors[0]["status_code"] == status and message in errors[0]["message"], events
    clean(r.text)
    # and the server still answers
    r = httpx.post(f"{server}/fusion/invoke", json={"input": {"question": QUESTION}}, timeout=120)
    assert r.status_code == 200 and r.json()["output"]["answer"] == "Robert Zemeckis"


def test_a_run_over_its_budget_stops_and_the_model_gets_no_further_call(tight_server, fake_llm):
    body = {"input": {"question": QUESTION, "settings": {"llm": "slow", "max_iterations": 5}}}
    t0 = time.monotonic()
    r = httpx.post(f"{tight_server}/hybgrag/invoke", json=body, timeout=60)
    answered = time.monotonic()
    assert r.status_code == 504 and "exceeded its 3 s budget" in r.json()["detail"], r.text
    assert answered - t0 < 3 + 3, answered - t0
    started = [t for t in fake_llm.times("slow") if t >= t0]
    assert len(started) >= 2, "the run did not reach the model"
    time.sleep(3 * SLOW_REPLY + 1)
    late = [t - answered for t in fake_llm.times("slow") if t > answered + 0.2]
    assert late == [], f"model called {len(late)} time(s) after the run was stopped"


@pytest.mark.parametrize("endpoint", ["invoke", "stream"])
def test_a_client_that_disconnects_stops_its_run(server, fake_llm, endpoint):
    body = {"input": {"question": QUESTION, "settings": {"llm": "slow", "max_iterations": 5}}}
    t0 = time.monotonic()
    if endpoint == "invoke":
        with pytest.raises(httpx.ReadTimeout):  # no answer yet: the client gives up and closes
            httpx.post(f"{server}/hybgrag/invoke", json=body, timeout=httpx.Timeout(10, read=2.5))
    else:
        with httpx.stream("POST", f"{server}/hybgrag/stream", json=body, timeout=30) as r:
            assert r.status_code == 200
            for line in r.iter_lines():  # node events arrive; the client leaves mid-run
                assert not line.startswith("event: end"), "the run ended before the client left"
                if time.monotonic() - t0 > 2.5:
                    break
    gone = time.monotonic()
    assert [t for t in fake_llm.times("slow") if t >= t0], "the run did not reach the model"
    time.sleep(3 * SLOW_REPLY + 2)
    late = [t - gone for t in fake_llm.times("slow") if t > gone + 1.0]
    assert late == [], f"model called {len(late)} time(s) after the client went away"
    # the run would have gone on: undisturbed, this hybgrag run makes 20 calls in about 27 s (measured)
    r = httpx.post(f"{server}/fusion/invoke", json={"input": {"question": QUESTION}}, timeout=120)
    assert r.status_code == 200
