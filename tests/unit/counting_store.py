"""A graph store that counts its calls, for the batched-read tests (test_batched_reads_*.py)."""

from __future__ import annotations

import copy
from collections import Counter

from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.build import assemble
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.model import Triple


class CountingStore:
    """Delegates to a store and counts the calls of each of its methods."""

    def __init__(self, store) -> None:
        self.store, self.calls = store, Counter()

    def __getattr__(self, name: str):
        attr = getattr(self.store, name)
        if not callable(attr):
            return attr

        def counted(*args, **kwargs):
            self.calls[name] += 1
            return attr(*args, **kwargs)

        return counted


def counting(kb: KnowledgeBase) -> tuple[KnowledgeBase, Counter]:
    """A copy of ``kb`` (its own per-KB caches) whose graph store counts its calls."""
    twin = copy.copy(kb)
    twin.graph = CountingStore(kb.graph)
    return twin, twin.graph.calls


def store_of(lines: list[str]) -> InMemoryGraphStore:
    return InMemoryGraphStore(*assemble([Triple(*line.split("|")) for line in lines], {}))
