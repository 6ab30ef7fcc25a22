"""Fault probe of `hybridrag ingest`: kill -9 during each stage, concurrent ingests, queries meanwhile.

``run(workdir)`` returns rows ``{"probe", "command", "result", "ok"}`` for docs/reliability.md;
``python -m benchmarks reliability --only ingest [--films N]`` runs it.
Every ingest and ask is a real ``hybridrag`` subprocess with the real embedding model. The
embeddings stage is killed in real time, once 90% of its chunks are saved; the other stages are
too short to hit by timing on a small KB, so they are held there with the test hook
``HYBRIDRAG_TEST_INGEST_HOLD`` (kb/ingest_state.py) and then killed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.common import ROOT

CHUNK = 256
QUESTION = "who directed Film 1"


def write_inputs(folder: Path, director: str, films: int) -> Path:
    """Synthetic films with a director, a year and two actors; 'Film 1' is directed by ``director``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "triples.txt"
    with open(path, "w", encoding="utf-8") as f:
        for i in range(1, films + 1):
            f.write(
                f"Film {i}|directed_by|{director if i == 1 else f'Director {i % (films // 6 + 1)}'}\n"
                f"Film {i}|release_year|{1900 + i % 120}\nFilm {i}|starred_actors|Actor {i % (films // 2 + 1)}\n"
                f"Film {i}|starred_actors|Actor {(i * 7) % (films // 2 + 1)}\n"
            )
    return path


def _env(hold: str | None = None) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HYBRIDRAG_EMBED_CHUNK": str(CHUNK), "PYTHONPATH": str(ROOT)}
    env.pop("HYBRIDRAG_TEST_INGEST_HOLD", None)
    return {**env, "HYBRIDRAG_TEST_INGEST_HOLD": hold} if hold else env


def _ingest_args(kb: Path, triples: Path, *extra: str) -> list[str]:
    return ["ingest", "--kb", str(kb), "--triples", str(triples), "--replace", *extra]


def _shown(args: list[str], hold: str | None = None) -> str:
    return (f"HYBRIDRAG_TEST_INGEST_HOLD={hold} " if hold else "") + "hybridrag " + " ".join(args)


def _start(args: list[str], hold: str | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "hybridrag.app.cli", *args],
        cwd=ROOT,
        env=_env(hold),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _run(args: list[str]) -> tuple[int, str, str, float]:
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "hybridrag.app.cli", *args],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=3600,
    )
    return p.returncode, p.stdout, p.stderr, time.perf_counter() - t0


def _last_line(text: str) -> str:
    lines = [x for x in text.replace("\r", "\n").splitlines() if x.strip()]
    return lines[-1].strip() if lines else ""


def _embed_s(cli_out: str) -> str:
    """The embedding seconds `hybridrag ingest` printed ('?' when absent)."""
    found = re.search(r"embeddings (\d+\.\d)s", cli_out)
    return f"{found.group(1)} s" if found else "?"


def _wait(pred: Callable[[], bool], proc: subprocess.Popen | None, timeout: float = 1800) -> bool:
    deadline = time.monotonic() + timeout
    while not pred():
        if (proc is not None and proc.poll() is not None) or time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _work(kb: Path, name: str) -> Path:
    return kb / ".ingest-work" / name


def _held(kb: Path, proc: subprocess.Popen) -> bool:
    try:
        return json.loads(_work(kb, "held").read_text(encoding="utf-8"))["pid"] == proc.pid
    except (OSError, ValueError, KeyError):
        return False


def _stage(kb: Path, proc: subprocess.Popen) -> str:
    try:
        info = json.loads(_work(kb, "stage.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    return info.get("stage", "") if info.get("pid") == proc.pid else ""


def _chunks(kb: Path) -> int:
    folder = _work(kb, "embeddings")
    return len(list(folder.glob("*.npy"))) if folder.is_dir() else 0


def _left(kb: Path) -> str:
    """What a killed ingest left: the live build, partial builds, saved embedding chunks."""
    live = os.readlink(kb / "current") if (kb / "current").is_symlink() else "none"
    partial = len(list((kb / "builds").glob("*.partial"))) if (kb / "builds").is_dir() else 0
    return f"live build {live}, {partial} partial build(s), {_chunks(kb)} embedding chunk(s) saved"


def _kill(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()


def _ask(kb: Path) -> tuple[int, str]:
    rc, out, err, _ = _run(["ask", QUESTION, "--kb", str(kb)])
    return rc, (out.splitlines()[0] if rc == 0 and out else _last_line(err))


def _kill_at(kb: Path, triples: Path, stage: str, chunks_total: int) -> tuple[str, str, bool]:
    """Start a re-ingest, kill -9 it in ``stage``; return (command, what was left, killed there)."""
    args = _ingest_args(kb, triples)
    if stage == "embeddings":
        proc = _start(args)
        target = int(0.9 * chunks_total)
        reached = _wait(lambda: _stage(kb, proc) == "embeddings" and _chunks(kb) >= target, proc)
        command = f"{_shown(args)}; kill -9 once {target}/{chunks_total} chunks are saved"
    else:
        proc = _start(args, hold=stage)
        reached = _wait(lambda: _held(kb, proc), proc)
        command = f"{_shown(args, stage)}; kill -9 when held"
    _kill(proc)
    return command, _left(kb), reached


def run(workdir: Path, films: int = 600) -> list[dict]:
    """Run every probe in ``workdir``; one row per probe."""
    workdir = Path(workdir)
    rows: list[dict] = []

    def row(probe: str, command: str, result: str, ok: bool) -> None:
        rows.append({"probe": probe, "command": command, "result": result, "ok": bool(ok)})

    old = write_inputs(workdir / "old", "Old Director", films)
    new = write_inputs(workdir / "new", "New Director", films)
    rc, out, err, fresh_s = _run(_ingest_args(workdir / "fresh", new))
    docs = json.loads((workdir / "fresh" / "manifest.json").read_text())["counts"]["docs"] if rc == 0 else 0
    total = -(-docs // CHUNK)
    row(
        "fresh ingest (baseline)",
        _shown(_ingest_args(workdir / "fresh", new)),
        f"exit {rc}, {fresh_s:.1f} s, {docs} documents in {total} chunks of {CHUNK}",
        rc == 0,
    )
    kb = workdir / "kb"
    _run(_ingest_args(kb, old))
    for stage in ("parse", "graph", "embeddings"):
        command, left, reached = _kill_at(kb, new, stage, total)
        rc, answer = _ask(kb)
        row(
            f"kill -9 during {stage} (re-ingest)",
            command,
            f"left: {left}; next `ask`: exit {rc}, {answer!r}",
            reached and rc == 0 and "Old Director" in answer,
        )
    rc, resumed, err, resume_s = _run(_ingest_args(kb, new))
    reused = re.search(r"\((\d+) of (\d+) chunks reused", resumed)
    row(
        "re-ingest after the kill during embeddings",
        _shown(_ingest_args(kb, new)),
        f"exit {rc}, {resume_s:.1f} s (embeddings {_embed_s(resumed)}) vs a fresh run's {fresh_s:.1f} s "
        f"(embeddings {_embed_s(out)}); {reused.group(0)[1:] if reused else 'no chunks reused'}; "
        f"next `ask`: {_ask(kb)[1]!r}",
        rc == 0 and reused is not None and int(reused.group(1)) >= int(0.9 * total),
    )
    command, left, reached = _kill_at(kb, old, "indexes", total)
    rc, answer = _ask(kb)
    row(
        "kill -9 during indexes (re-ingest)",
        command,
        f"left: {left}; next `ask`: exit {rc}, {answer!r}",
        reached and rc == 0 and "New Director" in answer,
    )
    first = workdir / "first"
    command, left, reached = _kill_at(first, new, "embeddings", total)
    rc, answer = _ask(first)
    row(
        "kill -9 during embeddings (first ingest)",
        command,
        f"left: {left}; next `ask`: exit {rc}, {answer!r}",
        reached and rc == 2 and "incomplete KB" in answer,
    )
    # the first of the two concurrent ingests must outlast the second's start-up (a few seconds)
    rows.extend(_concurrency(workdir, kb, write_inputs(workdir / "big", "Old Director", 6 * films), new))
    return rows


def _concurrency(workdir: Path, kb: Path, old: Path, new: Path) -> list[dict]:
    """Two ingests into one directory at once; readers while a re-ingest runs."""
    from hybridrag.kb.base import open_kb

    rows = []
    first = _start(_ingest_args(kb, old))
    _wait(lambda: _stage(kb, first) != "", first)  # it holds the lock from its first stage on
    rc, _, err, _ = _run(_ingest_args(kb, new))
    rc_wait, _, _, waited = _run(_ingest_args(kb, new, "--wait", "3600"))
    first.communicate()
    ask_rc, answer = _ask(kb)
    rows.append(
        {
            "probe": "two concurrent ingests into one --kb",
            "command": f"{_shown(_ingest_args(kb, old))} & {_shown(_ingest_args(kb, new))}; "
            f"then the same with --wait 3600",
            "result": f"second: exit {rc}, {_last_line(err)!r}; first: exit {first.returncode}; "
            f"with --wait: exit {rc_wait} after {waited:.1f} s; next `ask`: exit {ask_rc}, {answer!r}",
            "ok": rc == 2
            and "another ingest" in err
            and first.returncode == 0
            and rc_wait == 0
            and ask_rc == 0
            and "New Director" in answer,
        }
    )
    before = open_kb(kb)
    seen, errors, opens = set(), [], 0
    proc = _start(_ingest_args(kb, old))
    while proc.poll() is None:
        try:
            kbo = open_kb(kb)
            opens += 1
            assert len(kbo.docs) == kbo.dense.index.ntotal == kbo.manifest["counts"]["docs"]
            seen.add((kbo.build_dir.name, kbo.graph.neighbors(["Film 1"], ["directed_by"])[0].tail))
        except Exception as exc:  # noqa: BLE001 - any failure is the probe's finding
            errors.append(f"{type(exc).__name__}: {exc}")
        time.sleep(0.2)
    after = open_kb(kb)
    directors = sorted({d for _, d in seen} | {after.graph.neighbors(["Film 1"], ["directed_by"])[0].tail})
    rows.append(
        {
            "probe": "queries during a re-ingest (open_kb in a running process)",
            "command": f"{_shown(_ingest_args(kb, old))} while open_kb() is called every 0.2 s",
            "result": f"{opens} opens, {len(errors)} errors {errors[:2]}; "
            f"builds seen: {len({s[0] for s in seen})}; "
            f"directors of Film 1 seen: {directors}; reopened after the swap: {after is not before}",
            "ok": not errors and after is not before and set(directors) <= {"Old Director", "New Director"},
        }
    )
    return rows
