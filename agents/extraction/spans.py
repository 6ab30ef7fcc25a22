"""The names and dates of an English sentence, found by their shape, for the rule extractor.

A *name* is a run of capitalised words, which may hold a digit-led word in front ("2014 Winter
Olympics"), a joining word between two capitalised ones ("Town of Brookhaven", "Bank of the
West") and abbreviations ("A&M", "S.A."). Left out: a capitalised function word or pronoun
("The", "In", "She"), a leading article, and a lone nationality word before a lower-case word
("a Russian pianist"), which :func:`nationality` reads instead. A *date* is a day with month and
year, a month with year, or a year of four digits from 1000 to 2099; dates are found first so
their month is never read as a name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan\\.|Feb\\.|Aug\\.|Sept\\.|Oct\\.|Nov\\.|Dec\\."
)
_YEAR = r"(?:1\d{3}|20\d{2})"
_DAY_FIRST, _MONTH_FIRST = rf"\d{{1,2}} (?:{MONTHS}),? {_YEAR}", rf"(?:{MONTHS}) \d{{1,2}},? {_YEAR}"
_DATE = re.compile(rf"\b(?:{_DAY_FIRST}|{_MONTH_FIRST}|(?:{MONTHS}),? {_YEAR}|{_YEAR})(?![\d,]\d)")
_UPPER = r"[^\W\d_a-zß-ÿ]"  # a capital letter, accented ones included ("Śivarāma")
_CAP = rf"(?:{_UPPER}[\w'’&.\-]*)"
_NICKNAME = r'(?:\s"[A-Z][\w.\- ]{0,20}")'  # 'Anthony "Tony" Robinson'
_QUOTED = re.compile(r'"([A-Z0-9][^"]{0,80}?)"')
_JOIN = r"(?:of|the|de|da|del|della|di|du|la|le|van|von|der|den|y|for)"
_NAME = re.compile(rf"(?:\b\d[\w\-]* )?{_CAP}(?:{_NICKNAME}? (?:{_JOIN} )*{_CAP})*")  # within a line
# capitalised words that open a sentence or clause without being (part of) a name
FUNCTION_WORDS = frozenset(
    """a an the in on at of for from by with to as after before during when while since until although
    though however also this that these those there here it its he she his her they their them we our you
    your i my me him who whom whose which what where why how if but and or nor so yet then thus both
    either neither each every all some many most several such one two three no not is was are were be
    being been has had have do does did can could may might will would shall should must born""".split()
)
_DEMONYMS = (
    "American|Mexican|African|German|Cuban|Moroccan|Kenyan|Dominican|Rican|Jamaican|Venezuelan|Ugandan|Tibetan|"
    "Lankan|Angolan|Guatemalan|Nicaraguan|Samoan|Afghan|Pakistani|Israeli|Iraqi|Saudi|Bangladeshi|Somali|Nepali|"
    "Kuwaiti|Qatari|Emirati|Yemeni|Omani|Icelandic|Greek|Thai|Dutch|French|Welsh|Swiss|Basque|Czech|Scots|Slovak"
)
# "Japan", "Milan", "Sochi" end like demonyms: besides the list, only -ian, -ean, -ese and -ish words
NATIONALITY = re.compile(rf"^(?:[A-Z][a-z]+(?:ian|ean|ese|ish)|{_DEMONYMS})$")
_NATION_PREFIX = {"South", "North", "East", "West", "Puerto", "New", "Sri", "Costa", "Saudi", "Sierra"}


@dataclass(frozen=True)
class Span:
    """A name or date of a sentence: its text and where it starts and ends."""

    text: str
    start: int
    end: int
    kind: str  # "name" or "date"


def _trim(text: str, start: int) -> tuple[str, int]:
    """Drop function words in front (articles, "In", "She") and trailing dots of a sentence end."""
    words = text.split(" ")
    while words and words[0].lower().strip(".,") in FUNCTION_WORDS:
        start += len(words[0]) + 1
        words = words[1:]
    while words and words[-1].lower() in FUNCTION_WORDS | {"de", "la", "y"}:
        words = words[:-1]
    out = " ".join(words)
    if out.endswith(".") and not re.search(r"(?:\b[A-Z]\.|\b[A-Z][a-z]?\.[A-Z]\.)$", out):
        out = out[:-1]
    return out.strip(" -'’"), start


def _is_nationality(sentence: str, text: str, end: int) -> bool:
    """A lone nationality-shaped word followed by a lower-case word ("an American actor")."""
    return " " not in text and bool(NATIONALITY.match(text)) and bool(re.match(r"\s+[a-z]", sentence[end:]))


def spans(sentence: str) -> list[Span]:
    """The dates and names of ``sentence`` in reading order (see the module docstring)."""
    found: list[Span] = []
    masked = sentence
    for m in _QUOTED.finditer(sentence):  # a quoted title is one name, whatever its words
        if not re.search(r"[A-Z][\w.]*\s$", sentence[: m.start()]):
            found.append(Span(m.group(1).strip(), m.start(1), m.start(1) + len(m.group(1).strip()), "name"))
            masked = masked[: m.start()] + "#" * (m.end() - m.start()) + masked[m.end() :]
    for m in _DATE.finditer(masked):
        found.append(Span(m.group(0), m.start(), m.end(), "date"))
        masked = masked[: m.start()] + "#" * (m.end() - m.start()) + masked[m.end() :]
    for m in _NAME.finditer(masked):
        text, start = _trim(m.group(0), m.start())
        if not text or text.lower() in FUNCTION_WORDS or _is_nationality(sentence, text, start + len(text)):
            continue
        if not any(c.isupper() for c in text):
            continue
        found.append(Span(text, start, start + len(text), "name"))
    return _join_years(sentence, sorted(found, key=lambda s: s.start))


def _join_years(sentence: str, found: list[Span]) -> list[Span]:
    """A year right before a name belongs to it ("the 2014 Winter Olympics")."""
    out: list[Span] = []
    for span in found:
        last = out[-1] if out else None
        if last and last.kind == "date" and len(last.text) == 4 and span.kind == "name" and span.start == last.end + 1:
            out[-1] = Span(sentence[last.start : span.end], last.start, span.end, "name")
        else:
            out.append(span)
    return out


def nationality(words: str) -> str | None:
    """The nationality word among the words of a description ("a former Indian cricketer" → Indian)."""
    split = words.split()
    for i, w in enumerate(split):
        if NATIONALITY.match(w):
            return f"{split[i - 1]} {w}" if i and split[i - 1] in _NATION_PREFIX else w
    return None
