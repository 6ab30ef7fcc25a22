"""Markdown report of the Prime-sized benchmark (docs/benchmarks_prime.md), from the recorded results."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.scale.report import KEEP
from hybridrag.evals.markdown import header, provenance, write_above

COMMAND = "nice -n 10 python -m benchmarks prime"  # stages run under nice -n 15 (--nice)


def _f(v, digits: int = 2) -> str:
    if v is None:
        return "–"
    if isinstance(v, int):
        return f"{v:,}"
    return f"{v:.{digits}f}" if abs(v) < 10 else f"{v:,.1f}"


def _ratio(a, b) -> str:
    return f"{a / b:.2f}×" if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else "–"


def _load(r: dict) -> str:
    lb, la = r.get("load_before"), r.get("load_after")
    return "–" if lb is None else f"{lb:.1f}–{la:.1f}"


def _rows(results: dict, scale: dict) -> list[str]:
    g = {k: results.get(f"graph@{k}", {}) for k in ("metaqa1", "prime")}
    gl = {k: results.get(f"graph-load@{k}", {}) for k in ("metaqa1", "prime")}
    ld = {k: results.get(f"load@{k}", {}) for k in ("metaqa1", "prime")}
    ing, base_ing = results.get("ingest@prime", {}), scale.get("ingest@1", {})
    rows = [
        ("entities", g["metaqa1"].get("entities"), g["prime"].get("entities"), "this run", ""),
        ("triples (edges)", g["metaqa1"].get("triples"), g["prime"].get("triples"), "this run", ""),
        (
            "graph-only ingest s (`build_graph`, one run)",
            g["metaqa1"].get("seconds"),
            g["prime"].get("seconds"),
            "this run",
            _load(g["prime"]),
        ),
        ("graph-only ingest CPU s", g["metaqa1"].get("cpu_s"), g["prime"].get("cpu_s"), "this run", ""),
        (
            "graph-only ingest peak RSS MB",
            g["metaqa1"].get("peak_rss_mb"),
            g["prime"].get("peak_rss_mb"),
            "this run",
            "",
        ),
        (
            "graph load s (`InMemoryGraphStore.load`)",
            gl["metaqa1"].get("seconds"),
            gl["prime"].get("seconds"),
            "this run",
            _load(gl["prime"]),
        ),
        (
            "both-ways index s (first ego graph)",
            gl["metaqa1"].get("both_index_s"),
            gl["prime"].get("both_index_s"),
            "this run",
            "",
        ),
        ("graph load peak RSS MB", gl["metaqa1"].get("peak_rss_mb"), gl["prime"].get("peak_rss_mb"), "this run", ""),
        ("full ingest s", base_ing.get("seconds"), ing.get("seconds"), "1×: scale run", _load(ing)),
        ("  parse s", base_ing.get("parse_s"), ing.get("parse_s"), "1×: scale run", ""),
        ("  graph s", base_ing.get("graph_s"), ing.get("graph_s"), "1×: scale run", ""),
        ("  encode entity names s (MiniLM)", base_ing.get("embed_s"), ing.get("embed_s"), "1×: scale run", ""),
        ("  indexes s (docs, BM25, FAISS)", base_ing.get("indexes_s"), ing.get("indexes_s"), "1×: scale run", ""),
        ("  FAISS build s", base_ing.get("faiss_build"), ing.get("faiss_build"), "1×: scale run", ""),
        ("full ingest peak RSS MB", base_ing.get("peak_rss_mb"), ing.get("peak_rss_mb"), "1×: scale run", ""),
        (
            "KB load s (graph, docs, FAISS, BM25)",
            ld["metaqa1"].get("seconds"),
            ld["prime"].get("seconds"),
            "this run",
            _load(ld["prime"]),
        ),
        ("KB load peak RSS MB", ld["metaqa1"].get("peak_rss_mb"), ld["prime"].get("peak_rss_mb"), "this run", ""),
    ]
    out = [
        "| quantity | MetaQA 1× | Prime | Prime / 1× | 1× measured in | load during the Prime stage |",
        "|---|---|---|---|---|---|",
    ]
    for name, a, b, where, load in rows:
        if a is None and b is None:
            continue
        out.append(f"| {name} | {_f(a)} | {_f(b)} | {_ratio(b, a)} | {where} | {load} |")
    return out


def _latency(results: dict) -> list[str]:
    runs = [v for k, v in sorted(results.items()) if k.startswith("latency@") and isinstance(v, dict)]
    if not runs:
        return ["Not measured (no latency stage has a result)."]
    return [line for lat in runs for line in (*_latency_run(lat), "")]


def _latency_run(lat: dict) -> list[str]:
    by = lat.get("by_kb", {})
    if not by:
        return [f"Hops {lat.get('hops')}: stopped ({lat.get('aborted', 'no result')})."]
    hops = " and ".join(map(str, lat.get("hops", [1, 2, 3])))
    out = [
        f"### {hops} hops",
        "",
        f"{lat['questions']} questions per KB ({hops} hops, equally many each), one at a time after two "
        "warm-up calls, the two KBs interleaved question by question in one process; LLM decisions "
        "replaced by gold; "
        f"load {_load(lat)}. p50 / p95 ms.",
        "",
        "| module | MetaQA 1× p50 / p95 | Prime p50 / p95 | Prime / 1× p50 |",
        "|---|---|---|---|",
    ]
    for m, a in by.get("metaqa1", {}).items():
        b = by.get("prime", {}).get(m, {})
        out.append(
            f"| {m} | {_f(a['p50_ms'])} / {_f(a['p95_ms'])} | {_f(b.get('p50_ms'))} / "
            f"{_f(b.get('p95_ms'))} | {_ratio(b.get('p50_ms'), a['p50_ms'])} |"
        )
    return out


def _graph_section(results: dict) -> list[str]:
    """The synthetic graph: its size, shape, degrees and the source files."""
    syn = results.get("synth@prime", {})
    deg = syn.get("degree", {})
    return [
        "## The graph",
        "",
        f"{syn.get('entities', 0):,} entities, {syn.get('edges', 0):,} distinct edges, {syn.get('types')} entity "
        f"types, {syn.get('relations')} relation types: the sizes of STaRK PRIME in the MoR paper (Table 7: "
        "129,375 entities, 8,100,498 relations, average degree 125.2; App. B.1: ten entity types, eighteen "
        "relation types, after PrimeKG). Type and relation names: `benchmarks/scale/prime_synth.py`; type sizes "
        "and relation shares are seeded draws (the papers do not give them). Degrees: Chung-Lu with entity "
        f"weights 1 + Lomax(2), seed {syn.get('seed')}: mean {_f(deg.get('mean'))}, median {_f(deg.get('p50'))}, "
        f"p90 {_f(deg.get('p90'))}, p99 {_f(deg.get('p99'))}, p99.9 {_f(deg.get('p999'))}, max "
        f"{_f(deg.get('max'))}, isolated {_f(deg.get('isolated'))}. Source written in {_f(syn.get('seconds'))} s "
        f"(peak RSS {_f(syn.get('peak_rss_mb'))} MB, load {_load(syn)}): "
        + ", ".join(f"`{k}` {v / 2**20:,.0f} MB" for k, v in syn.get("bytes", {}).items())
        + ".",
        "",
        "Type sizes: " + ", ".join(f"{k} {v:,}" for k, v in syn.get("type_sizes", {}).items()) + ".",
        "",
    ]


def render(args, results: dict) -> str:  # noqa: ANN001 - the suite's parsed arguments
    """The whole benchmarks_prime.md text."""
    scale_file = Path(args.scale_work) / "results.json"
    scale = json.loads(scale_file.read_text()) if scale_file.exists() else {}

    def g1(key: str, field: str):
        return results.get(f"graph@{key}", {}).get(field)

    aborted = [
        f"- `{k}` stopped itself: {v['aborted']} (RSS {v['rss_mb']:.0f} MB)"
        for k, v in results.items()
        if isinstance(v, dict) and "aborted" in v
    ]
    lines = [
        *header(
            "Scale: a STaRK-Prime-sized graph",
            COMMAND,
            provenance(),
            [
                f"Stages cached in `{args.work}/results*.json`; a re-run skips finished stages.",
                f"Shared with other jobs. Every stage ran in a fresh `nice -n {args.nice}` interpreter; peak RSS is "
                "its `ru_maxrss`; the load average (1 min) before–after each stage is in the tables.",
            ],
        ),
        *_graph_section(results),
        "## Ingest and load",
        "",
        f"MetaQA 1× is MetaQA's kb.txt; Prime has {_ratio(g1('prime', 'entities'), g1('metaqa1', 'entities'))} "
        f"its entities and {_ratio(g1('prime', 'triples'), g1('metaqa1', 'triples'))} its triples. The 1× full "
        "ingest is the scale benchmark's (`docs/benchmarks_scale.md`, a different run, its own load); every "
        "other 1× number is from this run.",
        "",
        *_rows(results, scale),
        "",
        "## Per-question latency of the retrieval modules",
        "",
        "Questions on Prime: random walks of 1, 2 and 3 hops from seeded random entities "
        "(`benchmarks/scale/prime_questions.py`), the walk's relations as the gold path; on MetaQA 1×: dev "
        "questions, as the scale benchmark samples them.",
        "",
        *_latency(results),
        "",
        *(["## Stopped stages", "", *aborted, ""] if aborted else []),
    ]
    return "\n".join(lines)


def write_report(args, results: dict) -> None:
    """Rewrite ``args.out`` from the results, keeping whatever follows the KEEP marker in the old file."""
    write_above(Path(args.out), render(args, results), KEEP)
