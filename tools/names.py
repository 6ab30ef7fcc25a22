"""KB names a question writes, as it writes them (punctuation kept: ``Railroaded!``, ``Albert S. Rogell``).

The word-level :func:`tools.retrieval.mentions_in` drops punctuation, so names that carry it are
missed and generic words (``film``) match instead; small-model roles that must pick a topic entity
among the question's own names (SSRAG's entity extraction, HydraRAG's topic choices) use these.
"""

from __future__ import annotations

from difflib import SequenceMatcher

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


def _close(word: str, other: set[str]) -> bool:
    """A word of four letters or more that is one of ``other`` or a close spelling of one (ratio 0.8)."""
    return len(word) >= 4 and (word in other or any(SequenceMatcher(None, word, o).ratio() >= 0.8 for o in other))


def _widest_run(asked: list[str], written: list[str], other: set[str]) -> int:
    """Words of the longest run of ``asked`` that holds ``written`` and, around it, only :func:`_close` words."""
    n, best = len(written), 0
    for i in range(len(asked) - n + 1):
        if asked[i : i + n] != written:
            continue
        left, right = i, i + n
        while left > 0 and _close(asked[left - 1], other):
            left -= 1
        while right < len(asked) and _close(asked[right], other):
            right += 1
        best = max(best, right - left)
    return best


def prefer_exact(kb: KnowledgeBase, question: str, ids: list[str], named: list[str]) -> list[str]:
    """``ids`` (entities found by similarity) without those the question's exactly written names outrank.

    ``named`` are the ids ``question`` writes verbatim (:func:`tools.retrieval.mentions_in`). A
    question that writes "Big" is about the title "Big", so the nearest dense entity ("The Big
    Picture", "Big Fish") is not kept beside it. A similar entity stays when the question names
    nothing, or when a written name sits in a longer run of the entity's own words of four letters
    or more, or close spellings of them: "who directed big lebowsky" writes "Big" inside "big
    lebowsky", two words of "The Big Lebowski"; "who acted in the movie Smoke" keeps no "The Man
    Who Quit Smoking", and "who acted in Manhattan" no "Two Men in Manhattan" ("in" is too short).
    """
    if not named:
        return ids
    keep, asked = set(named), _words(question)
    written = [_words(kb.name(i)) for i in named]
    out = []
    for i in ids:
        own = set(_words(kb.name(i)))
        if i in keep or any(_widest_run(asked, w, own) > len(w) for w in written if w):
            out.append(i)
    return out


TYPO_MIN_LETTERS = 5  # a shorter word has too many one-swap neighbours to read a typo into it
TYPO_LOOKUPS = 600  # name lookups one question may spend on close spellings


def one_slip_variants(word: str) -> list[str]:
    """The word with one pair of neighbouring letters swapped, or one letter before its last dropped (not a plural)."""
    swapped = [word[:k] + word[k + 1] + word[k] + word[k + 2 :] for k in range(len(word) - 1) if word[k] != word[k + 1]]
    dropped = [word[:k] + word[k + 1 :] for k in range(len(word) - 1)]
    return list(dict.fromkeys(w for w in [*swapped, *dropped] if w != word))


def close_spellings(kb: KnowledgeBase, question: str) -> list[tuple[int, int, list[str]]]:
    """(start, end offset, entity ids) of question spans that name a KB entity with one typo.

    A span of one to :data:`~tools.retrieval.MAX_MENTION_WORDS` words matches when one of its words
    of :data:`TYPO_MIN_LETTERS` letters or more, with two neighbouring letters swapped back or one
    letter dropped, makes the span a KB name (case-insensitive lookup): "A Sumemr by the River" is
    "A Summer by the River". Longest spans first; a span inside a found one is skipped; at most
    :data:`TYPO_LOOKUPS` lookups per question. Spans the question writes exactly are no typo and skipped.
    """
    toks = list(WORD.finditer(question))
    taken, found, budget = [False] * len(toks), [], TYPO_LOOKUPS
    for n in range(min(MAX_MENTION_WORDS, len(toks)), 0, -1):
        for i in range(len(toks) - n + 1):
            if any(taken[i : i + n]) or budget <= 0:
                continue
            start, end = toks[i].start(), toks[i + n - 1].end()
            words = [t.group() for t in toks[i : i + n]]
            if kb.graph.lookup(question[start:end]):
                continue
            for j, w in enumerate(words):
                if len(w) < TYPO_MIN_LETTERS or not w.isalpha():
                    continue
                for fixed in one_slip_variants(w):
                    budget -= 1
                    name = question[start:end].replace(w, fixed, 1) if words.count(w) == 1 else None
                    name = name or " ".join([*words[:j], fixed, *words[j + 1 :]])
                    if ents := kb.graph.lookup(name):
                        found.append((start, end, [e.id for e in ents]))
                        taken[i : i + n] = [True] * n
                        break
                if taken[i]:
                    break
    return sorted(found)
