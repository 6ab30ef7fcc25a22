"""The question with its names spelled as the KB spells them, before any method reads it.

Users write names in lower case ("films with james macarthur") or with a typo ("the movies Dibalo
Cody directed"); small LLM roles copy a name as the question writes it, and the bank's nearest
examples are found with the question's names masked. :func:`kb_spelling` rewrites:

- **a typo** (as :func:`tools.names.close_spellings` reads one: one swapped pair of neighbouring
  letters or one dropped letter in a word of five letters or more, here only in a word that is no
  :data:`COMMON_WORDS` word and not inside a span that already names an entity) to the entity's
  name, when the fixed span names entities of one spelling, and
- **a name written in lower case** to the KB's own capitalisation, only where the span is clearly
  a name: two words or more, at least one of them not a :data:`COMMON_WORDS` word, and only
  when the question writes no KB name in the KB's own capitalisation elsewhere (a templated
  question writes its name as the KB does; its lower-case words are the template's).

A lone lower-case word is never rewritten either way ("who made the films ..." keeps "made", not
the film "Made"; "the director of targets" keeps "targets"): a single lower-case word is as often an
everyday word as a title. Nothing is rewritten when the entities a span names are spelled in more
than one way (a typo fix that names several: the one spelled as the fixed text, if any), nor when
the question's lower-case text is itself a KB spelling (MetaQA's lower-case tags: "movies about
steve martin" is left, though "Steve Martin" is also a person). A name followed by a possessive
``'s`` is read without it ("the lady from shanghai's writer"). The rewrite is idempotent, and a
question whose names the KB spells as it does comes back unchanged. Work is bounded: questions over
:data:`MAX_WORDS` words are left as written, and a question costs at most ``MAX_MENTION_WORDS x
MAX_WORDS x 4`` exact lookups plus :data:`TYPO_LOOKUPS` for typos.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.names import TYPO_MIN_LETTERS, one_slip_variants
from hybridrag.tools.retrieval import MAX_MENTION_WORDS
from hybridrag.tools.text import WORD

MAX_WORDS = 64
"""Longest question (in words) whose names are respelled; a longer one is left as written."""
TYPO_LOOKUPS = 2000
"""Name lookups one question may spend on typo'd spellings (a miss costs one dictionary or index probe)."""

COMMON_WORDS = frozenset(
    """a an the of in on at by to for from with and or but not no is was were are be been being am do does did
    has have had who whom whose what which when where why how that this these those it its he she they them his
    her their me my i you your we our some any all other same also as than then there here about into over
    film films movie movies picture pictures director directors directed direct writer writers wrote written
    write actor actors actress actresses acted act acting star stars starred starring cast appear appears
    appeared screenwriter screenwriters year years released release language languages genre genres type types
    kind tag tags topic topics people person man woman men women one ones two three many more most list give
    show tell name names made make makes same together share shared shares""".split()
)
"""Words that never make a lower-case span a name by themselves (function words and the question's own words)."""

_EDGE = ",?;:\"'()"
_LIST_EDGE = ',;:"()'
_TOKEN = re.compile(r"\S+")


class _Token(NamedTuple):
    """A word of the question without a final possessive ``'s``, and where it is."""

    start: int
    end: int
    text: str


def _spellings(entities: list[Any], written: str) -> set[str]:
    """The KB's own spellings (names, aliases) of ``entities`` that equal ``written`` case-insensitively."""
    folded = written.casefold()
    return {s for e in entities for s in (e.name, *(e.aliases or ())) if s.casefold() == folded}


def _exact_spans(kb: KnowledgeBase, question: str) -> list[tuple[int, int, str, list[Any]]]:
    """(start, end, form, entities) of runs of words that name a KB entity case-insensitively.

    Mirrors :func:`tools.names.written_spans` (punctuation at a run's edges stripped; longest runs
    first, a run inside a found one skipped) with offsets; among runs of one length, those written
    exactly as a KB spelling are taken first ("the Shadow Company": "Shadow Company", not "the Shadow").
    """
    toks = list(_TOKEN.finditer(question))
    taken, found, seen = [False] * len(toks), [], dict[str, list[Any]]()
    for n in range(min(MAX_MENTION_WORDS, len(toks)), 0, -1):
        for exact_first in (True, False):
            for i in range(len(toks) - n + 1):
                if any(taken[i : i + n]):
                    continue
                start = toks[i].start()
                span = question[start : toks[i + n - 1].end()]
                forms = (span.strip(_LIST_EDGE), span.strip(_EDGE), span.strip(_EDGE + ".!"), _owner(span.strip(_EDGE)))
                for form in dict.fromkeys(forms):
                    if form and form not in seen:
                        seen[form] = kb.graph.lookup(form)
                    entities = seen.get(form) or []
                    if entities and (not exact_first or form in _spellings(entities, form)):
                        at = start + span.find(form)
                        found.append((at, at + len(form), form, entities))
                        taken[i : i + n] = [True] * n
                        break
    return sorted(found, key=lambda f: f[0])


def _clearly_a_name(form: str) -> bool:
    """Two words or more, one of them at least not a :data:`COMMON_WORDS` word."""
    words = form.split()
    return len(words) >= 2 and any(w.strip(_EDGE + ".!").casefold() not in COMMON_WORDS for w in words)


def _case_changes(question: str, spans: list[tuple[int, int, str, list[Any]]]) -> list[tuple[int, int, str]]:
    """(start, end, KB spelling) of clearly-named spans in other letter case; none if a name is written as the KB's."""
    out, first = [], len(question) - len(question.lstrip())
    for start, end, form, entities in spans:
        spellings = _spellings(entities, form)
        if form in spellings:
            if any(c.isupper() for c in form) and not (start == first and len(form.split()) == 1):
                return []  # the question writes a name as the KB does: lower-case words are its template's
            continue
        if form.islower() and len(spellings) == 1 and _clearly_a_name(form):
            out.append((start, end, spellings.pop()))
    return out


def _owner(text: str) -> str:
    """``text`` without a final possessive ``'s`` ("the lady from shanghai's" names "the lady from shanghai")."""
    return text[:-2] if text.endswith(("'s", "’s")) and len(text) > 2 else text


def _one_spelling(kb: KnowledgeBase, text: str) -> str | None:
    """The name of the entities ``text`` names: the one spelled as ``text`` is, else their only name; else None."""
    names = {e.name for e in kb.graph.lookup(text)}
    return text if text in names else (names.pop() if len(names) == 1 else None)


def _typo_changes(kb: KnowledgeBase, question: str, exact: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """(start, end, entity name) of spans naming KB entities of one spelling with one typo in one word.

    The typo is in a word of :data:`TYPO_MIN_LETTERS` letters or more that is no :data:`COMMON_WORDS`
    word and not inside a span that names an entity as written (``exact``); a lone lower-case word
    is never read as a typo'd name. Spans around such a word are tried longest first, at most
    :data:`TYPO_LOOKUPS` lookups a question.
    """
    toks = [_Token(t.start(), t.start() + len(_owner(t.group())), _owner(t.group())) for t in WORD.finditer(question)]
    typo = [
        len(t.text) >= TYPO_MIN_LETTERS
        and t.text.isalpha()
        and t.text.casefold() not in COMMON_WORDS
        and not any(s <= t.start and t.end <= e for s, e in exact)
        for t in toks
    ]
    taken, out, budget = [False] * len(toks), [], TYPO_LOOKUPS
    for n in range(min(MAX_MENTION_WORDS, len(toks)), 0, -1):
        for i in range(len(toks) - n + 1):
            if any(taken[i : i + n]) or budget <= 0:
                continue
            start, end = toks[i].start, toks[i + n - 1].end
            for w in (toks[j] for j in range(i, i + n) if typo[j] and not (n == 1 and toks[j].text.islower())):
                fixes = one_slip_variants(w.text)[:budget]
                budget -= len(fixes)
                head, tail = question[start : w.start], question[w.end : end]
                name = next(filter(None, (_one_spelling(kb, head + f + tail) for f in fixes)), None)
                if name:
                    out.append((start, end, name))
                    taken[i : i + n] = [True] * n
                    break
    return out


def kb_spelling(kb: KnowledgeBase, question: str) -> tuple[str, list[tuple[str, str]]]:
    """``question`` with its names spelled as the KB spells them, and the changes (as written, KB name).

    See the module docstring for what is rewritten and what never is. A KB without a graph, or a
    question over :data:`MAX_WORDS` words, comes back unchanged with no changes.
    """
    graph = getattr(kb, "graph", None)
    if graph is None or not question or len(question.split()) > MAX_WORDS:
        return question, []
    spans = _exact_spans(kb, question)
    typos = _typo_changes(kb, question, [(s, e) for s, e, *_ in spans])
    cased = [c for c in _case_changes(question, spans) if not any(c[0] < e and s < c[1] for s, e, _ in typos)]
    edits = sorted(typos + cased)
    changes = [(question[s:e], name) for s, e, name in edits]
    for s, e, name in reversed(edits):
        question = question[:s] + name + question[e:]
    return question, changes
