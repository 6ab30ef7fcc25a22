"""``python -m benchmarks load``: the LangServe app under concurrent clients against the same questions in-process.

``python -m benchmarks load --clients 8 --requests 400`` starts the app with uvicorn on a
free loopback port, sends ``--requests`` MetaQA 1-hop dev questions (brackets removed) from
``--clients`` concurrent clients to ``/<method>/invoke`` with the KB picked by name in the
request's ``settings`` (the server's config, ``HYBRIDRAG_SERVER_CONFIG``, names it
``bench``), and runs the same questions at the same concurrency in-process
(``get_graph(method).invoke`` in a thread pool) as the baseline, alternating the two in
``--rounds`` rounds. Throughput, p50/p95
latency and the error count of both go to ``docs/benchmarks_load.md``.

Target: zero errors, and HTTP throughput within 2x of the in-process throughput.
The KB defaults to the full MetaQA KB in the cache (:func:`hybridrag.evals.hybrid.metaqa_kb_dir`);
it is not built here (``--wait-kb`` waits for another process building it).
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks.common import DOCS, arg
from benchmarks.server import KB_NAME, Server, free_port, wait_for_kb
from benchmarks.speed.load_report import Result, report
from hybridrag.evals.timing import load_average

DEFAULT_OUT = DOCS / "benchmarks_load.md"


def questions(path: Path, n: int, kb: Path | None = None) -> tuple[list[str], int]:
    """``n`` questions of a MetaQA file (brackets removed), and how many were skipped.

    The questions cycle when the file is shorter. A question is skipped when its topic entity is
    not in ``kb`` (the server refuses those with a 400 "unknown entity": a correct answer, but not
    the load measured).
    """
    from hybridrag.evals.datasets import load_metaqa

    qs = load_metaqa(path)
    skipped = 0
    if kb is not None:
        from hybridrag.kb.base import open_kb

        graph, kept = open_kb(kb).graph, []
        for q in qs:  # scan in file order until n usable questions are found
            if len(kept) == n:
                break
            if q.topic and not graph.lookup(q.topic):
                skipped += 1
            else:
                kept.append(q)
        qs = kept
    if not qs:
        raise ValueError(f"no usable questions in {path}")
    return [qs[i % len(qs)].question for i in range(n)], skipped


def run_phase(name: str, clients: int, items: list[str], call) -> Result:
    """Run ``call(question)`` for every item from ``clients`` threads; time each call."""
    res = Result(name, clients)
    lock = threading.Lock()

    def one(q: str) -> None:
        t0 = time.perf_counter()
        try:
            call(q)
        except Exception as exc:  # noqa: BLE001 - every failure counts as an error
            with lock:
                res.errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
            return
        dt = time.perf_counter() - t0
        with lock:
            res.latencies.append(dt)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, items))
    res.seconds = time.perf_counter() - t0
    return res


def http_caller(url: str, method: str, kb: str = KB_NAME):
    """A thread-safe ``call(question)`` posting to ``/<method>/invoke`` (one client per thread)."""
    import httpx

    local = threading.local()

    def call(q: str) -> None:
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = httpx.Client(timeout=300)
        r = client.post(f"{url}/{method}/invoke", json={"input": {"question": q, "settings": {"kb": kb}}})
        if r.status_code != 200:
            raise RuntimeError(f"HTTP {r.status_code}: {r.text[:200]}")
        out = r.json()["output"]
        if "answer" not in out:
            raise RuntimeError("no answer in the output")

    return call


def inprocess_caller(method: str, kb: str):
    """``call(question)`` running the compiled graph in this process."""
    from hybridrag.graphs import context_for, get_graph

    graph, ctx = get_graph(method), context_for(method, kb=kb)

    def call(q: str) -> None:
        out = graph.invoke({"question": q}, context=ctx)
        if "answer" not in out:
            raise RuntimeError("no answer in the output")

    return call


OPTIONS = [
    arg("--clients", type=int, default=8, help="concurrent clients (threads)"),
    arg("--requests", type=int, default=400, help="requests per phase"),
    arg("--method", default="fusion"),
    arg("--kb", type=Path, help="KB directory (default: the full MetaQA KB in the cache)"),
    arg("--questions", type=Path, help="MetaQA question file (default: metaqa/dev_1hop.txt)"),
    arg("--warmup", type=int, help="warm-up requests per phase (default: 2 x clients)"),
    arg("--wait-kb", type=float, default=0, help="seconds to wait for the KB's manifest.json"),
    arg("--out", type=Path, default=DEFAULT_OUT, help="markdown report path"),
    arg("--server-log", type=Path, help="server log file (default: a temp file)"),
    arg("--rounds", type=int, default=4, help="alternating HTTP / in-process rounds"),
]


def alternate(args: argparse.Namespace, server: Server, kb: Path, items: list[str]) -> tuple[Result, Result]:
    """Warm both modes up, then time them in alternating rounds (drifting background load hits both alike)."""
    warm, timed_items = items[: args.warmup], items[args.warmup :]
    http, local = Result("HTTP (LangServe)", args.clients), Result("in-process", args.clients)
    remote = http_caller(server.url, args.method)
    inproc = inprocess_caller(args.method, str(kb))
    run_phase("warm-up", args.clients, warm, remote)
    run_phase("warm-up", args.clients, warm, inproc)
    size = -(-len(timed_items) // args.rounds)
    for r in range(args.rounds):
        chunk = timed_items[r * size : (r + 1) * size]
        for res, call in ((http, remote), (local, inproc)):
            part = run_phase(res.name, args.clients, chunk, call)
            res.seconds += part.seconds
            res.latencies += part.latencies
            res.errors += part.errors
        rates = f"HTTP {http.throughput:.2f} req/s, in-process {local.throughput:.2f} req/s"
        sys.stdout.write(f"round {r + 1}/{args.rounds}: {rates}\n")
        sys.stdout.flush()
    return http, local


def run(args: argparse.Namespace) -> int:
    """Run the benchmark and write the report."""
    import tempfile

    from hybridrag.evals.hybrid import datasets_root, metaqa_kb_dir

    args.questions = args.questions or datasets_root() / "metaqa" / "dev_1hop.txt"
    args.warmup = 2 * args.clients if args.warmup is None else args.warmup
    kb = (args.kb or metaqa_kb_dir()).resolve()
    wait_for_kb(kb, args.wait_kb)
    items, skipped = questions(args.questions, args.requests + args.warmup, kb)
    load = load_average()
    log = args.server_log or Path(tempfile.mkstemp(prefix="load-bench-server-", suffix=".log")[1])
    server = Server(free_port(), log, kb)
    try:
        server.wait_ready()
        http, local = alternate(args, server, kb, items)
    finally:
        server.stop()
    if args.server_log is None and not http.errors:
        log.unlink(missing_ok=True)  # kept (and named below) only when something failed
    elif http.errors:
        sys.stdout.write(f"server log: {log}\n")
    text = report(args, kb, http, local, load, skipped)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    sys.stdout.write(text + "\n")
    return 0 if not http.errors else 1
