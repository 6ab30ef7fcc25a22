"""The bundled sample KB: built on first use into a cache folder, then reused."""

from __future__ import annotations

import os
from pathlib import Path

from filelock import FileLock

SAMPLE_SRC = Path(__file__).parent / "sample"
TYPE_MAP = Path(__file__).parent / "data" / "metaqa_types.json"
SAMPLE_VERSION = "1"


def cache_root() -> Path:
    """Folder for built KBs: ``$HYBRIDRAG_CACHE`` or ``~/.cache/hybridrag``."""
    return Path(os.environ.get("HYBRIDRAG_CACHE") or Path.home() / ".cache" / "hybridrag")


def sample_kb_dir(progress: bool = False) -> Path:
    """Return the built sample KB directory, building it once if needed."""
    out = cache_root() / f"sample-kb-v{SAMPLE_VERSION}"
    if (out / "manifest.json").exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out) + ".lock"):
        if not (out / "manifest.json").exists():
            from kb.ingest import ingest

            ingest(out, [SAMPLE_SRC / "triples.txt"], passages=SAMPLE_SRC / "passages.jsonl",
                   type_map=TYPE_MAP, progress=progress)
    return out
