"""The graph branch's text facts: a name with initials stays in one sentence, and a passage naming
the node is found even when the name's words rank other documents first (MetaQA-hybrid losses)."""

from __future__ import annotations

from hybridrag.agents.ssrag import nodes as N
from hybridrag.kb.base import Hit
from hybridrag.kb.text_index import Doc
from hybridrag.tools.text import sentences


class CrowdedKB:
    """A KB whose BM25 ranks passages about other people before the one naming the node."""

    def __init__(self, n_others: int) -> None:
        others = [Doc("passage", f"p:{i}", f"Frank {i}", f"Frank {i} is a film about Frank.") for i in range(n_others)]
        self.naming = Doc(
            "passage",
            "p:Men",
            "Men Without Women",
            "Men Without Women was directed by John Ford. Frank Albertson starred in Men Without Women.",
        )
        self.docs = [*others, self.naming]
        self.asked: list[int] = []

    def name(self, entity_id: str) -> str:
        return entity_id

    def lexical_search(self, query: str, k: int = 10, kind: str | None = None) -> list[Hit]:
        self.asked.append(k)
        return [Hit(d, 1.0) for d in self.docs[:k]]


def test_a_passage_naming_the_node_below_other_hits_is_read():
    kb = CrowdedKB(n_others=N.TEXT_HITS + 10)
    facts = N._text_facts(kb, "Frank Albertson", search=True)
    assert facts == ["Frank Albertson starred in Men Without Women"]
    assert kb.asked == [N.TEXT_POOL]


def test_at_most_text_hits_passages_naming_the_node():
    kb = CrowdedKB(n_others=0)
    kb.docs = [Doc("passage", f"p:{i}", f"Film {i}", f"Frank Albertson starred in Film {i}.") for i in range(50)]
    assert len(N._text_facts(kb, "Frank Albertson", search=True)) == N.TEXT_HITS


def test_initials_and_titles_do_not_end_a_sentence():
    text = "In Old Oklahoma was directed by Albert S. Rogell. Dr. No is a film. Mrs. Miniver won! Next?  Yes."
    assert sentences(text) == [
        "In Old Oklahoma was directed by Albert S. Rogell.",
        "Dr. No is a film.",
        "Mrs. Miniver won!",
        "Next?",
        "Yes.",
    ]
