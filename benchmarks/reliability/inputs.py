"""Hostile request bodies against ``hybridrag serve``: each must be a 4xx, not a 500 or a traceback.

``run(workdir)`` starts the fault-injecting model of :mod:`benchmarks.reliability.server` and the server with
those models, then sends

- ``/stream_log`` and ``/stream_events`` requests whose model hangs, fails or sends garbage: the
  stream must end with an ``error`` event carrying 502/504 and close cleanly (curl exit 0);
- a 100 MB body (413 without echoing it; the server's memory before and after) and 1 MB of
  ``config.metadata`` on ``/stream_events`` (a bounded response);
- NaN, Infinity, 1e999 and a 5,000-digit integer as a setting, JSON nested 1,000 deep, a non-UTF-8
  body, a lone surrogate, ``/batch`` inputs that are not a list, ``config.configurable`` that is
  a list or a string, ``input`` next to an empty ``inputs``, ``top_k`` true or "1": each a 4xx,
  with the log lines (and tracebacks) it added to the server's log.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import httpx

from benchmarks.reliability.load import Served, rss_mb
from benchmarks.reliability.proc import curl, log_counts
from benchmarks.reliability.server import FAULTS, FakeLLM

Q = "who directed Big"
BIG = 100 * 1024 * 1024
MAKE_BIG = (
    'python -c "import sys; sys.stdout.write(\'{\\"input\\": {\\"question\\": \\"\' + \'a\' * '
    + str(BIG)
    + " + '\\\"}}')\""
)


def _raw(q_settings: str, extra: str = "") -> str:
    return '{"input": {"question": "' + Q + '", "settings": {' + q_settings + "}}" + extra + "}"


MALFORMED = [  # (probe, path, raw body)
    ("top_k NaN", "/fusion/invoke", _raw('"top_k": NaN')),
    ("top_k Infinity", "/fusion/invoke", _raw('"top_k": Infinity')),
    ("top_k 1e999", "/fusion/invoke", _raw('"top_k": 1e999')),
    ("top_k a 5,000-digit integer", "/fusion/invoke", _raw('"top_k": 1' + "0" * 4999)),
    (
        "JSON nested 1,000 deep",
        "/fusion/invoke",
        _raw("", ', "config": {"metadata": {"x": ' + "[" * 1000 + "]" * 1000 + "}}"),
    ),
    ("lone surrogate in the question", "/fusion/invoke", '{"input": {"question": "who directed \\ud800 Big"}}'),
    ("/batch inputs a string", "/fusion/batch", '{"inputs": "who directed Big"}'),
    ("/batch inputs an object", "/fusion/batch", '{"inputs": {"question": "who directed Big"}}'),
    ("config.configurable a list on /stream", "/fusion/stream", _raw("", ', "config": {"configurable": [1, 2]}')),
    ("config.configurable a string on /stream", "/fusion/stream", _raw("", ', "config": {"configurable": "x"}')),
    (
        "input with an empty inputs, unknown entity",
        "/fusion/invoke",
        '{"input": {"question": "who directed Zqxv Wplk"}, "inputs": []}',
    ),
    ("top_k true in settings", "/fusion/invoke", _raw('"top_k": true')),
    ('top_k "1" in settings', "/fusion/invoke", _raw('"top_k": "1"')),
    ("top_k true in configurable", "/fusion/invoke", _raw("", ', "config": {"configurable": {"top_k": true}}')),
    ('top_k "1" in configurable', "/fusion/invoke", _raw("", ', "config": {"configurable": {"top_k": "1"}}')),
]
WANT_422 = {"top_k true in settings", 'top_k "1" in settings'}  # the input's schema refuses them


def _row(probe: str, command: str, result: str, ok: bool, **data: object) -> dict:
    return {"probe": probe, "command": command, "result": result, "ok": bool(ok), "data": data}


def _settle(server: Served, offset: int) -> tuple[int, int, int]:
    time.sleep(0.5)  # the access line and any traceback reach the log
    return log_counts(server.log, offset)


def stream_rows(server: Served) -> list[dict]:
    """Each faulty model on /stream_log and /stream_events: the last event and curl's exit code."""
    rows = []
    for mode, want in FAULTS:
        for endpoint in ("stream_log", "stream_events"):
            url = f"{server.url}/hybgrag/{endpoint}"
            body = {"input": {"question": Q, "settings": {"llm": mode, "max_iterations": 1}}}
            cmd = [
                "curl",
                "-sN",
                "--max-time",
                "120",
                "-X",
                "POST",
                url,
                "-H",
                "content-type: application/json",
                "-d",
                json.dumps(body),
            ]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
            events = [x.split(":", 1)[1].strip() for x in done.stdout.splitlines() if x.startswith("event:")]
            data = [x.split(":", 1)[1].strip() for x in done.stdout.splitlines() if x.startswith("data:")]
            last = f"{events[-1]} {data[-1][:90] if data else ''}" if events else "no event"
            ok = done.returncode == 0 and events[-1:] == ["error"] and f'"status_code": {want}' in (data or [""])[-1]
            rows.append(
                _row(
                    f"{endpoint} with a model that answers {mode!r}",
                    curl(url, body, stream=True),
                    f"curl exit {done.returncode}; {len(events)} events, last: {last}",
                    ok,
                    curl_exit=done.returncode,
                    last_event=last,
                )
            )
    return rows


def size_rows(server: Served) -> list[dict]:
    """A 100 MB body and 1 MB of metadata: the status, the bytes sent back, the server's memory."""
    pid, url = server.proc.pid, f"{server.url}/fusion/invoke"
    body = b'{"input": {"question": "' + b"a" * BIG + b'"}}'
    before = rss_mb(pid)
    try:
        r = httpx.post(url, content=body, headers={"content-type": "application/json"}, timeout=300)
        status, size, echo = str(r.status_code), len(r.content), b"aaaaaaaaaaaaaaaa" in r.content
    except httpx.HTTPError as exc:  # the server may close the connection while the body is still being sent
        status, size, echo = f"{type(exc).__name__}", 0, False
    time.sleep(1)
    after = rss_mb(pid)
    make = MAKE_BIG
    rows = [
        _row(
            "100 MB body",
            f"{make} | curl -s -X POST {url} -H 'content-type: application/json' --data-binary @-",
            f"{status}, {size:,} bytes back{' ECHOING the body' if echo else ''}; server RSS {before:.0f} MB → "
            f"{after:.0f} MB",
            status == "413" and not echo,
            rss_before_mb=before,
            rss_after_mb=after,
        )
    ]
    url = f"{server.url}/fusion/stream_events"
    body = {"input": {"question": Q}, "config": {"metadata": {"blob": "m" * (1024 * 1024)}}}
    r = httpx.post(url, json=body, timeout=120)
    rows.append(
        _row(
            "1 MB of config.metadata on /stream_events",
            curl(url, body, stream=True),
            f"{r.status_code}, {len(r.content):,} bytes back",
            400 <= r.status_code < 500 or len(r.content) < 256 * 1024,
            bytes_back=len(r.content),
        )
    )
    return rows


def malformed_rows(server: Served) -> list[dict]:
    """Every malformed body (and a non-UTF-8 one): the status and what it added to the server log."""
    cases = [(n, p, b.encode("utf-8")) for n, p, b in MALFORMED]
    cases.insert(5, ("non-UTF-8 body", "/fusion/invoke", b'{"input": {"question": "who directed \xff\xfe Big"}}'))
    _, _, offset = _settle(server, 0)
    rows = []
    for name, path, raw in cases:
        r = httpx.post(server.url + path, content=raw, headers={"content-type": "application/json"}, timeout=120)
        lines, tracebacks, offset = _settle(server, offset)
        want = (lambda s: s == 422) if name in WANT_422 else (lambda s: 400 <= s < 500)
        shown = raw.decode("utf-8", errors="backslashreplace")
        rows.append(
            _row(
                name,
                curl(server.url + path, shown),
                f"{r.status_code} {r.text[:100]!r}; server log: {lines} line(s), {tracebacks} traceback(s)",
                want(r.status_code) and not tracebacks,
                status=r.status_code,
                log_lines=lines,
                tracebacks=tracebacks,
            )
        )
    return rows


def run(workdir: Path) -> list[dict]:
    """Start the fake model and the server, send every hostile body, stop both; the rows."""
    workdir.mkdir(parents=True, exist_ok=True)
    fake = FakeLLM().start()
    port = fake.server_address[1]
    models = [a for mode, _ in FAULTS for a in ("--llm", f"{mode}=openai:fake@http://127.0.0.1:{port}/{mode}/v1")]
    env = {"OPENAI_API_KEY": "sk-probe", "HYBRIDRAG_LLM_TIMEOUT": "3", "HYBRIDRAG_LLM_MAX_RETRIES": "0"}
    try:
        with Served(workdir, "--kb", "sample=sample", *models, "--run-timeout", "60", env=env) as server:
            return malformed_rows(server) + stream_rows(server) + size_rows(server)
    finally:
        fake.close()
