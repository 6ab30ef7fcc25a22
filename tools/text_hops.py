"""Text hops: a relation followed through passages when the graph lacks the edge (no LLM here).

In a KB whose facts are partly or only in passages (a passage is about one entity, its
owner), a relation path breaks where an edge is missing from the graph. The hybrid module
then also steps along the relation through the text, one sentence at a time:

- forward: a sentence of a frontier entity's own passages names another entity;
- backward: a passage found by lexical search for a frontier entity's name mentions it in a
  sentence (as a whole mention: "Heat" inside "The Heat of the Night" is not a mention of
  Heat); the step goes to the passage's owner.

A relation is a name or a short phrase ("directed_by", "headquartered in"): on a KB whose
schema has no relation types (every fact only in text) the router names relations in its own
words and these hops are the only way along them. A step states the relation, and is kept,
when it has *support*: one point per word of the relation that its sentence carries outside
the names it joins (a word is matched by its first five letters, a plural ``s`` dropped:
"directed" for directed_by, "tagged" for has_tags; "X is tagged as child actor" does not carry
starred_actors), one point when the relation names the reached entity's type
(in_language reaching a ``language``: "X is in French" carries no word of it). Of a frontier
entity's text steps along one relation only those with the most support are kept, so an
actor is not taken for a director, nor an IMDb rating for IMDb votes. Where the schema gives
the relation's end types, the reached entity must also have one of them; from an entity that
has graph edges along the relation, a text step must carry a word of it (a type alone is weak
beside a stated edge). Names are found as written ("Craig E. Serling", "bd-r") and a sentence
is never cut inside the frontier entity's own name ("Mrs. Brown's Boys").

The step's triple is the relation with the ``TEXT`` mark, so reasoning paths show that it
came from a passage.

When a whole hop reaches nothing, neither along edges nor by supported steps (a KB that lost an
entity's type: "Western" typed as the film of that name, so "X is a Western film" has no support
for has_genre), :func:`nearest_steps` takes, for each of the first ``MAX_NEAREST`` frontier
entities, the sentence of its own passages closest in meaning to the relation's words (the
paper's similarity ranking, applied to sentences); its triples carry the ``NEAREST`` mark. The
validator judges the result like any other.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.cancel import check_cancelled
from hybridrag.kb.model import Triple
from hybridrag.tools.retrieval import mentions_in as kb_mentions
from hybridrag.tools.text import name_pattern
from hybridrag.tools.text import sentences as split_sentences

TEXT = " (text)"
NEAREST = " (text, nearest sentence)"
MAX_NEAREST = 5  # frontier entities per hop that take a nearest-sentence step
MENTION_CACHE = 50_000  # sentences whose mentions are remembered (a question's loop reads them again)
SEARCH_K = 500  # passages looked at per frontier entity for backward steps (BM25 by its name)
_STOP = set("by has have had in of the is was to a an at on for from with and or be as".split())  # function words
_WORD = re.compile(r"[a-z0-9]+")


_ROWS: dict[int, dict[str, list[int]]] = {}  # id(KB) -> entity id -> rows of its texts


def doc_rows(kb: KnowledgeBase) -> dict[str, list[int]]:
    """Map entity id → rows of its texts in the dense index (built once per KB)."""
    rows = _ROWS.get(id(kb))
    if rows is None:
        rows = {}
        for i, d in enumerate(kb.docs):
            if d.entity_id is not None:
                rows.setdefault(d.entity_id, []).append(i)
        _ROWS[id(kb)] = rows
    return rows


@lru_cache(maxsize=8)
def has_passages(kb: KnowledgeBase) -> bool:
    """Whether the KB holds any passage (text hops are pointless otherwise)."""
    return any(d.kind == "passage" for d in kb.docs)


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def relation_words(relation: str) -> list[str]:
    """The words of a relation name or phrase, singular, without function words."""
    return [_singular(w) for w in _WORD.findall(base_relation(relation).lower()) if w not in _STOP]


def base_relation(step_type: str) -> str:
    """The relation of a step's triple, without the text marks."""
    return step_type.removesuffix(NEAREST).removesuffix(TEXT)


def _stems(relation: str) -> list[str]:
    return list(dict.fromkeys(w[:5] for w in relation_words(relation)))


def carried(sentence: str, stems: list[str]) -> int:
    """How many of the relation's word stems start a word of ``sentence``."""
    low = sentence.lower()
    return sum(1 for s in stems if re.search(rf"\b{re.escape(s)}", low))


def _predicate(sentence: str, names: tuple[str, ...]) -> str:
    """The sentence without the names it joins.

    A relation word inside a name ("child actor", a tag) does not state the relation.
    """
    for name in names:
        sentence = name_pattern(name).sub(" ", sentence)
    return sentence


def named_types(kb: KnowledgeBase, relation: str) -> set[str]:
    """Entity types of the KB that the relation names (in_language → language; has_tags → tag)."""
    words = set(relation_words(relation))
    return {t for t in kb.graph.schema().entity_types if _singular(t.lower()) in words}


def _end_types(kb: KnowledgeBase, relation: str) -> set[str] | None:
    """Types the schema gives the relation's ends; None when the schema does not know it."""
    rt = kb.graph.schema().relation_types.get(relation)
    return None if rt is None else set(rt.head_types) | set(rt.tail_types)


def sentences(text: str, keep: re.Pattern | None = None) -> list[str]:
    """Sentences of ``text``, never cut inside a match of ``keep`` ("Mrs. Brown's Boys" stays whole).

    Not cut after a word of one character or holding a period either ("Albert S. Rogell", "U.S.").
    """
    return split_sentences(text, after="short words", keep=keep)


def _sentences_of(kb: KnowledgeBase, eid: str, own: re.Pattern) -> list[str]:
    """Sentences of the frontier entity's own passages."""
    out = []
    for row in doc_rows(kb).get(eid, []):
        d = kb.docs[row]
        if d.kind == "passage":
            out += sentences(d.text, own)
    return out


@lru_cache(maxsize=MENTION_CACHE)
def mentions_in(kb: KnowledgeBase, text: str) -> tuple[str, ...]:
    """Entity ids named in ``text``, remembered per sentence.

    As :func:`tools.retrieval.mentions_in`: longest first, matched on the text as written, so names
    with punctuation, "Craig E. Serling", "bd-r", are found; a shorter name inside a longer one is not.
    """
    return tuple(kb_mentions(kb, text))


def _sentences_naming(kb: KnowledgeBase, eid: str, name: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """Sentences of other entities' passages that hold the frontier entity's ``name``.

    Returns:
        ``(owner, sentence, entities the sentence names)`` each; :func:`_mentions` then tells a
        mention from a namesake.
    """
    pattern, low, out = name_pattern(name), name.lower(), []
    for hit in kb.lexical_search(name, k=SEARCH_K, kind="passage"):
        owner = hit.doc.entity_id
        if owner and owner != eid and low in hit.doc.text.lower() and pattern.search(hit.doc.text):
            out += [(owner, s, mentions_in(kb, s)) for s in sentences(hit.doc.text, pattern) if pattern.search(s)]
    return out


def _mentions(eid: str, found: tuple[str, ...], names: dict[str, str]) -> bool:
    """Whether a sentence naming ``found`` mentions ``eid`` itself, not only inside a longer entity's name.

    ``names``: id → name of ``eid`` and of every found entity.
    """
    name = names[eid].lower()
    return eid in found or not any(name in names[o].lower() and o != eid for o in found)


def text_steps(
    kb: KnowledgeBase, frontier: list[str], relation: str, on_graph: frozenset[str] | set[str] = frozenset()
) -> list[tuple[str, str, Triple]]:
    """The text steps along ``relation`` from ``frontier``, as (parent, child, marked triple).

    From an entity in ``on_graph`` (it has graph edges along the relation) a step's sentence must
    carry a word of the relation (the type alone is too weak beside a stated edge). Two store reads
    a hop: the frontier's names, then every entity the sentences name.
    """
    stems, named, want = _stems(relation), named_types(kb, relation), _end_types(kb, relation)
    names = kb.names(frontier) if frontier else {}
    forward: dict[str, list[tuple[str, str]]] = {}  # frontier entity -> (child, sentence)
    backward: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {}
    for eid in frontier:
        check_cancelled()  # a lexical search and its sentences per frontier entity
        own = name_pattern(names[eid])  # read around the entity's own name: no namesake, no part of it
        forward[eid] = [(child, s) for s in _sentences_of(kb, eid, own) for child in _named_around(kb, s, own, eid)]
        backward[eid] = _sentences_naming(kb, eid, names[eid])
    wanted = {c for pairs in forward.values() for c, _ in pairs}
    wanted |= {i for rows in backward.values() for owner, _, found in rows for i in (owner, *found)}
    ents = kb.graph.get_many(wanted) if wanted else {}
    names = {**{i: i for i in wanted}, **{i: e.name for i, e in ents.items()}, **names}  # kb.name's rule

    def support(eid: str, child: str, sentence: str) -> int:
        c = ents.get(child)
        words = carried(_predicate(sentence, (names[child], names[eid])), stems)
        if c is None or (want is not None and c.type not in want) or (eid in on_graph and not words):
            return 0
        return words + (c.type in named)

    out = []
    for eid in frontier:
        found = [(child, support(eid, child, s), Triple(eid, relation + TEXT, child)) for child, s in forward[eid]]
        found += [
            (owner, support(eid, owner, s), Triple(owner, relation + TEXT, eid))
            for owner, s, mentioned in backward[eid]
            if _mentions(eid, mentioned, names)
        ]
        best = max((s for _, s, _ in found), default=0)
        out += [(eid, child, t) for child, s, t in found if s == best > 0]
    return out


def nearest_steps(kb: KnowledgeBase, frontier: list[str], relation: str) -> list[tuple[str, str, Triple]]:
    """Nearest-sentence steps along ``relation``, as (parent, child, marked triple).

    For each of the first ``MAX_NEAREST`` frontier entities: the entities named by the sentence of
    its own passages nearest to the relation's words.
    """
    words = " ".join(relation_words(relation))
    out: list[tuple[str, str, Triple]] = []
    if not words:
        return out
    query, names = kb.embed(words), kb.names(frontier[:MAX_NEAREST]) if frontier else {}
    for eid in frontier[:MAX_NEAREST]:
        check_cancelled()
        own = name_pattern(names[eid])
        found = [(s, c) for s in _sentences_of(kb, eid, own) if (c := _named_around(kb, s, own, eid))]
        if not found:
            continue
        vecs = np.asarray(kb.embeddings.embed_documents([s for s, _ in found]), dtype=np.float32)
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9)
        _, children = found[int(np.argmax(vecs @ query))]
        out += [(eid, child, Triple(eid, relation + NEAREST, child)) for child in children]
    return out


def _named_around(kb: KnowledgeBase, sentence: str, own: re.Pattern, eid: str) -> list[str]:
    """Entities a sentence names besides the entity whose name ``own`` matches."""
    return [c for c in dict.fromkeys(c for part in own.split(sentence) for c in mentions_in(kb, part)) if c != eid]
