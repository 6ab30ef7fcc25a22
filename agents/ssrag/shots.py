"""SSRAG's few-shot examples for decomposition and entity extraction, from the KB at hand.

The paper's augmentation prompts are single-turn instructions (§III-A); ours may show
examples first. With ``examples="kb"`` they are the solved examples of the KB's own bank
(:mod:`agents.shots`) nearest to the question by masked question, so a company KB shows
company questions and the KB's own entity types; ``examples="none"`` (or ``n=0``) is the
paper's zero-shot prompt. SSRAG has no bundled examples (no ``bundled`` choice). Whatever the
choice, the extractor is told the KB's entity types.

- decomposition: each example question is one relation chain from its topic entity, so its
  only sub-question is itself (a chain's hops are not self-contained questions);
- entities: the example's topic entities with their KB types.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from hybridrag.kb.base import KnowledgeBase
from hybridrag.prompts import ssrag as P
from hybridrag.prompts.data_block import neutralise

CHOICES = ("kb", "none")
MEMO_SIZE = 256  # questions whose examples are kept (the decomposer and the extractor ask for the same ones)

_memo: OrderedDict[tuple, list] = OrderedDict()
_memo_lock = threading.Lock()


def nearest(kb: KnowledgeBase, question: str, n: int, source: str) -> list:
    """The ``n`` bank examples nearest to ``question`` (none for ``source="none"`` or ``n <= 0``)."""
    if source not in CHOICES:
        raise ValueError(f"examples must be one of {CHOICES}, not {source!r}")
    if source == "none" or n <= 0:
        return []
    from hybridrag.agents.shots import bank_for  # the shared solved-examples bank (built once per KB)

    key = (str(kb.directory), kb.build_token, question, n)
    with _memo_lock:
        found = _memo.get(key)
    if found is None:
        found = bank_for(kb).nearest(question, n)
        with _memo_lock:
            _memo[key] = found
            while len(_memo) > MEMO_SIZE:
                _memo.popitem(last=False)
    return list(found)


def kinds(kb: KnowledgeBase) -> str:
    """The KB's entity types as the extractor's kinds line ('' for an untyped KB)."""
    types = sorted(t for t in kb.graph.schema().entity_types if t)
    return "\n" + P.ENTITY_KINDS.format(kinds=", ".join(types)) if types else ""


def decompose_shots(examples: list) -> str:
    """Examples for the decomposer (appended to its system prompt)."""
    if not examples:
        return ""
    lines = [f"Question: {neutralise(e.question)}\nSub-questions: {neutralise(e.question)}" for e in examples]
    return "\n" + P.EXAMPLES_HEAD.template + "\n" + "\n\n".join(lines)


def entity_shots(examples: list) -> str:
    """Examples for the entity extractor (appended to its system prompt)."""
    if not examples:
        return ""
    lines = [
        f"Question: {neutralise(e.question)}\nEntities: "
        + "; ".join(f"{neutralise(n)} ({t})" for n, t in zip(e.topic, e.topic_types, strict=False))
        for e in examples
    ]
    return "\n" + P.EXAMPLES_HEAD.template + "\n" + "\n\n".join(lines)
