"""Masking entity mentions in a question: each span of the question naming a KB entity → ``<E>``.

Only spans of the question are candidates (never a fuzzy dense match of the whole text):
[bracketed] or "quoted" spans first, then the longest runs of words whose text is an
entity's id, name or alias (case-insensitive). A run made only of common words (question
words, function words, the KB's own type and relation words) is not a mention, so a movie
called "What" or a tag "movie" does not swallow the question. Last, runs that name an entity
with one typo (:func:`tools.names.close_spellings`: "Anton Wlabrook" is Anton Walbrook) outside
the spans found so far, or around found ones they contain ("A Sumemr by the River" holds the
title "the River").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from hybridrag.agents.shots.example import MASK
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.model import Entity
from hybridrag.tools.names import close_spellings

MAX_SPAN_WORDS = 8
_WORD = re.compile(r"[\w'’.&-]*\w|\w", re.UNICODE)
_EDGE_PUNCT = set("!?.()'’")
_EXPLICIT = re.compile(r"\[([^\[\]]+)\]|\"([^\"]+)\"")
COMMON = frozenset(
    """
a an the this that these those who whom whose what which when where why how whats
is are was were be been being do does did done has have had can could will would should may might
of in on at by for with from to into about as and or not no than then also same share shared
shares sharing other another any all some each every one ones both many much more most
i me my we our you your he him his she her it its they them their there here
film films movie movies star stars starred starring act acts acted acting actor actors
appear appeared appears direct directed directs director directors write wrote written writer writers
release released releases year years genre genres language languages type types kind sort
tag tags described describe about topic topics person people name names
""".split()
)


@dataclass(frozen=True)
class Mention:
    """A span of a question that names KB entities."""

    start: int
    end: int
    text: str
    entities: tuple[Entity, ...]
    explicit: bool = False  # [bracketed] or "quoted" by the asker


@lru_cache(maxsize=64)
def _kb_words(schema_key: tuple[str, ...]) -> frozenset[str]:
    out: set[str] = set()
    for name in schema_key:
        for w in re.split(r"[_\W]+", name.lower()):
            if w:
                out |= {w, w + "s", w.removesuffix("s")}
    return frozenset(out)


def common_words(kb: KnowledgeBase) -> frozenset[str]:
    """Words that are never a mention on their own: :data:`COMMON` and the KB's type and relation words."""
    schema = kb.graph.schema()
    return COMMON | _kb_words(tuple(sorted([*schema.entity_types, *schema.relation_types])))


def _common(tok: re.Match, first: bool, stop: frozenset[str]) -> bool:
    """A common word, unless capitalised inside the question ("who directed It")."""
    word = tok.group(0)
    return word.lower().strip("'’") in stop and (first or not word[0].isupper())


def find_mentions(question: str, kb: KnowledgeBase, typos: bool = True) -> list[Mention]:
    """Non-overlapping spans of ``question`` naming KB entities, in text order (longest spans win).

    ``typos=False`` skips the last pass, names written with one typo (the exact spans only).
    """
    found: list[Mention] = []
    taken = [False] * (len(question) + 1)
    for m in _EXPLICIT.finditer(question):
        text = (m.group(1) or m.group(2)).strip()
        found.append(Mention(m.start(), m.end(), text, tuple(kb.graph.lookup(text)), explicit=True))
        taken[m.start() : m.end()] = [True] * (m.end() - m.start())
    toks = [t for t in _WORD.finditer(question) if not taken[t.start()]]
    used = [False] * len(toks)
    stop = common_words(kb)
    for n in range(min(MAX_SPAN_WORDS, len(toks)), 0, -1):
        for i in range(len(toks) - n + 1):
            if any(used[i : i + n]):
                continue
            if all(_common(t, j == 0 and i == 0, stop) for j, t in enumerate(toks[i : i + n])):
                continue
            start, end = toks[i].start(), toks[i + n - 1].end()
            hit = _lookup_span(question, start, end, kb)
            if hit is not None:
                found.append(hit)
                used[i : i + n] = [True] * n
    found = _with_typos(question, kb, found, stop) if typos else found
    return sorted(_prefer_names(found), key=lambda m: m.start)


def _with_typos(question: str, kb: KnowledgeBase, found: list[Mention], stop: frozenset[str]) -> list[Mention]:
    """``found`` plus the spans naming an entity with one typo, each replacing the found spans inside it.

    The lookups a question may spend on typos go to the words that can be a name: the question
    from its first capitalised uncommon word on, else from its first uncommon word on.
    """
    toks = [t for t in _WORD.finditer(question) if not _common(t, t.start() == 0, stop)]
    capitalised = [t for t in toks if t.start() > 0 and t.group(0)[0].isupper()]
    for at in dict.fromkeys(t.start() for t in capitalised[:1] + toks[:1]):
        typos = [(s + at, e + at, ids) for s, e, ids in close_spellings(kb, question[at:])]
        for start, end, ids in typos:
            if all(_common(t, start + t.start() == 0, stop) for t in _WORD.finditer(question[start:end])):
                continue
            ents = tuple(e for e in map(kb.graph.get, ids) if e is not None)
            found = _place(found, Mention(start, end, question[start:end], ents)) if ents else found
        if typos:
            break
    return found


def _place(found: list[Mention], typo: Mention) -> list[Mention]:
    """``found`` with ``typo`` in place of the found spans inside it; unchanged when it cuts across one."""
    inside = [m for m in found if typo.start <= m.start and m.end <= typo.end]
    crossed = any(m.start < typo.end and typo.start < m.end for m in found if m not in inside)
    if crossed or any(m.explicit for m in inside):
        return found
    return [m for m in found if m not in inside] + [typo]


def _lookup_span(question: str, start: int, end: int, kb: KnowledgeBase) -> Mention | None:
    """The entities a span names, trying it with the punctuation around it first ("Zero Hour!", "(Untitled)")."""
    s2, e2 = start, end
    while s2 > 0 and question[s2 - 1] in _EDGE_PUNCT:
        s2 -= 1
    while e2 < len(question) and question[e2] in _EDGE_PUNCT:
        e2 += 1
    for a, b in dict.fromkeys([(s2, e2), (start, e2), (s2, end), (start, end)]):
        text = question[a:b]
        if "\n" in text:
            continue
        ents = kb.graph.lookup(text)
        if ents:
            return Mention(a, b, text, tuple(ents))
    return None


def _prefer_names(found: list[Mention]) -> list[Mention]:
    """Drop all-lower-case mentions ("the story", "fall") when the question names a capitalised or bracketed one.

    A question without a capitalised mention keeps only its longest lower-case one (a tag
    such as "ww2" or "family"), never several common-looking words.
    """
    named = [m for m in found if m.explicit or m.text != m.text.lower()]
    if named:
        return named
    return [max(found, key=lambda m: (len(m.text), -m.start))] if found else []

    return sorted(found, key=lambda m: m.start)


def mask_spans(question: str, spans: list[tuple[int, int]]) -> str:
    """Replace each (start, end) span of ``question`` with ``<E>``, whitespace collapsed."""
    out, last = [], 0
    for start, end in sorted(spans):
        out += [question[last:start], MASK]
        last = end
    out.append(question[last:])
    return " ".join("".join(out).split())


def mask_question(question: str, kb: KnowledgeBase) -> str:
    """``question`` with every entity mention replaced by ``<E>`` (see :func:`find_mentions`)."""
    return mask_spans(question, [(m.start, m.end) for m in find_mentions(question, kb)])


def mask_name(question: str, names: tuple[str, ...] | list[str], kb: KnowledgeBase | None = None) -> str:
    """Mask known topic names (case-insensitive, brackets included); falls back to mention finding."""
    spans = []
    for name in names:
        m = re.search(r"\[?" + re.escape(name) + r"\]?", question, flags=re.IGNORECASE)
        if m:
            spans.append((m.start(), m.end()))
    if spans or kb is None:
        return mask_spans(question, spans)
    return mask_question(question, kb)
