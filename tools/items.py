"""A ranked item of a method's retrieval: an entity or a passage, its score and who found it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Item:
    """One ranked item: an entity or a passage, with its score and the branch or module that scored it.

    A method adds what backs the item (fusion's facts, HybGRAG's reasoning paths) in a subclass.
    """

    id: str
    kind: str  # "entity" or "passage"
    name: str
    score: float
    source: str
    text: str = ""

    def as_ranked(self) -> dict:
        """The common ``ranked`` entry: id, kind, name, score and source."""
        return {"id": self.id, "kind": self.kind, "name": self.name, "score": self.score, "source": self.source}
