"""The tables of the scale report: synthetic KBs, ingest, KB load and dense index, latency, graph server."""

from __future__ import annotations


def num_text(v, fmt: str = ".2f") -> str:  # noqa: ANN001
    """A number in ``fmt``, or a dash for None."""
    return "–" if v is None else format(v, fmt)


def ms_text(v: float) -> str:
    """Milliseconds to two decimals below 10, else one."""
    return f"{v:.2f}" if v < 10 else f"{v:.1f}"


def ratio_text(v: float | None, base: float | None) -> str:
    """``v / base`` as ``1.23×``, or a dash."""
    return f"{v / base:.2f}×" if v is not None and base else "–"


def ingest_of(results: dict, f: int) -> dict:
    """The ingest result of factor ``f`` (real or replicated vectors)."""
    return results.get(f"ingest@{f}") or results.get(f"ingest-replicated@{f}") or {}


def synthetic_table(results: dict, factors: list[int]) -> list[str]:
    """What the synthetic KBs are, and one row per factor: entities, triples, embeddings."""
    out = [
        "**Synthetic KBs.** Copy 1 is MetaQA's kb.txt; copy c ≥ 2 renames every entity `X` to `X #c` "
        "and keeps the relations. The copies are **not connected** (no shared entity), so a question "
        "about copy c has exactly the neighbourhood it has in MetaQA, and growth measures what the rest "
        "of the KB costs. Questions: dev 1/2/3-hop, topic renamed to a random copy.",
        "",
        "| factor | entities | triples | embeddings |",
        "|---|---|---|---|",
    ]
    for f in factors:
        g, ing = results.get(f"graph@{f}", {}), ingest_of(results, f)
        emb = ing.get("embedding", "–")
        if emb == "replicated":
            emb = (
                f"replicated: 1× real vectors + seeded noise σ={ing['sigma']:.4f}/dim, matched to the measured "
                f"mean cosine {ing['copy_cosine_measured']:.3f} between 1,000 MetaQA names and their "
                "`#2` copies, both encoded with MiniLM; encode time not measured"
            )
        out.append(f"| {f}× | {g.get('entities', 0):,} | {g.get('triples', 0):,} | {emb} |")
    return out


def ingest_table(results: dict, factors: list[int]) -> list[str]:
    """Graph-only and full ingest per factor, and the killed-and-resumed ingest."""
    out: list[str] = []
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
        g, i = results.get(f"graph@{f}", {}), ingest_of(results, f)
        out.append(
            f"| {f}× | {num_text(g.get('seconds'))} (best of {len(g.get('runs_s', [0]))}) | "
            f"{num_text(g.get('cpu_s'))} | {num_text(g.get('peak_rss_mb'), '.0f')} | "
            f"{num_text(i.get('seconds'), '.1f')} | {num_text(i.get('parse_s'))} | {num_text(i.get('graph_s'))} | "
            f"{num_text(i.get('embed_s'), '.1f')}{' (replicated)' if i.get('embedding') == 'replicated' else ''} | "
            f"{num_text(i.get('faiss_build'), '.1f')} ({i.get('faiss_type', '–')}) | {num_text(i.get('bm25_build'))} | "
            f"{num_text(i.get('peak_rss_mb'), '.0f')} | {num_text(i.get('load_before'), '.1f')}–"
            f"{num_text(i.get('load_after'), '.1f')} |"
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
    return out


def load_table(results: dict, factors: list[int]) -> list[str]:
    """KB load and the dense index's recall and search time per factor."""
    out: list[str] = []
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
            f"| {f}× | {num_text(ld.get('seconds'))} | {num_text(ld.get('peak_rss_mb'), '.0f')} | "
            f"{num_text(ld.get('encoder_load_s'))} | {d.get('index_type', '–')} | {d.get('rows', 0):,} | "
            f"{d.get('ef_search', '128 (fixed)')} | {num_text(d.get('recall_at_10'), '.3f')} | "
            f"{num_text(d.get('index_search', {}).get('p50_ms'))} | "
            f"{num_text(d.get('exact_search', {}).get('p50_ms'))} |"
        )
    return out


def latency_of(results: dict, factors: list[int]) -> dict:
    """{factor: {module: percentiles}} from the interleaved latency stage."""
    res = results.get(f"latency@{max(factors)}", {})
    return {f: res.get("by_factor", {}).get(str(f), {}) for f in factors}


def latency_table(results: dict, factors: list[int]) -> list[str]:
    """p50 / p95 of every retrieval module at every factor."""
    lat = latency_of(results, factors)
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
            f"| {m} | "
            + " | ".join(f"{ms_text(c['p50_ms'])} / {ms_text(c['p95_ms'])}" if c else "–" for c in cells)
            + " |"
        )
    return out


def server_table(results: dict, factors: list[int]) -> list[str]:
    """Export time, server memory and read latency on a graph server against memory, per factor."""
    if not factors:
        return []
    out = [
        "",
        "## Graph on a server: FalkorDB over Bolt (`neo4j` driver)",
        "",
        'Export = `kb.graph_backends.export_graph("neo4j", uri, store)`, the step `hybridrag ingest '
        "--neo4j URI` runs after building the graph. Reads: p50 / p95 ms per question, same questions, "
        "on the server vs the in-memory store of the same build in the same process; a whole question is "
        "its method's modules chained (other questions than the modules', `benchmarks/scale/modules.py` "
        "`whole_questions`); same = questions whose result on the server equals memory's.",
        "",
        "| factor | export s | server peak RSS MB | load | read / module | server p50 / p95 | memory p50 / p95 "
        "| server/memory p50 / p95 | same |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for f in factors:
        s = results.get(f"server@{f}")
        if not s:
            continue
        same = s.get("same_as_memory", {})
        rows = sorted(s["server"].items(), key=lambda kv: kv[0].endswith("whole question"))
        for i, (m, v) in enumerate(rows):
            mem = s["memory"][m]
            load = f"{num_text(s.get('load_before'), '.1f')} → {num_text(s.get('load_after'), '.1f')}"
            head = (
                f"| {f}× | {s['export_s']:.1f} | {num_text(s.get('server_peak_rss_mb'), '.0f')} | {load} |"
                if i == 0
                else "| | | | |"
            )
            agree = f"{same[m][0]} / {same[m][1]}" if m in same else "–"
            out.append(
                f"{head} {m} | {ms_text(v['p50_ms'])} / {ms_text(v['p95_ms'])} | {ms_text(mem['p50_ms'])} / "
                f"{ms_text(mem['p95_ms'])} | {ratio_text(v['p50_ms'], mem['p50_ms'])} / "
                f"{ratio_text(v['p95_ms'], mem['p95_ms'])} | {agree} |"
            )
    return out + quick_ack_table(results, factors)


def quick_ack_table(results: dict, factors: list[int]) -> list[str]:
    """Two server reads with and without quick ACKs (kb/bolt_quick_ack.py), per factor."""
    rows = [(f, results[f"server@{f}"]["quick_ack"]) for f in factors if "quick_ack" in results.get(f"server@{f}", {})]
    if not rows:
        return []
    out = [
        "",
        "Quick ACKs (`kb/bolt_quick_ack.py`), after the table above, alternating per question: the topic's "
        "neighbours, and the pools of its first 20 neighbours (one hop of SSRAG's walk, "
        "`CypherGraphStore.node_pools`); and SSRAG's graph branch over the whole-question rows' questions, "
        "each side with its own KB object and connection (its own caches). p50 / p95 ms:",
        "",
        "| factor | read | rows p50 | with quick ACKs | without | without / with p50 |",
        "|---|---|---|---|---|---|",
    ]
    for f, q in rows:
        for read in ("neighbours", "pools", "ssrag graph"):
            on, off = q.get(f"{read}, with"), q.get(f"{read}, without")
            if on is None or off is None:
                continue
            out.append(
                f"| {f}× | {read} | {q.get(f'{read} rows p50', '–')} | "
                f"{ms_text(on['p50_ms'])} / {ms_text(on['p95_ms'])} | "
                f"{ms_text(off['p50_ms'])} / {ms_text(off['p95_ms'])} | {ratio_text(off['p50_ms'], on['p50_ms'])} |"
            )
    return out
