"""Markdown report of the scale benchmark, from the results recorded in the work dir."""

from __future__ import annotations

from pathlib import Path

from hybridrag.evals.markdown import header, provenance, write_above


def _ratio(v: float | None, base: float | None) -> str:
    return f"{v / base:.2f}×" if v is not None and base else "–"


def _num(v, fmt: str = ".2f") -> str:
    return "–" if v is None else format(v, fmt)


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


def _ingest(results: dict, f: int) -> dict:
    return results.get(f"ingest@{f}") or results.get(f"ingest-replicated@{f}") or {}


def _real(results: dict, f: int) -> dict:
    ing = _ingest(results, f)
    return ing if ing.get("embedding") == "real" else {}


def _no_encode(results: dict, f: int) -> float | None:
    ing = _ingest(results, f)
    parts = [ing.get(k) for k in ("parse_s", "graph_s", "indexes_s")]
    return sum(parts) if all(p is not None for p in parts) else None


def _ms(v: float) -> str:
    return f"{v:.2f}" if v < 10 else f"{v:.1f}"


def _growth_rows(results: dict, factors: list[int]) -> list[str]:
    base = factors[0]
    qty = [
        ("graph ingest s", lambda f: results.get(f"graph@{f}", {}).get("seconds"), "linear"),
        ("graph ingest CPU s", lambda f: results.get(f"graph@{f}", {}).get("cpu_s"), "linear"),
        ("graph ingest peak RSS MB", lambda f: results.get(f"graph@{f}", {}).get("peak_rss_mb"), "linear"),
        ("full ingest s (real encode only)", lambda f: _real(results, f).get("seconds"), "linear"),
        ("ingest s without the encode (parse + graph + indexes)", lambda f: _no_encode(results, f), "linear"),
        ("full ingest peak RSS MB", lambda f: _ingest(results, f).get("peak_rss_mb"), "linear"),
        ("FAISS build s (inside the ingests)", lambda f: _ingest(results, f).get("faiss_build"), "linear"),
        (
            "FAISS build s (alone, one factor at a time)",
            lambda f: results.get(f"index@{f}", {}).get("seconds"),
            "linear",
        ),
        ("KB load s", lambda f: results.get(f"load@{f}", {}).get("seconds"), "linear"),
        ("KB load peak RSS MB", lambda f: results.get(f"load@{f}", {}).get("peak_rss_mb"), "linear"),
    ]
    lat = _latency(results, factors)
    for m in lat.get(base, {}):
        qty.append((f"p50 ms: {m}", lambda f, m=m: lat.get(f, {}).get(m, {}).get("p50_ms"), "sublinear"))
    rows = []
    for name, get, kind in qty:
        vals = [get(f) for f in factors]
        if vals[0] is None:
            continue
        cells = " | ".join("–" if v is None else _ms(v) for v in vals)
        ratios = " | ".join(_ratio(v, vals[0]) for v in vals[1:])
        have = [(f, v) for f, v in zip(factors, vals, strict=True) if v is not None]
        verdict = growth(have[-1][1] / vals[0], have[-1][0], kind) if len(have) > 1 and vals[0] > 0 else "–"
        rows.append(f"| {name} | {cells} | {ratios} | {verdict} |")
    return rows


def render(args, results: dict) -> str:
    """The whole benchmarks_scale.md text."""
    factors = sorted(args.factors)
    fx = " | ".join(f"{f}×" for f in factors)
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
    out = [
        *header(f"Scale: synthetic {' / '.join(f'{f}×' for f in factors)} MetaQA", cmd, provenance(), notes),
        "**Synthetic KBs.** Copy 1 is MetaQA's kb.txt; copy c ≥ 2 renames every entity `X` to `X #c` "
        "and keeps the relations. The copies are **not connected** (no shared entity), so a question "
        "about copy c has exactly the neighbourhood it has in MetaQA, and growth measures what the rest "
        "of the KB costs. Questions: dev 1/2/3-hop, topic renamed to a random copy.",
        "",
        "| factor | entities | triples | embeddings |",
        "|---|---|---|---|",
    ]
    for f in factors:
        g, ing = results.get(f"graph@{f}", {}), _ingest(results, f)
        emb = ing.get("embedding", "–")
        if emb == "replicated":
            emb = (
                f"replicated: 1× real vectors + seeded noise σ={ing['sigma']:.4f}/dim, matched to the measured "
                f"mean cosine {ing['copy_cosine_measured']:.3f} between 1,000 MetaQA names and their "
                "`#2` copies, both encoded with MiniLM; encode time not measured"
            )
        out.append(f"| {f}× | {g.get('entities', 0):,} | {g.get('triples', 0):,} | {emb} |")
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
    out += [
        "",
        "## Ingest",
        "",
        "| factor | graph-only ingest s (fastest of the runs) | its CPU s | graph RSS MB | full ingest s | "
        "parse s | graph s | embed s | "
        "FAISS build s (index) | BM25 build s | full ingest RSS MB | load during |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for f in factors:
        g, i = results.get(f"graph@{f}", {}), _ingest(results, f)
        out.append(
            f"| {f}× | {_num(g.get('seconds'))} (best of {len(g.get('runs_s', [0]))}) | "
            f"{_num(g.get('cpu_s'))} | {_num(g.get('peak_rss_mb'), '.0f')} | "
            f"{_num(i.get('seconds'), '.1f')} | {_num(i.get('parse_s'))} | {_num(i.get('graph_s'))} | "
            f"{_num(i.get('embed_s'), '.1f')}{' (replicated)' if i.get('embedding') == 'replicated' else ''} | "
            f"{_num(i.get('faiss_build'), '.1f')} ({i.get('faiss_type', '–')}) | {_num(i.get('bm25_build'))} | "
            f"{_num(i.get('peak_rss_mb'), '.0f')} | {_num(i.get('load_before'), '.1f')}–"
            f"{_num(i.get('load_after'), '.1f')} |"
        )
    rs = next((v | {"factor": k.split("@")[1]} for k, v in results.items() if k.startswith("resume@")), None)
    if rs:
        out += [
            "",
            f"**Resumable embedding** ({rs['factor']}×): a full ingest was SIGKILLed once "
            f"{rs['saved_at_kill']} of its embedding chunks were saved; the re-run reused {rs['reused']} of "
            f"{rs['total_chunks']} chunks and embedded {rs['re_embedded']} (ingest {rs['resumed_ingest_s']:.1f} s, "
            f"of which embedding {rs['resumed_embed_s']:.1f} s).",
        ]
    out += [
        "",
        "## KB load and dense index",
        "",
        "| factor | KB load s | load RSS MB | encoder load s | FAISS index | rows | efSearch | recall@10 vs exact "
        "(1,000 dev questions) | index search p50 ms | exact search p50 ms |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for f in factors:
        ld, d = results.get(f"load@{f}", {}), results.get(f"dense@{f}", {})
        out.append(
            f"| {f}× | {_num(ld.get('seconds'))} | {_num(ld.get('peak_rss_mb'), '.0f')} | "
            f"{_num(ld.get('encoder_load_s'))} | {d.get('index_type', '–')} | {d.get('rows', 0):,} | "
            f"{d.get('ef_search', '128 (fixed)')} | {_num(d.get('recall_at_10'), '.3f')} | "
            f"{_num(d.get('index_search', {}).get('p50_ms'))} | "
            f"{_num(d.get('exact_search', {}).get('p50_ms'))} |"
        )
    out += _latency_table(results, factors)
    out += _server_table(results, sorted(args.neo4j_factors))
    return "\n".join(out) + "\n"


def _latency(results: dict, factors: list[int]) -> dict:
    """{factor: {module: percentiles}} from the interleaved latency stage."""
    res = results.get(f"latency@{max(factors)}", {})
    return {f: res.get("by_factor", {}).get(str(f), {}) for f in factors}


def _latency_table(results: dict, factors: list[int]) -> list[str]:
    lat = _latency(results, factors)
    n = results.get(f"latency@{max(factors)}", {}).get("questions", 0)
    out = [
        "",
        "## Per-question latency of every retrieval module",
        "",
        f"{n} dev questions per factor ({n // 3} each of 1, 2, 3 hops), one at a time after two warm-up calls, "
        "the factors interleaved question by question in one process (a change in load hits all alike); "
        "query embedding included wherever the module embeds; LLM decisions replaced by gold "
        "(`benchmarks/scale/modules.py`). p50 / p95 ms.",
        "",
        "| module | " + " | ".join(f"{f}× p50 / p95" for f in factors) + " |",
        "|---|" + "---|" * len(factors),
    ]
    for m in lat[factors[0]]:
        cells = [lat[f].get(m) for f in factors]
        out.append(
            f"| {m} | " + " | ".join(f"{_ms(c['p50_ms'])} / {_ms(c['p95_ms'])}" if c else "–" for c in cells) + " |"
        )
    return out


def _server_table(results: dict, factors: list[int]) -> list[str]:
    if not factors:
        return []
    out = [
        "",
        "## Graph on a server: FalkorDB over Bolt (`neo4j` driver)",
        "",
        'Export = `kb.graph_backends.export_graph("neo4j", uri, store)`, the step `hybridrag ingest '
        "--neo4j URI` runs after building the graph. Reads: p50 / p95 ms per question, same questions, "
        "on the server vs the in-memory store of the same build in the same process.",
        "",
        "| factor | export s | server peak RSS MB | read / module | server p50 / p95 | memory p50 / p95 "
        "| server/memory p50 |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in factors:
        s = results.get(f"server@{f}")
        if not s:
            continue
        for i, (m, v) in enumerate(s["server"].items()):
            mem = s["memory"][m]
            head = (
                f"| {f}× | {s['export_s']:.1f} | {_num(s.get('server_peak_rss_mb'), '.0f')} |" if i == 0 else "| | | |"
            )
            out.append(
                f"{head} {m} | {_ms(v['p50_ms'])} / {_ms(v['p95_ms'])} | {_ms(mem['p50_ms'])} / "
                f"{_ms(mem['p95_ms'])} | {_ratio(v['p50_ms'], mem['p50_ms'])} |"
            )
    return out


KEEP = "<!-- hand-written findings below this line are kept when the command rewrites the file -->"


def write_report(args, results: dict) -> None:
    """Rewrite ``args.out`` from the results, keeping whatever follows :data:`KEEP` in the old file."""
    write_above(Path(args.out), render(args, results), KEEP)
