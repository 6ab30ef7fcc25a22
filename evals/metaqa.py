"""MetaQA's question types: the relation of every hop and the entity type of every kind.

A question type names the kinds along its path (``actor_to_movie_to_director``); every hop has a
movie on one side and the kind on the other names the relation (``starred_actors``, then
``directed_by``).
"""

from __future__ import annotations

RELATION_OF = {
    "director": "directed_by",
    "writer": "written_by",
    "actor": "starred_actors",
    "year": "release_year",
    "language": "in_language",
    "tags": "has_tags",
    "tag": "has_tags",
    "genre": "has_genre",
    "imdbvotes": "has_imdb_votes",
    "imdbrating": "has_imdb_rating",
}
TYPE_OF = {
    "movie": "movie",
    "director": "person",
    "writer": "person",
    "actor": "person",
    "year": "year",
    "language": "language",
    "tags": "tag",
    "tag": "tag",
    "genre": "genre",
    "imdbvotes": "votes",
    "imdbrating": "rating",
}


def relation_path(qtype: str) -> list[str]:
    """MetaQA question type → relation per hop (every hop has a movie on one side)."""
    kinds = qtype.split("_to_")
    path = []
    for a, b in zip(kinds, kinds[1:], strict=False):
        other = b if a == "movie" else a
        if other not in RELATION_OF:
            raise ValueError(f"unknown MetaQA hop {a}_to_{b} in {qtype!r}")
        path.append(RELATION_OF[other])
    return path
