"""HybGRAG's entity linking: the router's topic entities to KB entities (no LLM here).

A name links by exact name or alias (case-insensitive), else by the dense name index, and among
the candidates the router's type wins (label-free disambiguation). Two rules read more of what the
router gave (``link_rules`` setting, on by default):

- **the question's longer name**: a routed name that is a part of a longer KB name the question
  writes links to that longer name (SmolLM2 routes "Magee (person)" for "who worked with
  Patrick Magee"; the dense index alone picks David Magee). At most :data:`MAX_EXTRA_WORDS` words
  either side are tried, longest first; else the longest prefix of the routed name (two words or
  more) that is a KB name ("zero mostel was in (movie)": Zero Mostel, not the film Less Than Zero);
- **a type that takes the path**: when no candidate has the router's type, one whose type is at an
  end of the action's first relation is preferred ("steve martin (movie)" with ``directed_by``: the
  person Steve Martin, not the tag "steve martin", from which no film is directed).

A third drops a second entity that only the dense index links when it shares a word with one
linked by name (``merged`` in the action): the same words of a question name one entity.
"""

from __future__ import annotations

import re

from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.model import Entity

MAX_EXTRA_WORDS = 5  # words added on each side of a routed name when looking for a longer KB name (36 lookups)
_EDGE_PUNCT = "?!,;:\"'()"


def _words(text: str) -> list[str]:
    return [w.strip(_EDGE_PUNCT) for w in re.split(r"\s+", text) if w.strip(_EDGE_PUNCT)]


def question_name(kb: KnowledgeBase, name: str, question: str) -> str:
    """The longest KB name the question writes around ``name``, else its longest KB-name prefix, else ``name``.

    The words of ``name`` must appear in the question in this order ("Angus" in "the writer of Angus,
    Thongs and Perfect Snogging": the film of that whole title, though "Angus" is a film too); the
    prefix is tried only for a name that is no KB name itself.
    A prefix of at least two words is the other way a small model gets a span wrong: it runs on
    past the name ("zero mostel was in").
    """
    if not question:
        return name
    words, part = question.split(), [w.casefold() for w in _words(name)]
    if not part:
        return name
    longer = _longer_name(kb, words, part)
    if longer is not None or kb.graph.lookup(name):
        return longer or name
    for size in range(len(part) - 1, 1, -1):
        found = kb.graph.lookup(" ".join(_words(name)[:size]))
        if found:
            return found[0].name
    return name


def _longer_name(kb: KnowledgeBase, words: list[str], part: list[str]) -> str | None:
    """The longest KB name of ``part`` (lower-cased words) and up to ``MAX_EXTRA_WORDS`` question words each side."""
    spans = []  # the question's own characters between the words (a title keeps its comma)
    for start in range(len(words) - len(part) + 1):
        if [w.strip(_EDGE_PUNCT).casefold() for w in words[start : start + len(part)]] != part:
            continue
        end = start + len(part)
        for left in range(MAX_EXTRA_WORDS + 1):
            for right in range(MAX_EXTRA_WORDS + 1):
                if (left or right) and start - left >= 0 and end + right <= len(words):
                    spans.append(" ".join(words[start - left : end + right]).strip(_EDGE_PUNCT))
    for span in sorted(set(spans), key=lambda s: (-len(s), s)):
        found = kb.graph.lookup(span)
        if found:
            return found[0].name
    return None


def relation_end_types(kb: KnowledgeBase, relation: str | None) -> set[str]:
    """The entity types at either end of ``relation`` (empty when unknown)."""
    rt = kb.graph.schema().relation_types.get(relation or "")
    return {*rt.head_types, *rt.tail_types} if rt is not None else set()


def link_entity(kb: KnowledgeBase, name: str, etype: str | None = None, fits: set[str] | None = None) -> Entity | None:
    """Link a mention: the router's type first, else (``fits``) a type that can take the first relation."""
    found = kb.graph.lookup(name) or kb.link(name, k=5)
    if not found:
        return None
    typed = [e for e in found if etype and e.type == etype]
    if fits and not typed:
        typed = [e for e in found if e.type in fits]
    return (typed or found)[0]


def link_action(kb: KnowledgeBase, action: dict, question: str = "") -> dict:
    """The action with ``linked`` (name, type, id, kb_type of each entity found) and ``unlinked`` names.

    With ``question`` (the ``link_rules`` setting) the two rules of this module apply.
    """
    linked, unlinked, exact = [], [], []
    first = (action.get("path") or action.get("relations") or [None])[0]
    fits = relation_end_types(kb, first) if question else set()
    for e in action["entities"]:
        name = question_name(kb, e["name"], question)
        ent = link_entity(kb, name, e["type"], fits)
        if ent is None:
            unlinked.append(e["name"])
        else:
            linked.append({"name": name, "type": e["type"], "id": ent.id, "kb_type": ent.type})
            exact.append(bool(kb.graph.lookup(name)))
    merged = _overlapping(linked, exact) if question else []
    kept = [e for e in linked if e["name"] not in merged]
    return {**action, "linked": kept, "unlinked": unlinked, **({"merged": merged} if merged else {})}


def _overlapping(linked: list[dict], exact: list[bool]) -> list[str]:
    """Names linked only by the dense index that share a word with a name linked exactly.

    One run of the question's words names one entity: SmolLM2 routes "Dennis Rodman" and also "did
    the movies acted by Dennis", which the dense index links to the film Dennis the Menace.
    """
    words = [{w.casefold() for w in _words(e["name"])} for e in linked]
    sure = [w for w, ok in zip(words, exact, strict=True) if ok]
    return [
        e["name"] for e, w, ok in zip(linked, words, exact, strict=True) if not ok and any(w & other for other in sure)
    ]
