"""Entity resolution for extracted graphs: one entity per real thing, each merge recorded.

Mentions whose names differ only in case, spacing or punctuation share a key
(:func:`kb.extract.name_key`) and are one entity (reason ``case``). Keys are then joined when
one is an alias of the other, given by the extractor or by an entity already in the KB
(``alias``), when a key is the name of an entity already in the KB (``existing``), and when two
names are near-duplicates (``near_duplicate``: similarity at least ``threshold``, the same digits,
compatible types; compared between neighbours in sorted order, so the cost stays linear).
Two entities already in the KB are never merged with each other. A new entity's id and name
are its most frequent surface form; its type the most frequent one given (``type_conflict``
recorded when mentions disagree).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from hybridrag.kb.extract import ChunkFacts, name_key
from hybridrag.kb.model import Entity, Triple

WINDOW = 12  # neighbours in sorted order compared for near-duplicates
ARTICLES = ("the ", "a ", "an ")
_DIGITS = re.compile(r"\d+")


@dataclass
class Resolved:
    """The graph extracted from the chunks, resolved: new and updated entities, triples, provenance, merges."""

    entities: list[Entity]
    triples: list[Triple]
    provenance: dict[Triple, list[str]]
    merges: list[dict] = field(default_factory=list)


class _Groups:
    """Union-find over name keys; a group holds at most one entity already in the KB."""

    def __init__(self, existing: dict[str, str]) -> None:
        self.parent: dict[str, str] = {}
        self.existing = dict(existing)  # root key -> existing entity id

    def find(self, key: str) -> str:
        self.parent.setdefault(key, key)
        root = key
        for _ in range(len(self.parent)):
            if self.parent[root] == root:
                break
            root = self.parent[root]
        self.parent[key] = root
        return root

    def union(self, a: str, b: str) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb or (ra in self.existing and rb in self.existing):
            return False
        if rb in self.existing:
            ra, rb = rb, ra
        self.parent[rb] = ra
        return True


def _bare(key: str) -> str:
    for art in ARTICLES:
        if key.startswith(art) and len(key) > len(art) + 2:
            return key[len(art) :]
    return key


def _near(a: str, b: str, threshold: float) -> float:
    """Similarity of two keys, 0 when their digits differ (Apollo 11 is not Apollo 13)."""
    short, total = min(len(a), len(b)), len(a) + len(b)
    if short < 4 or 2 * short < threshold * total:  # the ratio is at most 2 * short / total
        return 0.0
    if _DIGITS.findall(a) != _DIGITS.findall(b):
        return 0.0
    m = SequenceMatcher(None, a, b, autojunk=False)
    if m.real_quick_ratio() < threshold or m.quick_ratio() < threshold:
        return 0.0
    return m.ratio()


def _compatible(ta: Counter, tb: Counter) -> bool:
    a, b = set(ta) - {"entity"}, set(tb) - {"entity"}
    return not a or not b or bool(a & b)


def _ref(entity_id: str) -> str:
    """The group key of an entity already in the KB (never equal to a name key)."""
    return f"\x00{entity_id}"


Join = Callable[..., None]


def _mentions(facts: list[ChunkFacts]) -> tuple[dict[str, Counter], dict[str, Counter], dict[str, set[str]]]:
    """Per name key: its surface forms, its types and its aliases, counted over every chunk."""
    surfaces: dict[str, Counter] = defaultdict(Counter)
    types: dict[str, Counter] = defaultdict(Counter)
    aliases: dict[str, set[str]] = defaultdict(set)
    for f in facts:
        for key, (name, kind, given) in f.entities.items():
            surfaces[key][name] += 1
            types[key][kind] += 1
            aliases[key].update(given)
    return surfaces, types, aliases


def _known_keys(existing: Sequence[Entity]) -> dict[str, str]:
    """Name key -> id of an entity already in the KB: names first, then aliases."""
    known: dict[str, str] = {}
    for e in existing:
        known.setdefault(name_key(e.name), e.id)
    for e in existing:
        for a in e.aliases:
            known.setdefault(name_key(a), e.id)
    return known


def _join_names(
    surfaces: dict[str, Counter],
    types: dict[str, Counter],
    aliases: dict[str, set[str]],
    existing: Sequence[Entity],
    groups: _Groups,
    join: Join,
) -> None:
    """Join each key to the KB entity it names or aliases, to the keys its aliases name, and to its bare form."""
    known = _known_keys(existing)
    by_id = {e.id: e for e in existing}
    for key in list(surfaces):
        groups.find(key)
        if key in known:
            same = name_key(by_id[known[key]].name) == key
            join(_ref(known[key]), key, "existing" if same else "alias")
        for alias in sorted(aliases[key]):
            other = name_key(alias)
            if other in known:
                join(_ref(known[other]), key, "alias")
            elif other in surfaces:
                join(other, key, "alias")
        if _bare(key) != key and _bare(key) in surfaces and _compatible(types[key], types[_bare(key)]):
            join(_bare(key), key, "near_duplicate")


def _join_near(pool: dict[str, str], kinds: dict[str, Counter], threshold: float, join: Join) -> None:
    """Join near-duplicate keys, each compared with its neighbours in sorted and in reversed-text order."""
    for order in (sorted(pool), sorted(pool, key=lambda k: k[::-1])):
        for i, a in enumerate(order):
            for b in order[i + 1 : i + 1 + WINDOW]:
                if pool[a].startswith("\x00") and pool[b].startswith("\x00"):
                    continue  # two entities already in the KB are never merged
                score = _near(a, b, threshold)
                if score >= threshold and _compatible(kinds[pool[a]], kinds[pool[b]]):
                    join(pool[a], pool[b], "near_duplicate", score)


def resolve(facts: Iterable[ChunkFacts], existing: Sequence[Entity] = (), threshold: float = 0.92) -> Resolved:
    """Merge the mentions of every chunk into entities, map triples to ids, keep each triple's chunks."""
    facts = list(facts)
    surfaces, types, aliases = _mentions(facts)
    by_id = {e.id: e for e in existing}
    groups = _Groups({_ref(e.id): e.id for e in existing})
    merges: list[dict] = []

    def show(key: str) -> str:
        return surfaces[key].most_common(1)[0][0] if key in surfaces else by_id[groups.existing[key]].name

    def join(a: str, b: str, reason: str, score: float = 1.0) -> None:
        if groups.union(a, b):
            merges.append({"names": [show(a), show(b)], "reason": reason, "score": round(score, 3)})

    _join_names(surfaces, types, aliases, existing, groups, join)
    pool = {**{name_key(e.name): _ref(e.id) for e in reversed(existing)}, **{k: k for k in surfaces}}
    kinds = {**{_ref(e.id): Counter([e.type]) for e in existing}, **types}
    _join_near(pool, kinds, threshold, join)
    return _assemble(facts, surfaces, types, aliases, groups, by_id, merges)


def _free_id(name: str, taken: set[str]) -> str:
    """``name``, or ``name (2)``, ``name (3)``... when an entity already has that id."""
    for n in range(1, len(taken) + 2):
        candidate = name if n == 1 else f"{name} ({n})"
        if candidate not in taken:
            return candidate
    raise AssertionError("unreachable: more candidates than taken ids")


def _assemble(
    facts, surfaces, types, aliases, groups: _Groups, by_id: dict[str, Entity], merges: list[dict]
) -> Resolved:
    members: dict[str, list[str]] = defaultdict(list)
    for key in surfaces:
        members[groups.find(key)].append(key)
    ids: dict[str, str] = {}
    entities: list[Entity] = []
    taken = set(by_id)
    for root, keys in members.items():
        names: Counter[str] = sum((surfaces[k] for k in keys), Counter())
        kinds: Counter[str] = sum((types[k] for k in keys), Counter())
        for k in keys:  # surfaces of one key differ only in case, spacing or punctuation
            top = surfaces[k].most_common(1)[0][0]
            merges.extend({"names": [top, n], "reason": "case", "score": 1.0} for n in sorted(surfaces[k]) if n != top)
        other = set().union(*(aliases[k] for k in keys)) | set(names)
        if root in groups.existing:
            old = by_id[groups.existing[root]]
            eid, seen = old.id, {name_key(a) for a in (old.name, *old.aliases)}
            new_aliases = tuple(sorted({name_key(a): a for a in other if name_key(a) not in seen}.values()))
            if new_aliases:
                entities.append(Entity(old.id, old.name, old.type, old.text, old.aliases + new_aliases))
        else:
            name = max(names, key=lambda n: (names[n], len(n), n))
            eid = _free_id(name, taken)
            plain = Counter({k: v for k, v in kinds.items() if k != "entity"}) or kinds
            kind = max(plain, key=lambda t: (plain[t], t))
            if len(plain) > 1:
                merges.append({"names": [name], "reason": "type_conflict", "types": dict(plain), "kept": kind})
            alias = sorted({name_key(a): a for a in other if name_key(a) != name_key(name)}.values())
            entities.append(Entity(eid, name, kind, None, tuple(alias)))
        taken.add(eid)
        for k in keys:
            ids[k] = eid
    for m in merges:
        m.setdefault("into", ids.get(name_key(m["names"][-1])) or ids.get(name_key(m["names"][0])))
    provenance: dict[Triple, list[str]] = {}
    for f in facts:
        for head, rel, tail in f.triples:
            t = Triple(ids[head], rel, ids[tail])
            if t.head != t.tail:
                provenance.setdefault(t, [])
                if f.chunk_id not in provenance[t]:
                    provenance[t].append(f.chunk_id)
    return Resolved(entities, list(provenance), provenance, merges)
