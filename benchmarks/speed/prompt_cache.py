"""``python -m benchmarks prompt-cache``: llama.cpp's prompt cache with roles taking turns.

The LLM methods call the local model with a few long, fixed instruction blocks (router,
validator, ...) in turn, each followed by a short new part. Without a cache llama.cpp keeps
only the last prompt's evaluated prefix, so every change of role evaluates the whole
instructions again; with ``HYBRIDRAG_LOCAL_PROMPT_CACHE_MB`` (default 256) it restores the
state of the prompt sharing the longest prefix. This command times the same alternating
two-role sequence with the cache off and on, in fresh processes run alternately, and writes
``docs/benchmarks_prompt_cache.md``. The first call of each role fills the cache and is
reported apart; "later calls" are the rest.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import arg, child, child_env, last_json
from hybridrag.evals.markdown import header, provenance, write_page
from hybridrag.evals.timing import load_average, percentile

QUESTIONS = ["who directed Big", "what genre is Alien", "when was Amelie released", "who wrote Tremors"]


def _instructions(kind: str) -> str:
    if kind == "router":
        return "You route questions about a movie knowledge base. " + " ".join(
            f"Relation r{i} links films to people of kind {i}." for i in range(60)
        )
    return "You judge whether references answer a question. " + " ".join(
        f"Rule {i}: a reference of kind {i} must name the asked relation." for i in range(60)
    )


def child_process() -> None:
    """One process: the alternating sequence with the cache size in the environment; JSON timings out."""
    from hybridrag.agents.llm.models import load_chat_model

    model = load_chat_model("local:smollm2")
    times = []
    for q in QUESTIONS:
        for role in ("router", "validator"):
            t = time.perf_counter()
            model.invoke([("system", _instructions(role)), ("human", q)], max_tokens=8)
            times.append(time.perf_counter() - t)
    sys.stdout.write(json.dumps(times) + "\n")


def timings(cache_mb: int) -> list[float]:
    """The seconds of every call of one child process with a prompt cache of ``cache_mb``."""
    env = child_env({"HYBRIDRAG_LOCAL_PROMPT_CACHE_MB": str(cache_mb), "OMP_WAIT_POLICY": "passive"})
    out = subprocess.run(
        child("prompt-cache", "--child"),
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    return last_json(out.stdout)


OPTIONS = [
    arg("--repeats", type=int, default=2, help="processes per setting"),
    arg("--child", action="store_true", help=argparse.SUPPRESS),
    arg("--out", type=Path, default=Path("docs") / "benchmarks_prompt_cache.md"),
]


def run(args: argparse.Namespace) -> int:
    """Measure both settings alternately and write the report."""
    if args.child:
        child_process()
        return 0
    info, load0 = provenance(), load_average()[0]
    rows = []
    for rep in range(args.repeats):
        for mb in (0, 256):
            ts = timings(mb)
            rows.append(
                f"| {rep + 1} | {mb or 'off'} | {ts[0]:.2f} / {ts[1]:.2f} | {percentile(ts[2:], 50, 'midpoint'):.2f} "
                f"| {max(ts[2:]):.2f} |"
            )
    lines = [
        *header(
            "llama.cpp prompt cache, roles taking turns",
            f"python -m benchmarks prompt-cache --repeats {args.repeats}",
            info,
            [
                "Bundled SmolLM2-135M (`local:smollm2`), 8 output tokens a call; "
                f"load average {load0:.1f} → {load_average()[0]:.1f}.",
                f"{len(QUESTIONS)} questions × 2 roles (two different instruction blocks of ~600 tokens) in turn.",
            ],
        ),
        "| process | cache MB | first call per role s | later calls p50 s | later calls max s |",
        "|---|---|---|---|---|",
        *rows,
        "",
    ]
    sys.stdout.write(write_page(args.out, lines) + "\n")
    return 0
