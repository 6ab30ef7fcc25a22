"""What the load benchmark (:mod:`benchmarks.speed.load`) measures of a phase, and its markdown report."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common import command
from benchmarks.server import KB_NAME
from hybridrag.evals.markdown import header, provenance
from hybridrag.evals.timing import percentile


@dataclass
class Result:
    """Latencies and errors of one phase."""

    name: str
    clients: int
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        """Requests sent (answered or failed)."""
        return len(self.latencies) + len(self.errors)

    @property
    def throughput(self) -> float:
        """Requests per second."""
        return self.n / self.seconds if self.seconds else 0.0

    def pct(self, q: float) -> float:
        """The ``q`` percentile of the latencies (seconds)."""
        return percentile(self.latencies, q)

    def row(self) -> str:
        """The report's table row."""
        ms = [self.pct(50) * 1000, self.pct(95) * 1000, max(self.latencies, default=0) * 1000]
        return (
            f"| {self.name} | {self.clients} | {self.n} | {len(self.errors)} | {self.throughput:.2f} | "
            + " | ".join(f"{v:.0f}" for v in ms)
            + " |"
        )


def report(args: argparse.Namespace, kb: Path, http: Result, local: Result, load: tuple, skipped: int) -> str:
    """The markdown report."""
    prov = provenance()
    manifest = json.loads((kb / "manifest.json").read_text(encoding="utf-8"))
    counts = manifest.get("counts", {})
    ratio = local.throughput / http.throughput if http.throughput else float("inf")
    ok = not http.errors and not local.errors and ratio <= 2.0
    env = [f"HYBRIDRAG_CACHE={os.environ['HYBRIDRAG_CACHE']}"] if os.environ.get("HYBRIDRAG_CACHE") else []
    m = prov["machine"]
    lines = [
        *header(
            "Load benchmark: LangServe app vs. in-process",
            " ".join([*env, command(args)]),
            prov,
            [f"Load average before the run: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1 / 5 / 15 min)"],
        )[:-1],
        f"- method: `{args.method}` (default settings); KB: `{kb}` "
        f"({counts.get('entities', '?')} entities, {counts.get('triples', '?')} triples, "
        f"{counts.get('docs', '?')} text documents)",
        f"- questions: {args.requests} of `{args.questions}` in file order (MetaQA 1-hop dev, brackets "
        f"removed) after {args.warmup} warm-up requests per mode; {skipped} questions whose topic entity "
        "is not in the KB were skipped (the server refuses those with a 400 `unknown entity`); the modes "
        f"alternate in {args.rounds} rounds (HTTP then in-process, same questions) so that background "
        "load affects both alike",
        "- HTTP: `uvicorn app.server:create_app --factory` (one process, access log off) on 127.0.0.1, "
        f"its `HYBRIDRAG_SERVER_CONFIG` naming the KB `{KB_NAME}`; "
        f"{args.clients} client threads with keep-alive `httpx` clients posting "
        f'`/{args.method}/invoke` with `{{"question", "settings": {{"kb"}}}}`; the server validates the '
        "input, checks the question's entity mentions against the KB, then runs the graph",
        f'- in-process: `get_graph("{args.method}").invoke(..., context=...)` from {args.clients} threads',
        "",
        "| mode | clients | requests | errors | throughput (req/s) | p50 (ms) | p95 (ms) | max (ms) |",
        "|---|---|---|---|---|---|---|---|",
        http.row(),
        local.row(),
        "",
        f"In-process / HTTP throughput: **{ratio:.2f}x** (target ≤ 2x, zero errors): **{'met' if ok else 'not met'}**.",
    ]
    if load[0] > (os.cpu_count() or 1):
        lines += [
            "",
            f"Note: other jobs were running (1-minute load {load[0]:.1f} on {m['cores']} cores), so the "
            "absolute numbers are low and noisy; both modes saw the same background load (alternating "
            "rounds), so their ratio is the meaningful result.",
        ]
    errs = http.errors[:5] + local.errors[:5]
    if errs:
        lines += ["", "First errors:", "", *[f"- `{e}`" for e in errs]]
    return "\n".join(lines) + "\n"
