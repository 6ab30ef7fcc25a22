"""Extraction without a model: the capitalised names of each sentence, linked by the words between them.

The fallback of an extraction that has no usable reply (SSRAG's web route: no model for the
graph branch, an unparseable reply, or chunks past the LLM call cap). Per sentence, the names it
holds (:func:`tools.retrieval.explicit_mentions`, a name inside a longer one dropped) in reading
order; the first is the head, each later one a tail, and up to ``MAX_RELATION_WORDS`` words
between them the relation (``related to`` when none). The result is an :class:`kb.extract.Extraction`
like a model's reply, so it goes through the same check (:func:`kb.extract.clean`) and entity
resolution (:mod:`kb.resolve`) with the chunk as its provenance.
"""

from __future__ import annotations

from hybridrag.kb.extract import ExtractedEntity, ExtractedRelation, Extraction
from hybridrag.tools.retrieval import explicit_mentions
from hybridrag.tools.text import sentences

MAX_RELATION_WORDS = 6


def _names(sentence: str) -> list[str]:
    """Names of a sentence in reading order.

    Runs joined across lower-case words hold two names ("Tom Hanks starred in Cast Away"), so a name
    inside a longer one found is dropped.
    """
    found = list(dict.fromkeys(n for n in explicit_mentions(sentence) if n in sentence))
    return sorted((n for n in found if not any(m != n and m in n for m in found)), key=sentence.index)


def rule_extraction(text: str) -> Extraction:
    """Entities and relations of a text by rule (see the module docstring)."""
    entities: dict[str, None] = {}
    relations: dict[tuple[str, str, str], None] = {}
    for sentence in sentences(text):
        names = _names(sentence)
        if len(names) < 2:
            continue
        head = names[0]
        for tail in names[1:]:
            between = sentence[sentence.index(head) + len(head) : sentence.index(tail)].split()
            relation = " ".join(between[:MAX_RELATION_WORDS]).strip(" ,;:") or "related to"
            tail = tail.rstrip(".")
            entities.update(dict.fromkeys((head, tail)))
            relations[(head, relation, tail)] = None
    return Extraction(
        entities=[ExtractedEntity(name=n) for n in entities],
        relations=[ExtractedRelation(head=h, relation=r, tail=t) for h, r, t in relations],
    )
