"""SSRAG's rule cues and surface checks (no LLM).

Query augmentation (:mod:`agents.ssrag.augment`) falls back to them and checks the LLM's replies
with them.

- :func:`rule_cues`: the question word, time hints, recency and factual cues (paper §III-A, §III-B);
  DetectIntent merges them with the LLM's cues, and a small model's run uses them alone.
- :func:`count_tokens` and :func:`cut_tokens`: the rewrite's token limit, counted without a
  tokenizer file (a deterministic approximation of BPE, below).
- :func:`unique`, :func:`written_in`, :func:`content_words`: case-folded de-duplication, whole-phrase
  occurrence in a text, and a text's content words (the checks that keep small models honest).
"""

from __future__ import annotations

import re
from datetime import date

from hybridrag.kb.text_index import words
from hybridrag.tools.retrieval import explicit_mentions
from hybridrag.tools.text import name_pattern

# A deterministic approximation of a BPE tokenizer (no tokenizer file is needed offline):
# runs of letters in pieces of at most 8, runs of digits in pieces of at most 3 (as GPT-4's
# cl100k groups digits), and every other non-space character (punctuation, "_") alone.
_TOKEN = re.compile(r"[^\W\d_]{1,8}|\d{1,3}|[^\w\s]|_|\w")


def count_tokens(text: str) -> int:
    """Tokens of ``text`` under the approximation above (a word of 1-8 letters is one token)."""
    return sum(1 for _ in _TOKEN.finditer(text))


def cut_tokens(text: str, max_tokens: int) -> str:
    """``text`` up to the end of its ``max_tokens``-th token (unchanged when it fits)."""
    for n, m in enumerate(_TOKEN.finditer(text), 1):
        if n == max_tokens:
            return text[: m.end()]
    return text


_WH = re.compile(r"\b(who|whom|whose|what|when|where|which|why|how)\b", re.IGNORECASE)
# Cues that a question asks about the present or the recent past (paper §III-B examples).
_RECENCY = re.compile(
    r"\b(today|tonight|now|nowadays|currently|current|lately|latest|recent|recently|newest|trending|"
    r"upcoming|breaking|this (?:week|month|year|season)|(?:last|past|next) (?:week|month|few days)|"
    r"so far this year|yesterday|tomorrow)\b",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(?:in |since |during )?((?:1[5-9]|20)\d{2})\b", re.IGNORECASE)
_PERIOD = re.compile(
    r"\b(\d{1,2}(?:st|nd|rd|th) century|middle ages|renaissance|world war (?:i{1,2}|one|two|1|2)|"
    r"cold war|ancient \w+|medieval|victorian era|bronze age|iron age|(?:1[5-9]|20)\d0s)\b",
    re.IGNORECASE,
)
_STOP = {
    "the",
    "and",
    "for",
    "with",
    "who",
    "what",
    "when",
    "where",
    "which",
    "why",
    "how",
    "did",
    "does",
    "was",
    "were",
    "are",
    "is",
    "that",
    "this",
    "from",
    "into",
    "about",
    "has",
    "have",
    "had",
}
RECENT_YEARS = 2  # a year within this many years of today is a recency cue ("in 2023", paper §III-B)


def rule_cues(question: str) -> dict:
    """Cues read by rule: question word, time hints, recency, factual cues (paper §III-A, §III-B)."""
    wh = _WH.search(question)
    intent = None
    if wh:
        word = wh.group(1).lower()
        intent = "who" if word in ("whom", "whose") else word
    this_year = date.today().year
    years = [(m.group(0).strip(), int(m.group(1))) for m in _YEAR.finditer(question)]
    recency = [m.group(0) for m in _RECENCY.finditer(question)]
    recent_years = [text for text, y in years if y >= this_year - RECENT_YEARS]
    factual = [
        *explicit_mentions(question),
        *(m.group(0) for m in _PERIOD.finditer(question)),
        *(str(y) for _, y in years if y < this_year - RECENT_YEARS),
    ]
    return {
        "intent": intent,
        "time_hints": unique(recency + [t for t, _ in years]),
        "recency": bool(recency or recent_years),
        "factual_cues": unique(factual),
    }


def unique(items: list[str]) -> list[str]:
    """The stripped, non-empty items, the first of each case-folded text kept, in order."""
    seen, out = set(), []
    for s in (i.strip() for i in items):
        if s and s.lower() not in seen:
            seen.add(s.lower())
            out.append(s)
    return out


def written_in(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` as a whole phrase, ignoring case."""
    return name_pattern(phrase.strip()).search(text) is not None


def content_words(text: str) -> set[str]:
    """The words of ``text`` longer than two letters, question and stop words left out."""
    return {w for w in words(text) if len(w) > 2 and w not in _STOP}
