"""Run the scale benchmark's stages in fresh interpreters and keep their results in the work dir.

``results.json`` in the work dir holds one entry per (stage, factor) (a run with ``--tag T``
writes ``results-T.json``; every file is read); a re-run of the command skips entries already
there unless ``--redo`` names the stage, so a long benchmark can be finished in parts. Every
child runs under ``nice`` (default 10) and reports its own peak RSS.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from benchmarks.common import child, child_env, last_json
from hybridrag.evals.timing import load_average
from hybridrag.kb.kb_dir import work_dir


def _stderr(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


class Runner:
    """Stage results of one work dir, and the child processes that produce them."""

    def __init__(self, work: Path, nice: int = 10, redo: set[str] | None = None, log=None, tag: str = "") -> None:
        """Results of every ``results*.json`` in ``work`` (runs with a ``tag`` write their own file)."""
        self.work, self.nice, self.redo, self.log = work, nice, redo or set(), log or _stderr
        self.path = work / (f"results-{tag}.json" if tag else "results.json")
        self.results: dict = {}
        for f in sorted(work.glob("results*.json")):
            self.results.update(json.loads(f.read_text()))
        self._lock = threading.Lock()  # stages may run from several threads (--jobs)

    def _cmd(self, stage: str, factor: int, extra: list[str]) -> list[str]:
        """The child process of one stage."""
        return [
            "nice",
            "-n",
            str(self.nice),
            *child("scale", "--stage", stage, "--factor", str(factor)),
            "--work",
            str(self.work),
            *extra,
        ]

    def save(self) -> None:
        """Write the results (atomically)."""
        with self._lock:
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.results, indent=1))
            tmp.replace(self.path)

    def run(self, stage: str, factor: int, *extra: str) -> dict:
        """Result of ``stage`` at ``factor``: cached, or run now in a child and recorded."""
        key = f"{stage}@{factor}"
        if key in self.results and stage not in self.redo:
            return self.results[key]
        self.log(f"[scale] {key} starting (load {load_average()[0]:.2f})")
        load0, t0 = load_average()[0], time.time()
        proc = subprocess.run(self._cmd(stage, factor, list(extra)), capture_output=True, text=True, env=child_env())
        if proc.returncode != 0:
            raise RuntimeError(f"stage {key} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        res = last_json(proc.stdout)
        res["load_before"], res["load_after"] = load0, load_average()[0]
        res["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        res["wall_s"] = time.time() - t0
        self.results[key] = res
        self.save()
        self.log(f"[scale] {key} done: {json.dumps(res)[:300]}")
        return res

    def killed_ingest(self, factor: int, kb_dir: Path, kill_after: int) -> dict:
        """Start a full ingest, SIGKILL it once ``kill_after`` embedding chunks are saved, re-run it.

        Returns the chunk counts: saved before the kill, total, reused by the re-run, re-embedded.
        """
        key = f"resume@{factor}"
        if key in self.results and "resume" not in self.redo:
            return self.results[key]
        import shutil

        shutil.rmtree(kb_dir, ignore_errors=True)
        chunks = work_dir(kb_dir) / "embeddings"
        self.log(f"[scale] {key}: ingest to be killed after {kill_after} chunks")
        proc = subprocess.Popen(
            self._cmd("ingest", factor, ["--kb-dir", str(kb_dir)]),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env=child_env(),
        )
        saved = 0
        while proc.poll() is None:
            saved = len(list(chunks.glob("*.npy"))) if chunks.exists() else 0
            if saved >= kill_after:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                break
            time.sleep(0.2)
        else:
            raise RuntimeError(f"{key}: the ingest finished before {kill_after} chunks were saved")
        saved = len(list(chunks.glob("*.npy")))
        self.log(f"[scale] {key}: killed with {saved} chunks saved; re-running")
        again = self.run("ingest-resumed", factor, "--kb-dir", str(kb_dir))
        res = {
            "saved_at_kill": saved,
            "total_chunks": again["chunks"],
            "reused": again["chunks_reused"],
            "re_embedded": again["chunks"] - again["chunks_reused"],
            "resumed_ingest_s": again["seconds"],
            "resumed_embed_s": again.get("embed_s"),
        }
        shutil.rmtree(kb_dir, ignore_errors=True)
        self.results[key] = res
        self.save()
        return res
