"""The knowledge base layer: data model, graph stores, text indexes, ingestion."""

import os

# Every package imports kb first, before torch or llama.cpp load OpenMP, which reads this once:
# idle OpenMP threads then sleep instead of busy-spinning (10-40x slower calls under load).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from hybridrag.kb.model import (  # noqa: E402
    Entity,
    KBError,
    MalformedInputError,
    Passage,
    Schema,
    Triple,
    UnknownEntityError,
)

__all__ = ["Entity", "KBError", "MalformedInputError", "Passage", "Schema", "Triple", "UnknownEntityError"]
