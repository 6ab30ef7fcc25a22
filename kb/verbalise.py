"""Render triples as short English sentences (passages for text-only facts)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from hybridrag.kb.model import Passage, Triple

TEMPLATES = {
    "directed_by": "{h} was directed by {t}.",
    "written_by": "{h} was written by {t}.",
    "starred_actors": "{t} starred in {h}.",
    "release_year": "{h} was released in {t}.",
    "in_language": "{h} is in {t}.",
    "has_tags": "{h} is tagged as {t}.",
    "has_genre": "{h} is a {t} film.",
    "has_imdb_votes": "{h} is {t} among IMDb voters.",
    "has_imdb_rating": "{h} has an IMDb rating of {t}.",
}


def sentence(t: Triple) -> str:
    """One sentence stating the triple."""
    template = TEMPLATES.get(t.type, "{h} " + t.type.replace("_", " ") + " {t}.")
    return template.format(h=t.head, t=t.tail)


def passages_about_heads(triples: Iterable[Triple], source: str = "doc") -> list[Passage]:
    """Group triples by head entity and write one passage per head."""
    by_head: dict[str, list[Triple]] = defaultdict(list)
    for t in triples:
        by_head[t.head].append(t)
    return [Passage(f"p:{head}", " ".join(sentence(t) for t in ts), head, source) for head, ts in by_head.items()]
