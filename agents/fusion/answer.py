"""Fusion's ``answer``: the entity a fact names, else a short span of the top passages, else the top entity.

In order:

1. The first fact-backed item's answer (:func:`agents.fusion.scoring.answer_of`): an entity reached
   through a graph fact answers with its name, a passage stating a fact about a question entity
   with the KB entity that fact names.
2. No fact answers: a short span read off the first :data:`ANSWER_PASSAGES` passages of the
   returned items (:func:`tools.answer_span.answer_span`), as on a documents-only KB.
3. No passage among them: the first returned entity's name that the question does not name.

A list question (:func:`tools.list_answer.asks_for_list`: "what movies ...", "who starred in ...")
answers in step 1 with every fact-backed answer of the first answer's score band, at most
``top_k``, joined by "; " (:func:`tools.list_answer.top_band`).

So the answer is empty only when nothing but the question's own entities was returned, and it is
never an id or a file name.
"""

from __future__ import annotations

from hybridrag.agents.fusion.scoring import Candidate, answer_of
from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.answer_span import answer_span
from hybridrag.tools.dice import Tokenizer
from hybridrag.tools.list_answer import asks_for_list, joined, top_band
from hybridrag.tools.text import name_pattern

ANSWER_PASSAGES = 3  # passages the span is read from: best answer EM of 1/2/3/5 on AdvHotpotQA dev


def answer(
    kb: KnowledgeBase,
    question: str,
    pool: list[Candidate],
    top: list[Candidate],
    named: set[str],
    subjects: dict[str, str],
    tokenizer: Tokenizer = "bigram",
) -> str:
    """The answer to ``question`` read off the whole ranking ``pool`` and the returned items ``top``."""
    found = answer_of(kb, question, pool, named, subjects, tokenizer)
    if found and asks_for_list(question):  # every answer of the top score band (tools/list_answer.py)
        one = lambda c: answer_of(kb, question, [c], named, subjects, tokenizer)  # noqa: E731
        return joined(top_band(pool, lambda c: c.score, one, max(len(top), 1)) or [found])
    if found:
        return found
    texts = [c.text for c in top if c.kind != "entity" and c.text.strip()][:ANSWER_PASSAGES]
    if texts:
        return answer_span(question, texts)
    fresh = [c.name for c in top if c.kind == "entity" and c.name.strip() and not _asked(c, question, named)]
    return fresh[0] if fresh else ""


def _asked(c: Candidate, question: str, named: set[str]) -> bool:
    """Whether ``c`` is one of the question's own entities (found in it, or its name written in it)."""
    return c.id in named or name_pattern(c.name.strip()).search(question) is not None
