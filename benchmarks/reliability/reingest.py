"""Re-ingests into a graph server must never break the KB that is answering.

``run(workdir)`` starts a local FalkorDB and, with real ``hybridrag`` subprocesses:

- ingests a 2-triple file with ``--neo4j`` (FalkorDB's Bolt endpoint), re-ingests another one
  twice, then asks (the new director must answer);
- ingests it with ``--falkordb redis://…?graph=films``, then re-ingests a file whose relation
  name a graph server refuses, then one killed (SIGKILL) as soon as the export changes anything on
  the server, asking after each: the first build must still answer;
- ingests a second KB naming the same graph ``films``: the first KB must not silently answer
  from the second one's graph (a refused ingest is fine).

``python -m benchmarks reliability --only reingest`` runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import ROOT
from benchmarks.reliability.ingest import write_inputs

QUESTION = "who directed Film 1"


def _env() -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HYBRIDRAG_GRAPH_TIMEOUT": "30"}
    env.pop("HYBRIDRAG_TEST_INGEST_HOLD", None)
    return env


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hybridrag.app.cli", *args],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )


def _tail(done: subprocess.CompletedProcess) -> str:
    lines = [x for x in (done.stdout + "\n" + done.stderr).replace("\r", "\n").splitlines() if x.strip()]
    err = [x for x in lines if x.startswith("error") or "Error" in x]
    return (err or lines or ["no output"])[-1].strip()[:160]


def _ask(kb: Path, want: str = "Old Director") -> tuple[bool, str]:
    """(answered with ``want``, what ``ask`` printed)."""
    done = _cli("ask", QUESTION, "--kb", str(kb))
    first = (done.stdout.strip().splitlines() or [""])[0]
    return done.returncode == 0 and want in first, f"exit {done.returncode}, {first or _tail(done)!r}"


def _triples(folder: Path, name: str, lines: list[str]) -> Path:
    path = folder / name
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return path


def _ingest(kb: Path, triples: Path, flag: str, uri: str) -> tuple[list[str], subprocess.CompletedProcess]:
    args = ["ingest", "--kb", str(kb), "--triples", str(triples), flag, uri, "--replace"]
    return args, _cli(*args)


def _snapshot(server) -> tuple:  # noqa: ANN001 - a kb.graph_local.FalkorDBServer
    """Every graph on the server with its node count."""
    out = []
    for name in sorted(n.decode() if isinstance(n, bytes) else n for n in server.command("GRAPH.LIST")):
        reply = server.command("GRAPH.QUERY", name, "MATCH (n) RETURN count(n)")
        out.append((name, reply[1][0][0] if reply and len(reply) > 1 and reply[1] else None))
    return tuple(out)


def _kill_during_export(args: list[str], server) -> str:  # noqa: ANN001
    """Run an ingest and SIGKILL it at the first change on the graph server; what happened."""
    before = _snapshot(server)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hybridrag.app.cli", *args],
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while proc.poll() is None:
        now = _snapshot(server)
        if now != before:
            proc.kill()
            proc.wait()
            return f"killed at the first change on the server ({json.dumps(before)} → {json.dumps(now)})"
        time.sleep(0.02)
    return f"the ingest finished (exit {proc.returncode}) before any change was seen"


def _bolt_rows(work: Path, server) -> list[dict]:  # noqa: ANN001
    old = _triples(work, "old.txt", ["Film 1|directed_by|Old Director", "Film 1|release_year|1999"])
    new = _triples(work, "new.txt", ["Film 1|directed_by|New Director", "Film 1|release_year|1999"])
    kb = work / "bolt-kb"
    a0, d0 = _ingest(kb, old, "--neo4j", server.uri)
    a1, d1 = _ingest(kb, new, "--neo4j", server.uri)
    _, d2 = _ingest(kb, new, "--neo4j", server.uri)
    ok, said = _ask(kb, "New Director")
    codes = [d.returncode for d in (d0, d1, d2)]
    return [
        {
            "probe": "--neo4j (FalkorDB's Bolt): re-ingest of another 2-triple file, twice, then ask",
            "command": f"hybridrag {' '.join(a0)}; hybridrag {' '.join(a1)} (twice); hybridrag ask {QUESTION!r} "
            f"--kb {kb}",
            "result": f"ingests: exit {', '.join(map(str, codes))} ({_tail(d2)}); ask: {said}",
            "ok": codes == [0, 0, 0] and ok,
        }
    ]


def _falkordb_rows(work: Path, server) -> list[dict]:  # noqa: ANN001
    old = _triples(work, "old.txt", ["Film 1|directed_by|Old Director", "Film 1|release_year|1999"])
    bad = _triples(work, "bad.txt", ["Film 1|directed by|Bad Director", "Film 2|has-genre|Drama"])
    other = _triples(work, "other.txt", ["Film 1|directed_by|Other Director", "Film 9|release_year|2001"])
    new = write_inputs(work / "new", "New Director", 300)
    kb, uri = work / "falkor-kb", f"{server.redis_uri}?graph=films"
    first, done = _ingest(kb, old, "--falkordb", uri)
    if done.returncode != 0:
        return [
            {
                "probe": "--falkordb ?graph=films: first ingest",
                "command": "hybridrag " + " ".join(first),
                "result": f"exit {done.returncode}: {_tail(done)}",
                "ok": False,
            }
        ]
    rows = []
    args, done = _ingest(kb, bad, "--falkordb", uri)
    ok, said = _ask(kb)
    rows.append(
        {
            "probe": "--falkordb ?graph=films: a re-ingest with relation names a graph server refuses",
            "command": f"hybridrag {' '.join(first)}; hybridrag {' '.join(args)}; hybridrag ask {QUESTION!r} --kb {kb}",
            "result": f"re-ingest: exit {done.returncode} ({_tail(done)}); ask: {said}",
            "ok": ok,
        }
    )
    args = ["ingest", "--kb", str(kb), "--triples", str(new), "--falkordb", uri, "--replace"]
    what = _kill_during_export(args, server)
    ok, said = _ask(kb)
    rows.append(
        {
            "probe": "--falkordb ?graph=films: a re-ingest killed -9 during the export",
            "command": f"hybridrag {' '.join(args)}; kill -9 at the first change on the server; "
            f"hybridrag ask {QUESTION!r} --kb {kb}",
            "result": f"{what}; ask: {said}",
            "ok": ok,
        }
    )
    kb2 = work / "falkor-kb2"
    args, done = _ingest(kb2, other, "--falkordb", uri)
    ok, said = _ask(kb)
    _, said2 = _ask(kb2)
    rows.append(
        {
            "probe": "--falkordb: a second KB naming the same graph (?graph=films)",
            "command": f"hybridrag {' '.join(args)}; hybridrag ask {QUESTION!r} --kb {kb}",
            "result": f"second ingest: exit {done.returncode} ({_tail(done)}); first KB: {said}; second KB: {said2}",
            "ok": ok,
        }
    )
    return rows


def run(workdir: Path) -> list[dict]:
    """Start FalkorDB under ``workdir``, run every re-ingest probe, stop it; the rows."""
    from hybridrag.kb.graph_local import FalkorDBServer

    workdir.mkdir(parents=True, exist_ok=True)
    with FalkorDBServer(workdir / "falkordb") as server:
        (workdir / "bolt").mkdir()
        (workdir / "falkor").mkdir()
        return _bolt_rows(workdir / "bolt", server) + _falkordb_rows(workdir / "falkor", server)
