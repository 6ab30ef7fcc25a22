"""Markdown report of the scale benchmark, from the results recorded in the work dir."""

from __future__ import annotations

from pathlib import Path

from benchmarks.scale.report_tables import (
    ingest_of,
    ingest_table,
    latency_of,
    latency_table,
    load_table,
    ms_text,
    ratio_text,
    server_table,
    synthetic_table,
)
from hybridrag.evals.markdown import header, provenance, write_above


def growth(ratio: float, factor: int, kind: str) -> str:
    """Verdict on how a quantity grew: ``kind`` "linear" (ingest, memory) or "sublinear" (latency)."""
    if kind == "sublinear":
        return "sub-linear" if ratio < 0.75 * factor else ("about linear" if ratio <= 1.25 * factor else "super-linear")
    return "sub-linear" if ratio < 0.75 * factor else ("linear" if ratio <= 1.25 * factor else "super-linear")


def _loads(results: dict) -> str:
    vals = [
        v
        for r in results.values()
        if isinstance(r, dict)
        for k in ("load_before", "load_after")
        if isinstance(v := r.get(k), (int, float))
    ]
    return f"{min(vals):.1f}–{max(vals):.1f}" if vals else "not recorded"


def _real(results: dict, f: int) -> dict:
    ing = ingest_of(results, f)
    return ing if ing.get("embedding") == "real" else {}


def _no_encode(results: dict, f: int) -> float | None:
    ing = ingest_of(results, f)
    parts = [ing.get(k) for k in ("parse_s", "graph_s", "indexes_s")]
    return sum(parts) if all(p is not None for p in parts) else None


def _growth_rows(results: dict, factors: list[int]) -> list[str]:
    base = factors[0]
    qty = [
        ("graph ingest s", lambda f: results.get(f"graph@{f}", {}).get("seconds"), "linear"),
        ("graph ingest CPU s", lambda f: results.get(f"graph@{f}", {}).get("cpu_s"), "linear"),
        ("graph ingest peak RSS MB", lambda f: results.get(f"graph@{f}", {}).get("peak_rss_mb"), "linear"),
        ("full ingest s (real encode only)", lambda f: _real(results, f).get("seconds"), "linear"),
        ("ingest s without the encode (parse + graph + indexes)", lambda f: _no_encode(results, f), "linear"),
        ("full ingest peak RSS MB", lambda f: ingest_of(results, f).get("peak_rss_mb"), "linear"),
        ("FAISS build s (inside the ingests)", lambda f: ingest_of(results, f).get("faiss_build"), "linear"),
        (
            "FAISS build s (alone, one factor at a time)",
            lambda f: results.get(f"index@{f}", {}).get("seconds"),
            "linear",
        ),
        ("KB load s", lambda f: results.get(f"load@{f}", {}).get("seconds"), "linear"),
        ("KB load peak RSS MB", lambda f: results.get(f"load@{f}", {}).get("peak_rss_mb"), "linear"),
    ]
    lat = latency_of(results, factors)
    for m in lat.get(base, {}):
        qty.append((f"p50 ms: {m}", lambda f, m=m: lat.get(f, {}).get(m, {}).get("p50_ms"), "sublinear"))
    rows = []
    for name, get, kind in qty:
        vals = [get(f) for f in factors]
        if vals[0] is None:
            continue
        cells = " | ".join("–" if v is None else ms_text(v) for v in vals)
        ratios = " | ".join(ratio_text(v, vals[0]) for v in vals[1:])
        have = [(f, v) for f, v in zip(factors, vals, strict=True) if v is not None]
        verdict = growth(have[-1][1] / vals[0], have[-1][0], kind) if len(have) > 1 and vals[0] > 0 else "–"
        rows.append(f"| {name} | {cells} | {ratios} | {verdict} |")
    return rows


def render(args, results: dict) -> str:  # noqa: ANN001 - the suite's parsed arguments
    """The whole benchmarks_scale.md text."""
    factors = sorted(args.factors)
    fx = " | ".join(f"{f}×" for f in factors)
    out = [*_head(args, results, factors), *synthetic_table(results, factors)]
    out += [
        "",
        "## How each quantity grows",
        "",
        "Ratios to 1×. Verdict on the largest factor: ingest/memory 'linear' when the ratio is within "
        "±25% of the factor; latency 'sub-linear' when it is below 0.75× the factor.",
        "",
        f"| quantity | {fx} | " + " | ".join(f"{f}×/1×" for f in factors[1:]) + " | growth |",
        "|---|" + "---|" * (2 * len(factors)) + "",
    ]
    out += _growth_rows(results, factors)
    out += ingest_table(results, factors)
    out += load_table(results, factors)
    out += latency_table(results, factors)
    out += server_table(results, sorted(args.neo4j_factors))
    return "\n".join(out) + "\n"


def _head(args, results: dict, factors: list[int]) -> list[str]:  # noqa: ANN001
    """The page's header: the command, date, commit, machine and how the stages ran."""
    cmd = (
        f"nice -n {args.nice} python -m benchmarks scale --factors {','.join(map(str, factors))}"
        + (f" --neo4j-factors {','.join(map(str, args.neo4j_factors))}" if args.neo4j_factors else "")
        + f" --embed-factors {','.join(map(str, args.embed_factors))} --questions {args.questions}"
        + f" --jobs {args.jobs}"
    )
    notes = [
        f"Stages cached in `{args.work}/results.json`; a re-run skips finished stages.",
        f"Shared with other jobs: 1-minute load average {_loads(results)} across the stages (each stage's own "
        "load is in results.json). Every stage ran in a fresh `nice`-d interpreter; peak RSS is that "
        "interpreter's `ru_maxrss`."
        + (
            f" The ingests above 1× and the resume demo ran side by side (`--jobs {args.jobs}`), so their "
            "times include each other's load."
            if args.jobs > 1
            else ""
        ),
    ]
    return header(f"Scale: synthetic {' / '.join(f'{f}×' for f in factors)} MetaQA", cmd, provenance(), notes)


KEEP = "<!-- hand-written findings below this line are kept when the command rewrites the file -->"


def write_report(args, results: dict) -> None:
    """Rewrite ``args.out`` from the results, keeping whatever follows :data:`KEEP` in the old file."""
    write_above(Path(args.out), render(args, results), KEEP)
