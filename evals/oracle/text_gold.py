"""Gold records of questions over documents (AdvHotpotQA), and what a perfect reader sees in a prompt.

A record is built from the dataset's annotations only: the gold answer, the question's
paragraphs (supporting, other real, planted), the rationale sentences, and the titles of the
supporting paragraphs (the topic entities). The stand-in never names a record's paragraph,
title or answer that the prompt does not already show:

- topics (:func:`topics`): the supporting titles the question or the prompt names (a perfect
  model names what it reads); when it names none, the question's own capitalised phrases;
- supported answers (:func:`supported`): a gold answer is given only when a data-block value of
  the prompt states it and that value reads as a real paragraph, i.e. the question's paragraph
  it shares most words with is not a planted one (a perfect reader does not take a planted
  near-duplicate's word over the real text; with only planted text shown it answers nothing).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from hybridrag.evals.oracle.prompt import PromptView, golds_in, phrase_in

PLANTED_TITLE = "added"
MIN_OVERLAP = 0.2  # word Jaccard below which a value is not read as one of the question's paragraphs
_WORD = re.compile(r"\w+")
_CAPS = re.compile(r"\b[A-Z0-9][\w'.-]*(?:\s+(?:of|the|and|de|in|for|[A-Z0-9][\w'.-]*))*")
_QWORDS = frozenset({"what", "which", "who", "whom", "whose", "where", "when", "how", "why", "is", "are", "was", "the"})


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold()))


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


@dataclass(frozen=True)
class TextRecord:
    """The gold annotation of one question over documents (scoring and the stand-in only)."""

    id: str
    question: str
    answers: tuple[str, ...]
    titles: tuple[str, ...]
    supporting: tuple[str, ...]
    others: tuple[str, ...] = ()
    planted: tuple[str, ...] = ()
    rationale: tuple[str, ...] = ()

    @property
    def topic(self) -> str:
        """The first supporting title (a name for messages; rules use :func:`topics`)."""
        return self.titles[0] if self.titles else ""

    def real(self, value: str) -> bool:
        """Whether ``value`` reads as real text: its closest paragraph of the question is not planted."""
        words = _words(value)
        best, planted = MIN_OVERLAP, False
        for texts, fake in ((self.supporting, False), (self.others, False), (self.planted, True)):
            for t in texts:
                score = _jaccard(words, _words(t))
                if score > best or (score == best and fake is False and planted):
                    best, planted = score, fake
        return not planted


def records_from_file(path: str | Path) -> list[TextRecord]:
    """Text gold records of every question of an AdvHotpotQA JSON file."""
    items = json.loads(Path(path).read_text(encoding="utf-8"))
    out = []
    for item in items:
        paras = item.get("paragraphs") or []
        supp = [p for p in paras if p.get("is_supp") and p.get("title") != PLANTED_TITLE]
        rationale = [r.get("sentence", "") for r in item.get("rationale") or [] if isinstance(r, dict)]
        out.append(
            TextRecord(
                id=str(item["qas_id"]),
                question=item["question"],
                answers=(item["answer"],),
                titles=tuple(dict.fromkeys(p["title"] for p in supp)),
                supporting=tuple(p["context"] for p in supp),
                others=tuple(p["context"] for p in paras if not p.get("is_supp") and p.get("title") != PLANTED_TITLE),
                planted=tuple(p["context"] for p in paras if p.get("title") == PLANTED_TITLE),
                rationale=tuple(s for s in rationale if s),
            )
        )
    return out


def question_phrases(question: str) -> list[str]:
    """The question's capitalised phrases (question words and a lone sentence-initial word dropped)."""
    out = []
    for m in _CAPS.finditer(question):
        phrase = m.group(0).strip(" .'")
        words = phrase.split()
        while words and words[0].casefold() in _QWORDS:
            words = words[1:]
        if words and not (m.start() == 0 and len(words) == 1):
            out.append(" ".join(words))
    return list(dict.fromkeys(out))


def topics(rec: TextRecord, view: PromptView | None = None) -> list[str]:
    """Supporting titles the question or the prompt names; else the question's capitalised phrases."""
    shown = [rec.question, *(view.block_values() if view else ())]
    named = [t for t in rec.titles if any(phrase_in(t, s) for s in shown)]
    return named or question_phrases(rec.question)[:2]


def real_values(rec: TextRecord, values: Iterable[str]) -> list[str]:
    """The values that read as real text (see :meth:`TextRecord.real`)."""
    return [v for v in values if rec.real(v)]


def supported(rec: TextRecord, values: Sequence[str]) -> list[str]:
    """Gold answers that a real-reading value states (none when only planted text states one)."""
    return golds_in(rec, real_values(rec, values))  # type: ignore[arg-type]
