"""Everyday words for the words of relation and type names: how people ask for a label they never see.

Dice over relation labels only rewards a question that spells the label ("who directed X" →
``directed_by``); people write "who made X", "tell me the cast of X", "how popular is X". Each
entry below maps a word that KB relation and type names use (matched as a prefix of a label word of
four letters or more: ``direct`` covers ``directed_by``, ``star`` covers ``starred_actors``) to the
everyday words that ask for it. The table is written from English usage for the relation words, not
from any question set, and is keyed by label words, so any KB whose labels use them (``written_by``,
``author``, ``release_date``) gets the same cues. A relation is *cued* by a question when the
question, without the name of the edge's seed entity, holds one of its label's cue words or
phrases; the cued relations' edges score :data:`CUE_WEIGHT` higher (the type's cues
:data:`KIND_WEIGHT`), on the Dice scale of :mod:`agents.fusion.one_hop`. The bank's example
ranking reads the same cues, with their places in the question (:mod:`agents.shots.cues`).
"""

from __future__ import annotations

import re
from functools import lru_cache

CUE_WEIGHT = 0.5  # added to the relation term of an edge whose relation the question cues
KIND_WEIGHT = 0.1  # added when the question cues the type of the entity the edge leads to
LEXICON: dict[str, tuple[str, ...]] = {
    "direct": (
        "direct",
        "directs",
        "directed",
        "director",
        "directors",
        "made",
        "make",
        "makes",
        "filmmaker",
        "helmed",
    ),
    "star": (
        "star",
        "stars",
        "starred",
        "starring",
        "cast",
        "actor",
        "actors",
        "actress",
        "acted",
        "acts",
        "act",
        "plays",
        "played",
        "appears",
        "appeared",
        "appear",
        "features",
        "featuring",
        "is in",
        "was in",
        "been in",
    ),
    "actor": ("actor", "actors", "actress", "acted", "cast"),
    "writ": (
        "wrote",
        "write",
        "writes",
        "writer",
        "writers",
        "written",
        "script",
        "scripts",
        "screenplay",
        "screenplays",
        "screenwriter",
        "author",
        "authored",
        "penned",
    ),
    "author": ("wrote", "write", "writer", "author", "authored", "penned"),
    "genre": ("genre", "genres", "kind of", "kinds of", "type of", "types of", "sort of", "category"),
    "year": ("year", "years", "when"),
    "release": ("released", "release", "come out", "came out", "premiered"),
    "date": ("when", "date"),
    "language": ("language", "languages", "spoken", "speak"),
    "tags": (
        "about",
        "describe",
        "described",
        "describes",
        "describing",
        "topic",
        "topics",
        "words",
        "terms",
        "keywords",
        "themes",
        "tagged",
    ),
    "rating": ("rating", "rated", "rate", "good", "score", "scored"),
    "votes": ("votes", "voted", "popular", "popularity", "famous", "known"),
    "person": ("who", "whom", "whose"),
}
_WORD = re.compile(r"[\w'-]+")


def _label_words(label: str) -> list[str]:
    return [w for w in re.split(r"[^a-z]+", label.casefold()) if len(w) >= 4]


@lru_cache(maxsize=4096)
def cues_of(label: str) -> frozenset[str]:
    """The cue words and phrases of a relation or type label (empty when no entry matches its words)."""
    out: set[str] = set()
    for word in _label_words(label) or [label.casefold()]:
        for key, cues in LEXICON.items():
            if word.startswith(key):
                out.update(cues)
    return frozenset(out)


def asked_text(question: str, name: str) -> str:
    """The question's words, case-folded and space-joined, without a seed's name.

    The name's phrase becomes a gap (so "what language is X in" holds no "is in"); a name the
    question does not write as a phrase (a typo) loses its words one by one.
    """
    text, folded = question.casefold(), name.casefold().strip()
    if folded and re.search(rf"(?<!\w){re.escape(folded)}(?!\w)", text):
        text = re.sub(rf"(?<!\w){re.escape(folded)}(?!\w)", " | ", text)
        drop: set[str] = set()
    else:
        drop = {w for w in _WORD.findall(folded) if len(w) >= 4}
    return " " + " ".join(w for w in re.findall(r"[\w'-]+|\|", text) if w not in drop) + " "


def cued(asked: str, label: str) -> bool:
    """Whether ``asked`` (from :func:`asked_text`) holds a cue word or phrase of ``label`` as whole words."""
    return any(f" {c} " in asked for c in cues_of(label))


def cue_bonus(asked: str, relation: str, kind: str = "") -> float:
    """The lexicon's addition to an edge's relation term: cued relation, cued type of its far end."""
    return CUE_WEIGHT * cued(asked, relation) + (KIND_WEIGHT * cued(asked, kind) if kind else 0.0)


def asking_words(relations: tuple[str, ...]) -> frozenset[str]:
    """Every cue word or phrase of these relation and type labels."""
    return frozenset(c for r in relations for c in cues_of(r))


def topics_only(names: dict[str, str], relations: tuple[str, ...]) -> list[str]:
    """The question's named entity ids without those whose whole name is a cue of a label (``{id: name}``).

    "how good is the lookout rated" names the rating entity ``good`` beside the film: the word asks
    for the rating, it is not a topic. Such names are left out only when another name remains.
    """
    cues = asking_words(relations)
    kept = [i for i, n in names.items() if n.casefold().strip() not in cues]
    return kept if kept else list(names)
