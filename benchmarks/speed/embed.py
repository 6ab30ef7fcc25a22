"""``python -m benchmarks embed``: query-embedding latency and a fresh process's cold start.

Three ways to encode one question with the bundled all-MiniLM-L6-v2, on the same questions
in the same run, alternating so that machine load hits each alike:

- *torch, default threads*: sentence-transformers as it comes (one thread per core);
- *torch, 1 thread*: the same model with ``torch.set_num_threads(1)``;
- *numpy encoder*: :class:`kb.bert_numpy.NumpyBert` on one BLAS thread, what
  ``LocalSentenceEmbeddings`` uses for one text (the project default).

Then the cold start: ``hybridrag ask --method fusion --kb sample`` in fresh processes (wall
time and peak RSS), and whether the query path imported torch. The machine's load average is
printed beside every number, since on 2 cores it changes them several-fold. Results go to
``docs/benchmarks_embed.md`` with the command, date and commit.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import arg, command
from hybridrag.evals.markdown import header, provenance, write_page
from hybridrag.evals.timing import load_average, percentile

QUESTIONS = [
    "who directed Alien",
    "what films did Tom Hanks star in",
    "which genres are the films of Ang Lee in",
    "the screenwriter of Joyful Noise also wrote which films",
    "when was Big released",
    "what language is Amelie in",
    "who starred in the movies directed by Penny Marshall",
]


def _p50(ts: list[float]) -> float:
    return percentile(ts, 50, "midpoint") * 1e3


def _p95(ts: list[float]) -> float:
    return percentile(ts, 95, "lower") * 1e3


def encoders() -> dict:
    """The three encoders, each a function of one text."""
    import torch
    from sentence_transformers import SentenceTransformer
    from threadpoolctl import threadpool_limits

    from hybridrag.kb.bert_numpy import NumpyBert
    from hybridrag.kb.embeddings import bundled_minilm_path

    path = bundled_minilm_path()
    st = SentenceTransformer(str(path), device="cpu")
    nb = NumpyBert(path)
    default = torch.get_num_threads()

    def torch_with(n: int):
        def run(text: str):
            torch.set_num_threads(n)
            return st.encode([text], normalize_embeddings=True)

        return run

    def numpy_one(text: str):
        with threadpool_limits(limits=1, user_api="blas"):
            return nb.encode_one(text)

    return {
        f"torch, default threads ({default})": torch_with(default),
        "torch, 1 thread": torch_with(1),
        "numpy encoder, 1 thread (default)": numpy_one,
    }


def latency(rounds: int) -> dict[str, list[float]]:
    """Per-encoder timings over ``rounds`` passes of the questions, interleaved."""
    fns = encoders()
    for fn in fns.values():
        fn("warm-up")
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for q in QUESTIONS:
            for name, fn in fns.items():
                t = time.perf_counter()
                fn(q)
                times[name].append(time.perf_counter() - t)
    return times


def cold_start(runs: int, encoder: str) -> list[tuple[float, float]]:
    """(wall seconds, peak RSS MB) of fresh ``hybridrag ask`` processes with a query encoder."""
    out = []
    env = {**os.environ, "HYBRIDRAG_QUERY_ENCODER": encoder}
    for _ in range(runs):
        t = time.perf_counter()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "hybridrag.app.cli",
                "ask",
                "--method",
                "fusion",
                "--kb",
                "sample",
                "who directed Big",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak RSS
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            raise SystemExit(f"hybridrag ask failed with exit code {proc.returncode}")
        out.append((time.perf_counter() - t, usage.ru_maxrss / 1024))
    return out


def torch_free() -> bool:
    """Whether a fresh process encodes a question with the default encoder without importing torch."""
    code = (
        "import sys; from hybridrag.kb.embeddings import get_embeddings; get_embeddings().encode(['q']);"
        " print('torch' in sys.modules)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True)
    return res.stdout.strip() == "False"


OPTIONS = [
    arg("--rounds", type=int, default=10, help="passes over the questions per encoder"),
    arg("--cold-runs", type=int, default=3, help="fresh `hybridrag ask` processes"),
    arg("--out", type=Path, default=Path("docs") / "benchmarks_embed.md"),
]


def run(args: argparse.Namespace) -> int:
    """Measure and write the report."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    info = provenance()
    load0 = load_average()[0]
    cold = {e: [] for e in ("numpy", "torch")}  # first, while this process is small (a fork's RSS starts as ours)
    for _ in range(args.cold_runs):  # alternating, so that load changes hit both alike
        for encoder in cold:
            cold[encoder] += cold_start(1, encoder)
    load1 = load_average()[0]
    times = latency(args.rounds)
    load2 = load_average()[0]
    base = _p50(times["torch, 1 thread"])
    rows = [
        f"| {name} | {len(ts)} | {_p50(ts):.1f} | {_p95(ts):.1f} | {_p50(ts) / base:.2f}x |"
        for name, ts in times.items()
    ]
    lines = [
        *header(
            "Query embedding and cold start",
            command(args),
            info,
            [
                f"Load average {load0:.1f} → {load1:.1f} (cold start) → {load2:.1f} (encoders).",
                f"{len(QUESTIONS)} MetaQA-style questions × {args.rounds} rounds, "
                "the encoders interleaved per question.",
            ],
        ),
        "| encoder (one question) | encodes | p50 ms | p95 ms | p50 vs torch 1 thread |",
        "|---|---|---|---|---|",
        *rows,
        "",
        f"Cold start, `hybridrag ask --method fusion --kb sample` in a fresh process, {args.cold_runs} runs each,"
        " alternating (wall / peak RSS):",
        "",
        *[
            f"- query encoder {e}{' (default)' if e == 'numpy' else ' (HYBRIDRAG_QUERY_ENCODER=torch)'}: "
            + ", ".join(f"{s:.1f} s / {m:.0f} MB" for s, m in runs)
            for e, runs in cold.items()
        ],
        "",
        f"With the default, the query path imports torch: {'no' if torch_free() else 'yes'}.",
        "",
    ]
    sys.stdout.write(write_page(args.out, lines) + "\n")
    return 0
