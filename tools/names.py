"""KB names a question writes, as it writes them (punctuation kept: ``Railroaded!``, ``Albert S. Rogell``).

The word-level :func:`tools.retrieval.mentions_in` drops punctuation, so names that carry it are
missed and generic words (``film``) match instead; small-model roles that must pick a topic entity
among the question's own names (SSRAG's entity extraction, HydraRAG's topic choices) use these.
"""

from __future__ import annotations

from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.retrieval import MAX_MENTION_WORDS, mentions_in
from hybridrag.tools.text import WORD, name_pattern

_EDGE = ",?;:\"'()"
_LIST_EDGE = ',;:"()'  # what a name never ends with (it may end with ? or ': "Are You Scared?", "Takeshis'")


def written_spans(kb: KnowledgeBase, question: str) -> list[str]:
    """Runs of the question's words, punctuation kept, that name a KB entity, as the question writes them.

    ``Railroaded!`` and ``Albert S. Rogell`` are found though the word-level mentions miss both.
    Longest runs are tried first and a run inside a longer found one is skipped; returned in
    question order.
    """
    toks, found = question.split(), []
    taken = [False] * len(toks)
    for n in range(min(MAX_MENTION_WORDS, len(toks)), 0, -1):
        for i in range(len(toks) - n + 1):
            if any(taken[i : i + n]):
                continue
            span = " ".join(toks[i : i + n])
            for form in dict.fromkeys((span.strip(_LIST_EDGE), span.strip(_EDGE), span.strip(_EDGE + ".!"))):
                if form and kb.graph.lookup(form):
                    found.append((i, form))
                    taken[i : i + n] = [True] * n
                    break
    return [form for _, form in sorted(found)]


def known_names(kb: KnowledgeBase, question: str) -> list[str]:
    """Names of KB entities the question writes verbatim.

    These are :func:`written_spans`, then longer word-level mentions not inside one of them. A name
    matched only through an alias is left out, so no KB text reaches the feedback.
    """
    spans = written_spans(kb, question)
    names = (kb.name(i) for i in mentions_in(kb, question))
    more = [
        n for n in names if name_pattern(n).search(question) and not any(n.casefold() in s.casefold() for s in spans)
    ]
    return list(dict.fromkeys([*spans, *more]))


def _words(text: str) -> list[str]:
    return [w.casefold() for w in WORD.findall(text)]


def prefer_exact(kb: KnowledgeBase, question: str, ids: list[str], named: list[str]) -> list[str]:
    """``ids`` (entities found by similarity) without those the question's exactly written names outrank.

    ``named`` are the ids ``question`` writes verbatim (:func:`tools.retrieval.mentions_in`). A
    question that writes "Big" is about the title "Big", so the nearest dense entity ("The Big
    Picture", "Big Fish") is not kept beside it. A similar entity stays when the question names
    nothing, or when it writes more of that entity's words than the longest exactly written name
    has ("who directed the big lebowsky" writes "Big" and two of "The Big Lebowski"'s words).
    """
    if not named:
        return ids
    keep, asked = set(named), set(_words(question))
    longest = max(len(_words(kb.name(i))) for i in named)
    return [i for i in ids if i in keep or sum(w in asked for w in _words(kb.name(i))) > longest]
