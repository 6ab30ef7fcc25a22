"""`hybridrag ingest` killed with SIGKILL during each stage, with the real embedding model.

Each ingest runs as a subprocess; ``HYBRIDRAG_TEST_INGEST_HOLD`` stops it at the end of a
stage's work (kb/ingest_state.py), the test sees the ``held`` file and kills it with SIGKILL.
Checked after every kill: a re-ingest leaves the previous KB answering (old answer, parts in
agreement); a first ingest leaves a directory every command refuses as incomplete; a second
ingest into the same directory is refused while one runs; the re-run reuses the embedding
chunks the killed run finished; a reader opened during a re-ingest sees the old build.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hybridrag.app.cli import main
from hybridrag.kb.base import KnowledgeBase, open_kb
from hybridrag.kb.ingest import ingest
from hybridrag.kb.model import KBError

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CHUNK = 10  # 79 documents: 8 chunks
HOLD_TIMEOUT = 180


def _inputs(folder: Path, director: str) -> list[Path]:
    """30 films (79 entity documents: 8 chunks); 'Film 1' is directed by ``director``."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        f"Film {i}|directed_by|{director if i == 1 else f'Director {i % 7}'}\n"
        f"Film {i}|release_year|{1950 + i}\nFilm {i}|starred_actors|Actor {i % 11}\n"
        for i in range(1, 31)
    ]
    (folder / "t.txt").write_text("".join(rows), encoding="utf-8")
    return [folder / "t.txt"]


def _env(hold: str | None = None) -> dict:
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HYBRIDRAG_EMBED_CHUNK": str(CHUNK),
        "HYBRIDRAG_TEST_INGEST_HOLD_SECONDS": str(HOLD_TIMEOUT),
        "PYTHONPATH": str(ROOT),
    }
    env.pop("HYBRIDRAG_TEST_INGEST_HOLD", None)
    return {**env, "HYBRIDRAG_TEST_INGEST_HOLD": hold} if hold else env


def _ingest_cmd(kb: Path, triples: list[Path]) -> list[str]:
    cmd = [sys.executable, "-m", "hybridrag.app.cli", "ingest", "--kb", str(kb), "--triples", *map(str, triples)]
    return [*cmd, "--replace"]  # a re-ingest replaces the KB: said explicitly (issue 28 item 2)


def _start_held(kb: Path, triples: list[Path], hold: str) -> subprocess.Popen:
    """Start an ingest that stops at ``hold``; return once it is there."""
    proc = subprocess.Popen(
        _ingest_cmd(kb, triples), cwd=ROOT, env=_env(hold), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    held = kb / ".ingest-work" / "held"
    deadline = time.monotonic() + HOLD_TIMEOUT
    while _held_by(held) != proc.pid:
        if proc.poll() is not None:
            pytest.fail(f"ingest ended before reaching {hold} (exit {proc.returncode}): {proc.stderr.read()[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"ingest did not reach {hold} within {HOLD_TIMEOUT}s")
        time.sleep(0.1)
    return proc


def _held_by(held: Path) -> int | None:
    """Pid in the ``held`` file (an earlier, killed run's file names another pid)."""
    try:
        return json.loads(held.read_text(encoding="utf-8"))["pid"]
    except (OSError, ValueError, KeyError):
        return None


def _kill(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    proc.stdout.close()
    proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL


def _answer(kb: Path, capsys) -> str:
    capsys.readouterr()
    assert main(["ask", "who directed Film 1", "--kb", str(kb), "--json"]) == 0
    return json.loads(capsys.readouterr().out)["answer"]


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    """In-process ingests use the same chunk size as the subprocesses (so chunks are reused)."""
    monkeypatch.setenv("HYBRIDRAG_EMBED_CHUNK", str(CHUNK))


def test_killed_reingest_leaves_the_previous_kb_answering_at_every_stage(tmp_path, capsys):
    kb = tmp_path / "kb"
    ingest(kb, _inputs(tmp_path / "old", "Old Director"), progress=False)
    old = KnowledgeBase(kb)
    assert _answer(kb, capsys) == "Old Director"
    new = _inputs(tmp_path / "new", "New Director")
    for hold in ("parse", "graph", "embeddings:4", "indexes"):
        proc = _start_held(kb, new, hold)
        during = KnowledgeBase(kb)  # a reader while the new build is being written
        _kill(proc)
        after = KnowledgeBase(kb)
        for seen in (during, after):
            assert seen.build_dir == old.build_dir, hold
            assert len(seen.docs) == seen.dense.index.ntotal == old.dense.index.ntotal, hold
        assert _answer(kb, capsys) == "Old Director", hold
    report = ingest(kb, new, progress=False)  # everything was embedded before the kill at 'indexes'
    assert report.embed_chunks_reused == report.embed_chunks == 8
    assert open_kb(kb).build_dir != old.build_dir and _answer(kb, capsys) == "New Director"
    assert not (kb / ".ingest-work").exists() and not list((kb / "builds").glob("*.partial"))


def test_killed_first_ingest_is_refused_then_resumed_and_a_second_ingest_waits_its_turn(tmp_path, capsys):
    kb = tmp_path / "kb"
    triples = _inputs(tmp_path / "in", "Some Director")
    proc = _start_held(kb, triples, "embeddings:5")
    rival = subprocess.run(_ingest_cmd(kb, triples), cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120)
    assert rival.returncode == 2
    assert rival.stderr.strip().splitlines()[-1].startswith(f"error: another ingest is writing KB {kb} (pid ")
    _kill(proc)
    with pytest.raises(KBError, match="incomplete KB .*stage 'embeddings'.*re-run"):
        KnowledgeBase(kb)
    capsys.readouterr()
    assert main(["ask", "who directed Film 1", "--kb", str(kb)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: incomplete KB {kb}") and err.count("\n") == 1
    assert main(["ingest", "--kb", str(kb), "--triples", str(triples[0])]) == 0
    assert "(5 of 8 chunks reused from an interrupted run)" in capsys.readouterr().out
    assert _answer(kb, capsys) == "Some Director"


def test_the_sample_kb_builds_once_when_processes_start_together(tmp_path):
    """hybridrag.kb.sample's own lock plus the ingest lock: three processes, one build (a small sample source)."""
    src = tmp_path / "src"
    _inputs(src, "Some Director")[0].rename(src / "triples.txt")
    (src / "passages.jsonl").write_text('{"id": "p1", "text": "Film 1 is a drama."}\n', encoding="utf-8")
    code = (
        f"import hybridrag.kb.sample as s, pathlib; s.SAMPLE_SRC = pathlib.Path({str(src)!r}); "
        "from hybridrag.kb.base import KnowledgeBase; d = s.sample_kb_dir(); print(d, KnowledgeBase(d).build_dir.name)"
    )
    env = {**_env(), "HYBRIDRAG_CACHE": str(tmp_path / "cache")}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err[-1000:] for _, err in outs]
    assert len({out.strip() for out, _ in outs}) == 1  # the same directory and build for all three
    assert len(list((tmp_path / "cache" / "sample-kb-v2" / "builds").iterdir())) == 1
