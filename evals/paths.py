"""Where shared datasets and cached KBs live."""

from __future__ import annotations

import os
from pathlib import Path

from hybridrag.kb.sample import cache_root


def datasets_dir() -> Path:
    """``$HYBRIDRAG_DATASETS`` or the ``shared/datasets`` folder beside the repository."""
    env = os.environ.get("HYBRIDRAG_DATASETS")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "datasets"


def metaqa_kb_dir() -> Path:
    """The full MetaQA KB built into the cache."""
    return cache_root() / "metaqa-full"
