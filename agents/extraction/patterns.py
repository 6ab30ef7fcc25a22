"""Graph extraction from plain English without a model: sentence patterns around names and dates.

``hybridrag ingest --documents DIR --extract-llm rules`` reads each chunk with these rules. Per
sentence, names and dates (:mod:`agents.extraction.spans`), then:

- the *subject*: the name a sentence (a Markdown heading is one) opens with (after "The", or after
  an opening phrase ended by a comma: "In Greek mythology, Echo ..."); "He", "She", "It" or "They"
  opening a sentence, or
  "its"/"his"/"her"/"their", stand for the chunk's *topic*, the subject of its first sentence;
- a parenthesis after a name: "(born 7 August 1977 in Oslo)" gives ``born_on`` and ``born_in``,
  two dates "(May 4, 1924 – November 22, 1993)" ``born_on`` and ``died_on``, "(also known as X)"
  an alias;
- the copula "X is a former Indian cricketer": X's type is the description's last noun
  (``cricketer``) and its nationality word a ``nationality`` fact; "X is the capital of Y" and
  "X is an album by Y": the description's words are the relation (``capital_of``, ``album_by``);
- an appositive "Y, a subsidiary of Z" and an opening "An imprint of Z, its parent company is Y";
- two places "in Sochi, Russia": ``located_in``;
- two names joined by a few lower-case words "Echo met Narcissus": those words are the relation
  (articles, copulas and adverbs left out); a verb after "and" belongs to the subject ("... and
  released in 2009"); a date's relation is the words before it and its head the subject.

Relations are the text's own words as ``snake_case`` phrases, so the graph has no fixed relation
vocabulary; every fact still goes through :func:`kb.extract.clean` (names must occur in the chunk)
and entity resolution with the chunk as its provenance.
"""

from __future__ import annotations

import re

from hybridrag.agents.extraction.spans import FUNCTION_WORDS, Span, nationality, spans
from hybridrag.kb.extract import ExtractedEntity, ExtractedRelation, Extraction
from hybridrag.tools.text import sentences

MAX_GAP_WORDS = 7  # lower-case words between two names that can still state a relation
MAX_RELATION_WORDS = 4
_PRONOUNS = {"he", "she", "it", "they"}
_POSSESSIVES = r"(?:[Ii]ts|[Hh]is|[Hh]er|[Tt]heir)"
_COPULA = re.compile(r"^\s*,?\s*(?:is|was|are|were)\s+(?:also\s+|now\s+|currently\s+)?(.*)$")
_PREPOSITIONS = {"of", "in", "at", "on", "from", "for", "by", "near", "to", "with", "into", "since", "until"}
_DROP = {"a", "an", "the", "is", "was", "are", "were", "be", "been", "being", "has", "have", "had", "also", "then"}
_DROP |= {"currently", "now", "former", "who", "which", "that", "its", "his", "her", "their", "and", "both", "later"}
_PAREN = re.compile(r"\(([^()]*)\)")
_DESCRIPTION_END = re.compile(r",|;|\b(?:who|which|that|where|whose|and|based|located|known|created|founded)\b")


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z][\w'’/\-]*", text)


def _relation(between: str) -> str:
    """The relation words of a gap: articles, copulas, adverbs and nationality words left out."""
    kept = [w.lower() for w in _words(between) if w.lower() not in _DROP and not nationality(w)]
    return " ".join(kept[-MAX_RELATION_WORDS:])


def _has_verb(words: list[str]) -> bool:
    """Whether lower-case words hold something verb-like (a past form, or a verb ending the phrase)."""
    return any(w.endswith("ed") or w in {"won", "met", "made", "wrote", "became", "plays", "sang"} for w in words)


class _Facts:
    """Entities (name → type) and relations gathered from one chunk."""

    def __init__(self) -> None:
        self.entities: dict[str, str] = {}
        self.aliases: dict[str, list[str]] = {}
        self.relations: dict[tuple[str, str, str], None] = {}

    def entity(self, name: str, kind: str = "") -> None:
        if kind or name not in self.entities:
            self.entities[name] = kind or self.entities.get(name, "")

    def add(self, head: str, relation: str, tail: str, tail_kind: str = "") -> None:
        if head and tail and relation and head.lower() != tail.lower():
            self.entity(head)
            self.entity(tail, tail_kind)
            self.relations[(head, relation, tail)] = None

    def extraction(self) -> Extraction:
        linked = {n for h, _, t in self.relations for n in (h, t)}  # a bare name adds nothing the text lacks
        return Extraction(
            entities=[
                ExtractedEntity(name=n, type=t, aliases=self.aliases.get(n, []))
                for n, t in self.entities.items()
                if n in linked
            ],
            relations=[ExtractedRelation(head=h, relation=r, tail=t) for h, r, t in self.relations],
        )


def _parenthesis(owner: str, inside: str, facts: _Facts) -> None:
    """Birth, death and alias facts of a parenthesis that follows a name."""
    found = spans(inside)
    dates = [s.text for s in found if s.kind == "date"]
    born = re.search(r"\bborn\b", inside)
    if born:
        after = [s for s in found if s.start > born.end()]
        if after and after[0].kind == "date":
            facts.add(owner, "born_on", after[0].text, "date")
        place = re.search(r"\bin\s+", inside[born.end() :])
        places = [s for s in after if s.kind == "name" and place and s.start >= born.end() + place.end()]
        if places:
            facts.add(owner, "born_in", places[0].text)
    elif len(dates) == 2 and len(inside) < 80:
        facts.add(owner, "born_on", dates[0], "date")
        facts.add(owner, "died_on", dates[1], "date")
    known = re.search(r"\b(?:known as|or|also|née|nicknamed)\s+", inside)
    names = [s.text for s in found if s.kind == "name" and known and s.start == known.end()]
    if names:
        facts.entity(owner)
        facts.aliases.setdefault(owner, []).append(names[0])


def _blank_parentheses(sentence: str, facts: _Facts) -> str:
    """Read each parenthesis after a name, then blank it out (same length, so offsets keep)."""
    for m in _PAREN.finditer(sentence):
        before = [s for s in spans(sentence[: m.start()]) if s.kind == "name" and s.end >= m.start() - 1]
        if before:
            _parenthesis(before[-1].text, m.group(1), facts)
    return _PAREN.sub(lambda m: " " * len(m.group(0)), sentence)


def _subject(sentence: str, found: list[Span], topic: str | None) -> tuple[str | None, int]:
    """The sentence's subject and where the text after it starts (see the module docstring)."""
    first = sentence.split(" ", 1)[0].lower()
    if first in _PRONOUNS and topic:
        return topic, len(first)
    if not found or found[0].kind != "name":
        return None, 0
    lead = sentence[: found[0].start].strip()
    if not lead or lead.lower() in {"the", "a", "an"} or lead.endswith(","):
        return found[0].text, found[0].end
    return None, 0


def _copula(subject: str, rest: str, facts: _Facts) -> None:
    """Type and nationality of "X is a former Indian cricketer" (the description up to its end)."""
    m = _COPULA.match(rest)
    if not m:
        return
    description = _DESCRIPTION_END.split(m.group(1), maxsplit=1)[0]
    description = re.split(r"\s(?:\w+ed|written|made|known|built|run|owned|set)\b", description, maxsplit=1)[0]
    words = _words(description)
    if not words or words[0].lower() not in {"a", "an", "the"}:
        return
    noun = [w for w in words[1:] if w.lower() not in _PREPOSITIONS]
    cut = next((i for i, w in enumerate(words[1:], 1) if w.lower() in _PREPOSITIONS), len(words))
    head_noun = [w for w in words[1:cut] if w.islower()]
    if head_noun and all(w.islower() or nationality(w) for w in words[1:cut]):
        facts.entity(subject, head_noun[-1].lower())
    country = nationality(" ".join(noun))
    if country:
        facts.add(subject, "nationality", country)


def _pair(prev: Span, tail: Span, gap: str, subject: str | None, sentence: str, facts: _Facts) -> None:
    """The fact two neighbouring spans state, if any (see the module docstring)."""
    words = _words(gap)
    if len(words) > MAX_GAP_WORDS or ";" in gap:
        return
    kind = "date" if tail.kind == "date" else ""
    if tail.kind == "date":
        relation = _relation(" ".join(words[-3:]))
        head = subject
        stated = any(w not in _PREPOSITIONS for w in relation.split())  # "from 7 to DATE" states nothing
        if head and words and stated and words[-1].lower() in _PREPOSITIONS:
            facts.add(head, relation, tail.text, kind)
        return
    if prev.kind != "name":
        return
    if gap.strip() == ",":
        before = _words(sentence[: prev.start])[-1:]
        after = sentence[tail.end : tail.end + 1]
        if before and before[0].lower() in {"in", "at", "from", "near", "of"} and after in ("", ",", "."):
            facts.add(prev.text, "located_in", tail.text)
        return
    appositive = re.match(r"^,\s+(?:a|an|the)\s+([a-z][a-z ]*?\s(?:of|in|for|by|from|at))\s+$", gap)
    if appositive:
        facts.add(prev.text, _relation(appositive.group(1)), tail.text)
        return
    if "," in gap or any(w[0].isupper() for w in words if not nationality(w)):
        return
    lower = [w.lower() for w in words]
    if lower and lower[0] in {"and", "or", "nor"} and not (_has_verb(lower) and subject):
        return
    head = subject if lower and lower[0] == "and" and subject else prev.text
    if _COPULA.match(gap) and not set(lower) & _PREPOSITIONS:
        return  # "X is the low-powered Y": a description, not a relation
    relation = _relation(gap)
    if relation and (relation not in _PREPOSITIONS or relation == "in"):
        facts.add(head, relation, tail.text)


def _opening(sentence: str, found: list[Span], topic: str | None, facts: _Facts) -> None:
    """The topic's facts of an opening phrase and a possessive: "An imprint of Z, its parent company is Y"."""
    if not topic:
        return
    for span in found:
        if span.kind != "name":
            continue
        before = sentence[: span.start]
        opening = re.match(r"^(?:[Aa]n?|[Tt]he)\s+([a-z][a-z ]*?\s(?:of|for|by|from|in))\s+$", before)
        if opening:
            facts.add(topic, _relation(opening.group(1)), span.text)
        owned = re.search(rf"\b{_POSSESSIVES}\s+([a-z][a-z ]{{1,40}}?)\s+(?:is|was|are|were)\s+$", before)
        if owned:
            facts.add(topic, _relation(owned.group(1)), span.text)


def _sentence(sentence: str, topic: str | None, facts: _Facts) -> str | None:
    """Facts of one sentence; returns the chunk's topic (this sentence's subject when there was none)."""
    main = _blank_parentheses(sentence, facts)
    found = spans(main)
    subject, after = _subject(main, found, topic)
    topic = topic or subject
    if subject:
        facts.entity(subject)
        _copula(subject, main[after:], facts)
    _opening(main, found, topic, facts)
    ordered = [s for s in found if s.start >= after] if subject else found
    if subject:
        ordered = [Span(subject, after, after, "name"), *ordered]
    for prev, tail in zip(ordered, ordered[1:], strict=False):
        _pair(prev, tail, main[prev.end : tail.start], subject, main, facts)
    for span in found:
        if span.kind == "name" and span.text.lower() not in FUNCTION_WORDS:
            facts.entity(span.text)
    return topic


def pattern_extraction(text: str) -> Extraction:
    """Entities (typed where a copula says so) and relations of a text by rule (see the module docstring)."""
    facts, topic = _Facts(), None
    for line in text.splitlines():  # a heading or list item is a sentence of its own
        for sentence in sentences(line.lstrip("#*-> \t")):
            topic = _sentence(sentence, topic, facts)
    return facts.extraction()
