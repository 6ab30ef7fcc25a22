"""Entity types for a KB whose triples come without them, inferred from relation signatures.

Each relation has two slots, its heads and its tails. Two slots whose entity sets mostly agree
hold one type: they are merged when one set is mostly inside the other (containment at least
``CONTAINMENT``), the two overlap as much as they differ (Jaccard at least ``JACCARD``), or they
share a fair number of members (a KB gives an entity one type: directors who also write must be
typed alike with the writers). Every
merged group is a type, named from the relations whose tails it holds (``directed_by`` → ``director``,
``has_genre`` → ``genre``, ``in_language`` → ``language``; ``person`` for overlapping directors,
writers and actors), or ``item`` when it only ever heads
relations (the things a KB is about). The result is a relation → (head type, tail type) map, as a
user's ``--type-map`` file; the manifest records that it was inferred.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

CONTAINMENT = 0.8
JACCARD = 0.5
SHARED_SMALL, SHARED_LARGE = 0.05, 0.01  # members in common, as a share of the smaller and of the larger slot
_LEADING = {"has", "in", "is", "of", "with", "the"}
_TRAILING = {"by", "of", "in", "to", "at", "on"}
_AGENT = {
    "directed": "director",
    "written": "writer",
    "produced": "producer",
    "edited": "editor",
    "composed": "composer",
    "created": "creator",
    "founded": "founder",
    "owned": "owner",
    "published": "publisher",
    "designed": "designer",
    "developed": "developer",
    "starred": "actor",
}

_PEOPLE = {*_AGENT.values(), "author", "member", "player", "star"}


def type_name(relation: str) -> str:
    """The type a relation's tails have, read off its name (``written_by`` → ``writer``)."""
    words = [w for w in relation.lower().replace("-", "_").split("_") if w]
    agent = len(words) > 1 and words[-1] == "by"
    while len(words) > 1 and words[0] in _LEADING:
        words = words[1:]
    while len(words) > 1 and words[-1] in _TRAILING:
        words = words[:-1]
    if agent or words[0] == "starred":
        words = [_AGENT.get(words[0], words[0])] + words[1:]
        words = words[-1:] if words[0] == "actor" else words
    name = "_".join(words) or "thing"
    return name[:-1] if name.endswith("s") and not name.endswith("ss") and len(name) > 3 else name


class _Groups:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)


def _same_type(a: set[str], b: set[str]) -> bool:
    common = len(a & b)
    if not common:
        return False
    small, large = common / min(len(a), len(b)), common / max(len(a), len(b))
    return small >= CONTAINMENT or common / len(a | b) >= JACCARD or (small >= SHARED_SMALL and large >= SHARED_LARGE)


def infer_type_map(triples: Iterable[tuple[str, str, str]]) -> dict[str, tuple[str, str]]:
    """A relation → (head type, tail type) map for triples ``(head, relation, tail)`` without types."""
    members: dict[tuple[str, str], set[str]] = {}
    for head, relation, tail in triples:
        members.setdefault((relation, "head"), set()).add(head)
        members.setdefault((relation, "tail"), set()).add(tail)
    slots = sorted(members)
    groups = _Groups(len(slots))
    for i, a in enumerate(slots):
        for j in range(i + 1, len(slots)):
            if _same_type(members[a], members[slots[j]]):
                groups.join(i, j)
    names: dict[int, str] = {}
    for root in sorted({groups.find(i) for i in range(len(slots))}):
        tails = [s for i, s in enumerate(slots) if groups.find(i) == root and s[1] == "tail"]
        kinds = {type_name(s[0]) for s in tails}
        if len(kinds) > 1 and kinds <= _PEOPLE:  # directors, writers and actors that overlap: people
            names[root] = "person"
        elif tails:  # named after the relation whose tails make most of the group
            names[root] = type_name(max(tails, key=lambda s: (len(members[s]), s))[0])
        else:
            names[root] = "item"
    taken: Counter[str] = Counter()
    for root in sorted(names):  # two groups with one name: the second gets a number
        taken[names[root]] += 1
        if taken[names[root]] > 1:
            names[root] = f"{names[root]}_{taken[names[root]]}"
    slot_type = {s: names[groups.find(i)] for i, s in enumerate(slots)}
    return {rel: (slot_type[(rel, "head")], slot_type[(rel, "tail")]) for rel, _ in slots}
