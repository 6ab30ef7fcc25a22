"""A short answer read off retrieved text: the span of a passage that best fits the question.

Used when a method's answer would otherwise be a passage id or nothing (a documents KB, a small
model's rules). The rule, in order:

1. The question's answer type from its wording: ``when`` / ``what year`` → a date or year;
   ``how many`` / ``how much`` / ``what number`` / ``which number`` → a number or an ordinal;
   ``who`` / ``whom`` → a name; anything else → a name or a noun phrase.
2. Candidates in each passage: capitalised runs (``Sochi, Russia``, ``Victorian College of the
   Arts``), dates, years, numbers and ordinals. A candidate whose words all appear in the question
   is the question's own entity and is skipped. For a ``who`` question, a sentence opening with
   He, She or They also offers the passage's topic (the first name of its first sentence).
3. Each passage sentence is scored by the question words it shares (stems, stop words left out);
   the best candidate of the right type in the best sentence wins, earlier passages first on ties.
   No candidate of the right type: the best of any type. Nothing: the best sentence itself, so an
   answer is never empty while the text holds one.

:func:`passage_answer` applies the rule to a method's ranked items: the texts of the top
:data:`PASSAGES` passages about no entity (:func:`bare_passage`, whose names are ids).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hybridrag.tools.text import WORD, sentences

_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_DATE = re.compile(rf"\b(?:{_MONTH}\s+\d{{1,2}},\s+\d{{3,4}}|\d{{1,2}}\s+{_MONTH}\s+\d{{3,4}}|{_MONTH}\s+\d{{3,4}})\b")
_YEAR = re.compile(r"\b(?:1[0-9]|20)\d\d\b")
_NUMBER = re.compile(
    r"\b\d+(?:,\d{3})*(?:\.\d+)?(?:st|nd|rd|th)?\b|\b(?:first|second|third|fourth|fifth|sixth|"
    r"seventh|eighth|ninth|tenth|one|two|three|four|five|six|seven|eight|nine|ten|twelve)\b",
    re.IGNORECASE,
)
_JOIN = r"(?:of|the|and|de|la|von|van|for|'s)"
_NAME = re.compile(rf"[A-Z][\w'&.-]*(?:(?:\s+|,\s+)(?:{_JOIN}\s+)*[A-Z][\w'&.-]*)*")
_STOP = frozenset(
    "a an the of in on at to for by with from and or is was were are be been did does do what which who whom whose "
    "when where why how many much that this these those it its as he she they his her their there than into".split()
)
_CUES = (
    ("date", ("when", "what year", "which year", "what date", "what day")),
    ("number", ("how many", "how much", "what number", "which number", "what rank", "how old", "how long")),
    ("place", ("where", "what city", "which city", "what country", "which country", "what state", "which state")),
    ("name", ("who", "whom", "whose", "what", "which")),
)
PASSAGES = 3  # passages a ranked list's answer is read from (the top one and the two after it)
_PRONOUNS = frozenset(("he", "she", "they"))  # a sentence opening with one is about its passage's topic
_OPENERS = frozenset("additionally however also after before during in on at the a an it its he she they this".split())


@dataclass(frozen=True)
class Candidate:
    """One span of a passage that could answer the question."""

    text: str
    kind: str  # "date", "number" or "name"
    passage: int
    sentence_score: float
    position: int


def answer_type(question: str) -> str:
    """``date``, ``number``, ``place`` or ``name``: what kind of span answers ``question``.

    The question word that comes first decides ("Where were the Olympics held when ..." asks a place).
    """
    return _first_cue(question)[0]


def _first_cue(question: str) -> tuple[str, str]:
    """(answer kind, question word) of the first question word; ``("name", "")`` when there is none."""
    q = " " + re.sub(r"[^\w' ]", " ", question.lower()) + " "
    cues = [(q.find(f" {w} "), -len(w), kind, w) for kind, words in _CUES for w in words if f" {w} " in q]
    if not cues:
        return "name", ""
    _, _, kind, word = min(cues)
    return kind, word


def _stem(word: str) -> str:
    word = word.lower().removesuffix("'s")
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _content(text: str) -> set[str]:
    return {_stem(w) for w in WORD.findall(text) if w.lower() not in _STOP}


def _spans(sentence: str) -> list[tuple[str, str, int]]:
    """(text, kind, offset) of every candidate span of a sentence, dates before the years inside them."""
    found: list[tuple[str, str, int]] = []
    taken: list[tuple[int, int]] = []
    for pattern, kind in ((_DATE, "date"), (_YEAR, "date"), (_NUMBER, "number"), (_NAME, "name")):
        for m in pattern.finditer(sentence):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            text = m.group(0).strip(" ,.")
            head, sep, rest = text.partition(" ")
            if kind == "name" and rest and (head.rstrip(",").lower() in _OPENERS or head.rstrip(",").endswith("ly")):
                text = rest.lstrip(", ")  # "Additionally, Virgin" names Virgin
            if text:
                found.append((text, kind, m.start()))
                taken.append((m.start(), m.end()))
    return found


def _opener(text: str, offset: int) -> bool:
    """Whether a span is a capitalised sentence opener ("However", "She"), not a name."""
    words = [w.lower() for w in WORD.findall(text)]
    return offset == 0 and len(words) == 1 and (words[0] in _OPENERS or words[0].endswith("ly"))


def _topic(first: str) -> str:
    """The name a passage is about: the first name in its first sentence ('' when there is none)."""
    return next((t for t, kind, at in _spans(first) if kind == "name" and not _opener(t, at)), "")


def _with_subject(sentence: str, topic: str) -> list[tuple[str, str, int]]:
    """The spans of a sentence, its passage's ``topic`` first when the sentence opens with He, She or They."""
    spans = _spans(sentence)
    first = WORD.match(sentence)
    if topic and first and first.group(0).lower() in _PRONOUNS:
        return [(topic, "name", 0), *spans]
    return spans


def _asks_who(question: str) -> bool:
    """Whether the question asks for a person: ``who`` or ``whom`` is its first question word."""
    return _first_cue(question)[1] in ("who", "whom")


def candidates(question: str, passages: Sequence[str]) -> list[Candidate]:
    """Every candidate span of the passages that is not the question's own words.

    For a ``who`` question, a sentence opening with He, She or They also offers its passage's topic
    (the first name of the passage) as the person it speaks of, unless the question names part of it.
    """
    asked, own = _content(question), {w.lower() for w in WORD.findall(question)}
    who = _asks_who(question)
    out = []
    for p, passage in enumerate(passages):
        said = sentences(passage)
        topic = _topic(said[0]) if said and who else ""
        if any(w.lower() in own for w in WORD.findall(topic)):
            topic = ""  # "Jeffrey Perry" for a question about Jeff Perry: the question's own person
        for sentence in said:
            overlap = len(asked & _content(sentence))
            for text, kind, offset in _with_subject(sentence, topic):
                words = [w.lower() for w in WORD.findall(text)]
                if not words or all(w in own or w in _STOP for w in words):
                    continue
                if _opener(text, offset):
                    continue
                fresh = sum(w not in own for w in words) / len(words)
                out.append(Candidate(text, kind, p, overlap + fresh, offset))
    return out


def _rest(c: Candidate) -> tuple[int, float, int]:
    return c.passage, c.sentence_score + 0.5, c.position


def answer_span(question: str, passages: Sequence[str]) -> str:
    """The short answer the passages give to ``question`` by the rule of this module ('' for no text)."""
    found = candidates(question, passages)
    want = answer_type(question)
    if want == "place":  # a place is a name; "City, Country" reads as one
        found = [c if c.kind != "name" or "," not in c.text else Candidate(c.text, "place", *_rest(c)) for c in found]
        typed = [c for c in found if c.kind == "place"] or [c for c in found if c.kind == "name"] or found
    else:
        typed = [c for c in found if c.kind == want] or found
    if typed:
        best = max(typed, key=lambda c: (c.sentence_score, -c.passage, -c.position))
        return best.text
    asked = _content(question)
    ranked = [(len(asked & _content(s)), -p, s) for p, text in enumerate(passages) for s in sentences(text)]
    return max(ranked)[2] if ranked else ""


def bare_passage(item: Mapping) -> bool:
    """Whether a retrieved item is a passage about no KB entity: its name is an id, never an answer."""
    return item.get("kind") == "passage" and not item.get("entity_id")


def names_passage(text: str, items: Sequence[Mapping]) -> bool:
    """Whether ``text`` is the id, name or file name of a passage about no entity among ``items``."""
    text = text.strip()
    labels = {str(i.get(k) or "") for i in items if bare_passage(i) for k in ("id", "name")}
    return bool(text) and (text in labels or text in {label.split("#", 1)[0] for label in labels})


def passage_answer(question: str, items: Sequence[Mapping], k: int = PASSAGES) -> str:
    """The span (:func:`answer_span`) the first ``k`` passages about no entity among ``items`` give to ``question``.

    ``items`` are retrieved items, best first, each with ``kind``, ``text`` and optional ``entity_id``.
    """
    texts = [str(i.get("text") or "") for i in items if bare_passage(i)][:k]
    return answer_span(question, texts)
