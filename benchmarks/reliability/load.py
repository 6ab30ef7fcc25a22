"""Load probe of ``hybridrag serve``: many clients, zero errors, memory before and after.

``python -m benchmarks reliability --only load [--clients 8] [--requests 400]`` starts ``hybridrag serve`` on a
free loopback port with the bundled sample KB (named ``sample`` by the operator), sends
``--requests`` fusion questions built from the sample's own triples from ``--clients``
concurrent clients, and reads the server's resident memory (VmRSS) after one warm-up request
and after the load. Then three concurrent HybGRAG requests on the bundled SmolLM2 (one
llama.cpp instance shared by the server's threads) must all succeed.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from benchmarks.common import ROOT
from benchmarks.server import free_port, stop_group, wait_healthy
from hybridrag.evals.timing import percentile

SAMPLE_TRIPLES = ROOT / "kb" / "sample" / "triples.txt"
TEMPLATES = {
    "directed_by": "who directed {}",
    "written_by": "who wrote {}",
    "starred_actors": "who starred in {}",
    "release_year": "when was {} released",
}


def sample_questions(n: int, seed: int = 0) -> list[str]:
    """``n`` 1-hop questions about movies of the sample KB (with repeats when n is large)."""
    pool = []
    for line in SAMPLE_TRIPLES.read_text(encoding="utf-8").splitlines():
        head, rel, _ = line.split("|", 2)
        if rel in TEMPLATES:
            pool.append(TEMPLATES[rel].format(head))
    pool = sorted(set(pool))
    rng = random.Random(seed)
    return [rng.choice(pool) for _ in range(n)]


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MB (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Served:
    """``hybridrag serve`` in a subprocess (``env``: extra environment variables), stopped on exit."""

    def __init__(self, workdir: Path, *flags: str, env: dict | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / f"serve-{self.port}.log"
        cmd = [sys.executable, "-m", "hybridrag.app.cli", "serve", "--port", str(self.port), *flags]
        self.command = " ".join(["hybridrag", *cmd[3:]])
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", **(env or {})}
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    def __enter__(self) -> Served:
        wait_healthy(self.proc, self.url, 600, log=self.log)
        return self

    def __exit__(self, *exc: object) -> None:
        stop_group(self.proc)

    def ask(self, client: httpx.Client, method: str, question: str, **settings: object) -> httpx.Response:
        """POST ``question`` with ``settings`` to ``/<method>/invoke``; the response."""
        body = {"input": {"question": question, "settings": settings}}
        return client.post(f"{self.url}/{method}/invoke", json=body, timeout=600)


def _hammer(server: Served, questions: list[str], clients: int) -> tuple[list[float], list[str]]:
    latencies: list[float] = []
    errors: list[str] = []

    def one(q: str) -> None:
        with httpx.Client() as client:
            t0 = time.perf_counter()
            r = server.ask(client, "fusion", q)
            if r.status_code == 200 and "answer" in r.json().get("output", {}):
                latencies.append(time.perf_counter() - t0)
            else:
                errors.append(f"HTTP {r.status_code}: {r.text[:120]}")

    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, questions))
    return latencies, errors


def load_rows(workdir: Path, clients: int, requests: int) -> list[dict]:
    """The load probe: fusion under ``clients`` concurrent clients."""
    with Served(workdir, "--kb", "sample=sample") as server, httpx.Client() as c:
        server.ask(c, "fusion", "who directed Big").raise_for_status()
        before = rss_mb(server.proc.pid)
        t0 = time.perf_counter()
        lat, errors = _hammer(server, sample_questions(requests), clients)
        secs = time.perf_counter() - t0
        after = rss_mb(server.proc.pid)
        healthy = httpx.get(f"{server.url}/health", timeout=5).status_code == 200
        p50, p95 = percentile(lat, 50, "rank"), percentile(lat, 95, "rank")
        result = (
            f"{len(lat)} ok, {len(errors)} errors in {secs:.1f} s ({requests / secs:.1f} req/s); "
            f"p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms; server RSS {before:.0f} MB → "
            f"{after:.0f} MB; /health {'ok' if healthy else 'FAILED'} afterwards"
        )
        return [
            {
                "probe": f"{clients} clients × {requests} fusion requests",
                "ok": not errors and healthy,
                "command": f"{server.command}; python -m benchmarks reliability --only load "
                f"--clients {clients} --requests {requests}",
                "result": result,
            }
        ]


def local_model_rows(workdir: Path, concurrent: int = 3) -> list[dict]:
    """Concurrent HybGRAG requests sharing the server's one llama.cpp instance."""
    qs = ["who directed Big", "who wrote Apollo 13", "which movies did Tom Hanks star in"][:concurrent]
    with Served(workdir, "--kb", "sample=sample", "--llm", "smol=local:smollm2", "--run-timeout", "600") as server:

        def one(q: str) -> str:
            with httpx.Client() as c:
                r = server.ask(c, "hybgrag", q, max_iterations=1)
                return f"HTTP {r.status_code}"

        t0 = time.perf_counter()
        with ThreadPoolExecutor(concurrent) as pool:
            statuses = list(pool.map(one, qs))
        secs = time.perf_counter() - t0
        alive = server.proc.poll() is None
    ok = alive and all(s == "HTTP 200" for s in statuses)
    return [
        {
            "probe": f"{concurrent} concurrent hybgrag requests on local:smollm2",
            "ok": ok,
            "command": f"{server.command}; python -m benchmarks reliability --only load",
            "result": f"{', '.join(statuses)} in {secs:.0f} s; server {'alive' if alive else 'DIED'}",
        }
    ]


def run(workdir: Path, clients: int = 8, requests: int = 400) -> list[dict]:
    """Both load probes as report rows."""
    return load_rows(workdir, clients, requests) + local_model_rows(workdir)
