"""The page of :mod:`benchmarks.scale.mor_growth`: MoR traversal per KB size, baseline beside today's.

Hand-written findings below the marker line of an existing page are kept when the command
rewrites it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from benchmarks.common import ROOT

MARKER = "<!-- hand-written findings below this line are kept when the command rewrites the file -->"


def _ms(s: dict) -> str:
    return f"{s['p50_ms']:,.1f} / {s['p95_ms']:,.1f}" if s.get("n") else "–"


def _row(label: str, r: dict, extra: str = "") -> str:
    ratio = r["today"]["p50_ms"] / r["baseline"]["p50_ms"]
    counts = f"{r.get('entities', 0):,} | {r.get('triples', 0):,} | " if "entities" in r else ""
    return (
        f"| {label} | {counts}{_ms(r['baseline'])} | {_ms(r['today'])} | {ratio:.2f}× | {r['same']}/{r['n']} |{extra}"
    )


def _growth(metaqa: dict) -> list[str]:
    keys = list(metaqa)
    first = metaqa[keys[0]]
    out = [
        "| version | "
        + " | ".join(f"{k[1:]}× p50 ms" for k in keys)
        + " | "
        + " | ".join(f"{k[1:]}×/{keys[0][1:]}×" for k in keys[1:])
        + " |",
        "|---" * (1 + 2 * len(keys) - 1) + "|",
    ]
    for v in ("baseline", "today"):
        p50 = [metaqa[k][v]["p50_ms"] for k in keys]
        ratios = [f"{p / first[v]['p50_ms']:.2f}×" for p in p50[1:]]
        out.append(f"| {v} | " + " | ".join(f"{p:,.1f}" for p in p50) + " | " + " | ".join(ratios) + " |")
    return out


def page(res: dict, out: Path) -> str:
    """The markdown of one run (``out``: the page it replaces, whose hand-written part is kept)."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    loads = ", ".join(f"{x:.1f}" for x in res["loads"])
    metaqa = res["metaqa"]
    lines = [
        "# MoR traversal: growth with KB size, baseline and today's",
        "",
        f"Command: `nice -n 5 {res['command']}`",
        f"Date: {res['started']}, HEAD {commit.strip()}; baseline = `agents/mor/traversal.py` at {res['baseline']}. "
        "Machine: 2 cores shared with other engineers; 1-minute load average at start / after MetaQA / "
        f"after Prime: {loads}.",
        "",
        "Module timed: the scale benchmark's `mor: traversal` (every route of the gold plan, the intersection, "
        "candidate selection, fillers, critique; the question's embedding included). The two versions "
        "alternate which runs first on each question; the KBs are interleaved question by question. "
        "p50 / p95 ms. 'same outputs': questions whose candidate ids are identical in both versions.",
        "",
        "## MetaQA 1× / 4× / 16× (dev questions, 1–3 hops)",
        "",
        "| KB | entities | triples | baseline p50 / p95 | today p50 / p95 | today / baseline p50 | same outputs |",
        "|---|---|---|---|---|---|---|",
        *[_row(k[1:] + "×", r) for k, r in metaqa.items()],
        "",
        "Growth of p50 with the KB, each version against its own 1×:",
        "",
        *_growth(metaqa),
        "",
        "Per hop count (p50 / p95 ms):",
        "",
        "| KB | hops | baseline | today | today / baseline p50 | same outputs |",
        "|---|---|---|---|---|---|",
        *[_row(f"{k[1:]}× | {h}", r) for k, m in metaqa.items() for h, r in m["by_hop"].items()],
    ]
    if "prime" in res:
        lines += [
            "",
            "## The Prime-sized graph (benchmarks/scale/prime_synth.py, seeded walk questions)",
            "",
            "| hops | entities | triples | baseline p50 / p95 | today p50 / p95 | today / baseline p50 "
            "| same outputs |",
            "|---|---|---|---|---|---|---|",
            *[_row(h, r) for h, r in res["prime"].items()],
        ]
    lines += ["", "", MARKER, ""]
    kept = out.read_text(encoding="utf-8").split(MARKER, 1)[1].lstrip("\n") if out.exists() else ""
    return "\n".join(lines) + kept
