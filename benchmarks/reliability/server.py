"""Probe `hybridrag serve` as an attacker and with a failing model (for docs/reliability.md).

``run(workdir)`` starts :class:`FakeLLM`, an OpenAI-compatible endpoint on loopback (one path
per fault: ``hang``, ``garbage``, ``fail``; tests/integration/test_server_security.py uses it
too), and ``hybridrag serve`` with those endpoints named by the
operator, then

- sends every setting a client may not choose (models, base URLs, file paths, KB paths,
  unknown fields, out-of-bound numbers) and records the status and message;
- asks hybgrag with each faulty model: the status, the message and the seconds taken, and
  whether the server still answers a fusion question afterwards.

Each row is ``{"probe", "command", "result", "ok"}``; ``python -m benchmarks reliability --only server`` runs it.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from benchmarks.common import ROOT
from benchmarks.server import stop_group, wait_healthy

QUESTION = "who directed Forrest Gump"
LLM_TIMEOUT = 3
FORBIDDEN = [
    ("hybgrag", {"llm": "openai:gpt-4o-mini"}, "llm"),
    ("hybgrag", {"llm_base_url": "http://attacker.example/v1"}, "llm_base_url"),
    ("hybgrag", {"router_llm": "openai:gpt-4o"}, "router_llm"),
    ("hybgrag", {"few_shot": "/etc/passwd"}, "few_shot"),
    ("hybgrag", {"experience": "/dev/zero"}, "experience"),
    ("mor", {"reranker_weights": "/etc/passwd"}, "reranker_weights"),
    ("fusion", {"kb": "/tmp"}, "kb"),
    ("fusion", {"not_a_field": 1}, "not_a_field"),
    ("fusion", {"top_k": 100000}, "top_k"),
    ("fusion", {"top_k": 0}, "top_k"),
    ("fusion", {"k1": -5}, "k1"),
    ("hybgrag", {"max_iterations": 1000000}, "max_iterations"),
]
FAULTS = [("hang", 504), ("garbage", 502), ("fail", 502)]


class FakeLLM(ThreadingHTTPServer):
    """A fault-injecting OpenAI-compatible endpoint on loopback, one per path: ``url(mode)``.

    Modes: ``hang`` (never answers until :meth:`close`), ``garbage`` (200 with an unreadable
    body), ``fail`` (500), ``slow`` (a valid but unhelpful reply after ``slow_reply`` seconds);
    any other mode answers at once (e.g. ``capture``). Every call is recorded with its arrival
    time (``time.monotonic()``), mode, headers and body.
    """

    daemon_threads = True

    def __init__(self, slow_reply: float = 0.5) -> None:
        super().__init__(("127.0.0.1", 0), _FakeHandler)
        self.slow_reply = slow_reply
        self.calls: list[tuple[float, str, dict]] = []
        self.lock = threading.Lock()
        self.release = threading.Event()

    def start(self) -> FakeLLM:
        """Serve in a daemon thread; this server."""
        threading.Thread(target=self.serve_forever, daemon=True, name="fake-llm").start()
        return self

    def close(self) -> None:
        """Release hanging calls and stop serving."""
        self.release.set()
        self.shutdown()
        self.server_close()

    def url(self, mode: str) -> str:
        """The base URL of the endpoint with fault ``mode``."""
        return f"http://127.0.0.1:{self.server_address[1]}/{mode}/v1"

    def times(self, mode: str) -> list[float]:
        """Arrival times of the calls to ``mode``."""
        with self.lock:
            return [t for t, m, _ in self.calls if m == mode]


class _FakeHandler(BaseHTTPRequestHandler):
    server: FakeLLM

    def log_message(self, *args: object) -> None:
        pass

    def _reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802
        mode = self.path.strip("/").split("/")[0]
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.server.lock:
            self.server.calls.append((time.monotonic(), mode, {"headers": dict(self.headers), "body": body}))
        if mode == "hang":
            self.server.release.wait(120)
            return
        if mode == "garbage":
            return self._reply(200, b"<html>\x00 this is not JSON {{{")
        if mode == "fail":
            return self._reply(500, b'{"error": {"message": "upstream exploded at /srv/secret/model.bin"}}')
        if mode == "slow":
            time.sleep(self.server.slow_reply)
        reply = {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "fake",
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "I cannot tell."}}
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        self._reply(200, json.dumps(reply).encode())

    do_GET = do_POST


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_server(workdir: Path, fake_port: int) -> tuple[subprocess.Popen, str, list[str]]:
    port = _free_port()
    models = [a for mode, _ in FAULTS for a in ("--llm", f"{mode}=openai:fake@http://127.0.0.1:{fake_port}/{mode}/v1")]
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
        "60",
    ]
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "OPENAI_API_KEY": "sk-probe",
        "HYBRIDRAG_LLM_TIMEOUT": str(LLM_TIMEOUT),
        "HYBRIDRAG_LLM_MAX_RETRIES": "0",
    }
    log = open(workdir / "probe-server.log", "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    shown = ["HYBRIDRAG_LLM_TIMEOUT=3", "HYBRIDRAG_LLM_MAX_RETRIES=0", "hybridrag", *cmd[3:]]
    return proc, url, shown


def _curl(url: str, body: dict) -> str:
    return f"curl -s -X POST {url} -H 'content-type: application/json' -d {shlex.quote(json.dumps(body))}"


def _detail(r) -> str:  # noqa: ANN001 - an httpx.Response
    try:
        data = r.json()
    except ValueError:
        return r.text[:200]
    if r.status_code == 200:
        usage = data["output"].get("usage", {})
        return f"answer {data['output'].get('answer')!r} ({usage.get('fallbacks', 0)} fallbacks)"
    detail = data.get("detail")
    return detail if isinstance(detail, str) else json.dumps(detail)[:200]


def _probes(url: str, fake_url: str) -> list[dict]:
    import httpx

    rows = []
    for method, settings, field in FORBIDDEN:
        for where in ("settings", "configurable"):
            body = {"input": {"question": QUESTION}}
            if where == "settings":
                body["input"]["settings"] = settings
            else:
                body["config"] = {"configurable": settings}
            r = httpx.post(f"{url}/{method}/invoke", json=body, timeout=30)
            ok = 400 <= r.status_code < 500 and field in _detail(r)
            rows.append(
                {
                    "probe": f"{method}: `{field}` in {where}",
                    "command": _curl(f"{url}/{method}/invoke", body),
                    "result": f"{r.status_code} {_detail(r)}",
                    "ok": ok,
                }
            )
    for mode, status in FAULTS:
        body = {"input": {"question": QUESTION, "settings": {"llm": mode, "max_iterations": 1}}}
        t0 = time.monotonic()
        r = httpx.post(f"{url}/hybgrag/invoke", json=body, timeout=120)
        took = time.monotonic() - t0
        after = httpx.post(f"{url}/fusion/invoke", json={"input": {"question": QUESTION}}, timeout=120)
        ok = r.status_code == status and took < LLM_TIMEOUT + 15 and after.status_code == 200
        rows.append(
            {
                "probe": f"LLM endpoint: {mode} ({fake_url}/{mode}/v1)",
                "command": _curl(f"{url}/hybgrag/invoke", body),
                "result": f"{r.status_code} in {took:.1f} s: {_detail(r)}; then fusion: {after.status_code}",
                "ok": ok,
            }
        )
    return rows


def run(workdir: Path) -> list[dict]:
    """Start the fake model and the server under ``workdir``, probe them, stop both; the rows."""
    workdir.mkdir(parents=True, exist_ok=True)
    fake = FakeLLM().start()
    proc, url, shown = _start_server(workdir, fake.server_address[1])
    try:
        wait_healthy(proc, url, 180)
        rows = _probes(url, f"http://127.0.0.1:{fake.server_address[1]}")
    finally:
        stop_group(proc)
        fake.close()
    rows.insert(0, {"probe": "server under test", "command": shlex.join(shown), "result": url, "ok": True})
    return rows
