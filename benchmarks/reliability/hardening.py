"""What a request costs the server: admission CPU, CPU after a 504 or a hang-up, the p50 split.

``run(workdir)`` starts ``hybridrag serve`` on the bundled sample KB and

- times sequential fusion requests three ways to split the server's p50 into admission (the
  checks before a run: policy, validation, the KB's entity check), the run and the rest (HTTP,
  parsing, LangServe): a request refused by the policy (no KB work), one refused at the entity
  check, and a normal one;
- posts questions of 362 and 2,000 characters made of unknown capitalised names to
  ``/fusion/invoke``: the server's CPU seconds (``/proc/<pid>/stat``) and wall time while it
  answers, and the CPU it spends after a client that hung up early; every question has names of
  its own (nothing cached), and the first one after start is reported apart (one-off loading).
  A row is as expected with a 4xx under 3 CPU s and under 1 CPU s spent after the client left;
- runs hydrarag on the local SmolLM2 at the largest settings a client may choose under a short
  ``--run-timeout``: the CPU the server spends in the 20 s after the 504, and after a hang-up.

``python -m benchmarks reliability --only hardening`` runs it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx

from benchmarks.reliability.load import Served, sample_questions
from benchmarks.reliability.proc import cpu_during, curl, post_and_hang_up, wait_idle
from hybridrag.evals.timing import percentile
from hybridrag.evals.timing import process_cpu_seconds as cpu_seconds

WATCH = 20.0  # seconds of server CPU sampled after a 504 or a hang-up
RUN_TIMEOUT = 10
LONG_WAIT = 90.0  # a client gives up on one request after this many seconds
HYDRA_MAX = {
    "llm": "smol",
    "top_k": 50,
    "max_iterations": 5,
    "max_depth": 5,
    "max_width": 10,
    "beam_width": 200,
    "cross_width": 50,
    "num_sentences": 10,
    "doc_pool": 20,
    "num_examples": 5,
    "web_results": 10,
}
HYDRA_QUESTION = "which movies were directed by the director of Big"


def names_question(chars: int, letter: str = "Q") -> str:
    """``who directed Q0 z Q1 z ...`` cut to ``chars`` characters (362 for Q0..Q59)."""
    words, i = ["who directed"], 0
    while len(" ".join(words)) < chars:
        words += [f"{letter}{i}", "z"]
        i += 1
    return " ".join(words)[:chars].rstrip()


def _timed(client: httpx.Client, url: str, body: dict, n: int) -> tuple[list[float], set[int]]:
    secs, statuses = [], set()
    for i in range(n):
        b = json.loads(json.dumps(body).replace("{i}", str(i)))
        t0 = time.perf_counter()
        r = client.post(url, json=b, timeout=120)
        secs.append(time.perf_counter() - t0)
        statuses.add(r.status_code)
    return secs, statuses


def p50_row(server: Served, n: int = 40) -> dict:
    """Sequential fusion requests: p50 of the total split into admission, run and the rest."""
    url = f"{server.url}/fusion/invoke"
    normal = [{"input": {"question": q}} for q in sample_questions(n, seed=1)]
    refused = {"input": {"question": "who directed Big", "settings": {"not_a_field": 1}}}
    unknown = {"input": {"question": "who directed Zqxv Wplk {i}"}}
    with httpx.Client() as c:
        for body in normal[:5]:  # warm-up: caches, first-call imports
            c.post(url, json=body, timeout=120)
        rest, s1 = _timed(c, url, refused, n)
        admit, s2 = _timed(c, url, unknown, n)
        total, s3 = [], set()
        for body in normal:
            t, s = _timed(c, url, body, 1)
            total += t
            s3 |= s
    p_rest, p_admit, p_total = (percentile(x, 50, "rank") * 1000 for x in (rest, admit, total))
    split = {
        "total_ms": p_total,
        "rest_ms": p_rest,
        "admission_ms": p_admit - p_rest,
        "run_ms": p_total - p_admit,
        "n": n,
    }
    result = (
        f"p50 {p_total:.1f} ms = admission {split['admission_ms']:.1f} + run {split['run_ms']:.1f} + "
        f"rest {p_rest:.1f} ms ({n} sequential requests of each kind; rest = p50 of a request refused by "
        f"the policy, {sorted(s1)}; admission = p50 of one refused at the entity check {sorted(s2)} − rest; "
        f"run = p50 of a normal one {sorted(s3)} − both)"
    )
    return {
        "probe": "server p50 breakdown (fusion, sample KB)",
        "ok": s1 == {400} and s2 == {400} and s3 == {200},
        "command": f"{server.command}; {curl(url, normal[0])} (×{n}; also with settings "
        f"{{\"not_a_field\": 1}} and with question 'who directed Zqxv Wplk N')",
        "result": result,
        "data": split,
    }


def _ask_timed(server: Served, path: str, body: dict, wait: float) -> tuple[str, float, float]:
    """(status or 'no answer', wall seconds, server CPU seconds) of one request."""
    pid, c0, t0 = server.proc.pid, cpu_seconds(server.proc.pid), time.monotonic()
    try:
        r = httpx.post(f"{server.url}{path}", json=body, timeout=wait)
        status = f"{r.status_code} {r.text[:70]!r}"
    except httpx.TimeoutException:
        status = f"no answer in {wait:.0f} s (client gave up)"
    return status, time.monotonic() - t0, cpu_seconds(pid) - c0


def admission_answered(server: Served, chars: int, letter: str = "Q", first: bool = False) -> dict:
    """A long question of unknown names: the answer, the wall time and CPU, and CPU afterwards.

    ``first``: the first such question after start, which also pays any one-off loading (no CPU bound).
    """
    pid, url = server.proc.pid, f"{server.url}/fusion/invoke"
    body = {"input": {"question": names_question(chars, letter)}}
    busy = _busy_note(wait_idle(pid, limit=120))
    status, wall, cpu = _ask_timed(server, "/fusion/invoke", body, LONG_WAIT)
    after = cpu_during(pid, WATCH)
    what = ", the first after start (one-off loading)" if first else ""
    return {
        "probe": f"admission: {chars:,}-char question of unknown names{what}",
        "command": curl(url, body),
        "result": f"{status} after {wall:.1f} s; server CPU {cpu:.1f} s, then {after:.1f} s in the {WATCH:.0f} s "
        f"after{busy}",
        "ok": status.startswith("4") and (first or cpu < 3) and after < 1,
        "data": {"chars": chars, "wall_s": wall, "cpu_s": cpu, "cpu_after_s": after},
    }


def _busy_note(waited: float, limit: float = 120) -> str:
    return " (the server was still busy from the previous request)" if waited >= limit else ""


def admission_hung_up(server: Served, chars: int, letter: str = "R") -> dict:
    """Such a question (other names, so nothing cached) from a client that hangs up after 1 s.

    Returns:
        The row: the CPU the server spends in the 20 s after the hang-up.
    """
    pid, url = server.proc.pid, f"{server.url}/fusion/invoke"
    body = {"input": {"question": names_question(chars, letter)}}
    busy = _busy_note(wait_idle(pid, limit=120))
    hung = post_and_hang_up(server.url, "/fusion/invoke", json.dumps(body).encode(), 1.0)
    after = cpu_during(pid, WATCH)
    return {
        "probe": f"admission: {chars:,}-char question, client hangs up after 1 s",
        "command": curl(url, body).replace("curl -s", "curl -s --max-time 1", 1),
        "result": f"server CPU {after:.1f} s in the {WATCH:.0f} s after the hang-up (socket closed after {hung:.1f} s"
        f"{', the server had answered first' if hung < 0.95 else ''}){busy}",
        "ok": after < 1,
        "data": {"chars": chars, "cpu_after_s": after, "closed_after_s": hung},
    }


def timeout_rows(server: Served) -> list[dict]:
    """Hydrarag at the largest client settings under a short run budget: CPU after 504 / hang-up."""
    pid, url = server.proc.pid, f"{server.url}/hydrarag/invoke"
    body = {"input": {"question": HYDRA_QUESTION, "settings": HYDRA_MAX}}
    wait_idle(pid, limit=120)
    status, wall, cpu = _ask_timed(server, "/hydrarag/invoke", body, 300)
    after = cpu_during(pid, WATCH)
    rows = [
        {
            "probe": f"hydrarag at the largest settings, --run-timeout {RUN_TIMEOUT}: CPU after the 504",
            "command": f"{server.command}; {curl(url, body)}",
            "result": f"{status} after {wall:.1f} s (server CPU {cpu:.1f} s); then {after:.1f} CPU s in the "
            f"{WATCH:.0f} s after the response",
            "ok": status.startswith("504") and after < 1,
            "data": {"wall_s": wall, "cpu_s": cpu, "cpu_after_s": after},
        }
    ]
    wait_idle(pid, limit=120)
    post_and_hang_up(server.url, "/hydrarag/invoke", json.dumps(body).encode(), RUN_TIMEOUT / 2)
    after = cpu_during(pid, WATCH)
    rows.append(
        {
            "probe": f"hydrarag at the largest settings: client hangs up after {RUN_TIMEOUT / 2:g} s",
            "command": curl(url, body).replace("curl -s", f"curl -s --max-time {RUN_TIMEOUT / 2:g}", 1),
            "result": f"server CPU {after:.1f} s in the {WATCH:.0f} s after the hang-up",
            "ok": after < 1,
            "data": {"cpu_after_s": after},
        }
    )
    return rows


def run(workdir: Path) -> list[dict]:
    """Every row of this probe: a fusion server, then a hydrarag one on the local SmolLM2."""
    workdir.mkdir(parents=True, exist_ok=True)
    with Served(workdir, "--kb", "sample=sample") as server:
        rows = [p50_row(server), admission_answered(server, 362, "W", first=True)]
        rows += [admission_answered(server, 362), admission_hung_up(server, 362)]
        rows += [admission_hung_up(server, 2000, "S"), admission_answered(server, 2000, "T")]
    with Served(
        workdir, "--kb", "sample=sample", "--llm", "smol=local:smollm2", "--run-timeout", str(RUN_TIMEOUT)
    ) as server:
        rows += timeout_rows(server)
    return rows
