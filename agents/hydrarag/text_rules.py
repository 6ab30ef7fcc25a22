"""HydraRAG paragraph → path construction by rule, for a small model under the judge's rules.

The judge's rules apply with ``judge=auto`` and a model known to be small, or ``judge=rules``
(:mod:`agents.llm.judge`). A model of a few hundred million parameters shown the top sentences
writes no usable path on most questions (truncated chains such as ``X → written by →
answer(person``, after which the sentence fallback ranks every name the sentences mention). The
rule reads the same selected sentences:

- a sentence counts when it writes one of the chain's topic names (or comes from a topic's own
  document);
- its other KB names are the path's end: those of the skyline's answer type (``answer(kind)``),
  when the KB types its entities and the skyline names a kind, else all of them (all of them too
  when none has that kind but the sentence writes a skyline relation: the kind may be wrong);
- the path is ``topic → relation → name``, the relation being the skyline's relation that shares a
  content word (a 5-letter stem) with the sentence; such a path ``follows`` the skyline, and the
  answer check's rule and the path audit read it as they read a KG path (the relation is the
  skyline's, not the model's words). A sentence that writes no skyline relation gives
  ``topic → mentioned with → name``, which follows nothing;
- paths that follow the skyline come first, then the sentences' similarity order.

A sentence with no topic name or no other name of the wanted kind gives no path; when no sentence
gives one, exploration falls back to sentences as paths, as for an unparseable reply.
"""

from __future__ import annotations

import re

from hybridrag.agents.hydrarag.audit import content, skyline_relations
from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.retrieval import mentions_in

_KIND = re.compile(r"answer\(([^)]*)\)", re.I)
_WORD = re.compile(r"[a-z0-9]+")
STEM = 5


def answer_kind(indicator: str) -> str:
    """The kind a skyline's ``answer(kind)`` names ('' when none or ``entity``)."""
    m = _KIND.search(indicator or "")
    kind = m.group(1).strip().casefold() if m else ""
    return "" if kind in ("", "entity") else kind


def _stems(text: str) -> set[str]:
    return {w[:STEM] for w in _WORD.findall(text.casefold()) if len(w) > 2}


UNMATCHED = "mentioned with"


def _relation(sentence: str, relations: list[str]) -> tuple[str, bool]:
    """The skyline relation the sentence writes (a shared stem), else ``UNMATCHED``; and whether it matched."""
    said = _stems(sentence)
    for r in relations:
        if {w[:STEM] for w in content(r)} & said:
            return r, True
    return UNMATCHED, False


def rule_paths(kb: KnowledgeBase, chains: list[dict], sents: list[dict]) -> list[dict]:
    """Paths ``{"sent", "tokens", "names", "ids", "follows"}`` from the selected sentences (see the module doc)."""
    ids_of = {s["sentence"]: mentions_in(kb, s["sentence"]) for s in sents}
    every = {i for ids in ids_of.values() for i in ids}
    types = {i: (e.type or "").casefold() for i, e in kb.graph.get_many(every).items()} if every else {}
    found: list[tuple[bool, int, dict]] = []
    seen: set[tuple[str, str]] = set()
    for ch in chains:
        topics, kind = set(ch["topics"]), answer_kind(ch["indicator"])
        relations = skyline_relations(ch["indicator"])
        typed = bool(kind) and kind in set(types.values())
        for order, s in enumerate(sents):
            ids = ids_of[s["sentence"]]
            named = [i for i in ids if i in topics]
            if not named and s["doc_name"] not in ch["names"]:
                continue
            others = [i for i in ids if i not in topics]
            relation, matched = _relation(s["sentence"], relations)
            ends = [i for i in others if not typed or types.get(i) == kind] or (others if matched else [])
            head = named[0] if named else ch["topics"][0]
            for end in ends:
                if (head, end) in seen:
                    continue
                seen.add((head, end))
                names = [kb.name(head), kb.name(end)]
                found.append(
                    (
                        not matched,
                        order,
                        {
                            "sent": s,
                            "tokens": [names[0], relation, names[1]],
                            "names": names,
                            "ids": [head, end],
                            "follows": matched,
                        },
                    )
                )
    return [p for _, _, p in sorted(found, key=lambda x: (x[0], x[1]))]
