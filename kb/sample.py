"""The bundled sample KB: built on first use into a cache folder, then reused."""

from __future__ import annotations

import os
from pathlib import Path

from filelock import FileLock

from hybridrag.kb.kb_dir import has_build

SAMPLE_SRC = Path(__file__).parent / "sample"
TYPE_MAP = Path(__file__).parent / "data" / "metaqa_types.json"
SAMPLE_VERSION = "2"  # 2: the KB layout with builds behind an atomic pointer (kb.kb_dir)


def cache_root() -> Path:
    """Folder for built KBs: ``$HYBRIDRAG_CACHE`` or ``~/.cache/hybridrag``."""
    return Path(os.environ.get("HYBRIDRAG_CACHE") or Path.home() / ".cache" / "hybridrag")


def sample_kb_dir(progress: bool = False) -> Path:
    """Return the built sample KB directory, building it once if needed.

    Processes that start together wait on one lock; the first builds, the others then find
    the finished build. A build a killed process left unfinished is resumed by the next caller.
    """
    out = cache_root() / f"sample-kb-v{SAMPLE_VERSION}"
    if has_build(out):
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out) + ".lock"):
        if not has_build(out):
            from hybridrag.kb.ingest import ingest

            ingest(
                out,
                [SAMPLE_SRC / "triples.txt"],
                passages=SAMPLE_SRC / "passages.jsonl",
                type_map=TYPE_MAP,
                progress=progress,
            )
    return out
