"""Solved examples per KB (a "bank") and the nearest examples of a question, entity masked.

- :class:`SolvedExample`: question, masked question, topic entities and types, relation path,
  answer type, answers, source (``schema``, ``run`` or ``user``), optional role outputs.
- :func:`synthesize`: examples written from the KB's schema and its own entities (no LLM).
- :func:`bank_for`: the KB's ``bank.jsonl`` if built, else synthesized examples (cached).
- :meth:`Bank.nearest`: the closest examples by embedding the question with its entity
  mentions replaced by ``<E>`` (:func:`mask_question`, names with one typo included), in the
  KB's embedding model, re-ranked by how each example's relation path follows the question's
  relation cues (:mod:`agents.shots.cues`).

See docs/bank.md.
"""

from hybridrag.agents.shots.bank import Bank, bank_for, bank_path
from hybridrag.agents.shots.example import MASK, SolvedExample
from hybridrag.agents.shots.mask import find_mentions, mask_question
from hybridrag.agents.shots.synth import synthesize

__all__ = ["MASK", "Bank", "SolvedExample", "bank_for", "bank_path", "find_mentions", "mask_question", "synthesize"]
