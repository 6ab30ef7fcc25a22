"""Noise: the first decision of a question made wrong in one of the papers' typed ways.

With probability ``p`` (drawn from a generator seeded by the seed and the question text, so
the same questions are noisy for every method and every run) the first routing, planning or
analysis decision of a question carries one error, its type drawn from the method's types:

- ``wrong_entity``: a word of the question that is neither part of the topic entity nor of
  a gold answer is taken for the topic entity;
- ``wrong_relation``: one hop's relation is replaced by another relation (one linking the
  same entity types when the schema has one);
- ``missing_relation``: one hop's relation is left out;
- ``wrong_module``: the other retrieval module (HybGRAG), another source (HydraRAG), the
  TEMPORAL route (SSRAG);
- ``missing_entity``: no topic entity (HybGRAG, HydraRAG, SSRAG); a route without its
  anchor restriction (MoR);
- ``wrong_category``: one node of MoR's plan gets another entity type;
- ``extra_entity`` (HybGRAG, only when asked for with ``types=``): a word of the question taken
  for a second topic entity, so the retrieval intersects two neighbourhoods.

The realistic stand-in (``rates``, a :class:`~evals.oracle.rates.RateTable`) draws instead each
type ``t`` with its own probability ``p_t``, measured per method and hop count from a real model's
first decisions (``oracle:realistic``: SmolLM2-135M on MetaQA dev).

A later decision of the same question repeats the error unless the feedback the method
produced, visible in that later prompt, names it; the role modules decide what names it.
:class:`NoiseLog` records per question which error was drawn, whether a decision carried it
(``applied``), how many later decisions followed and whether one repaired it.
"""

from __future__ import annotations

import random
import re
import threading
from dataclasses import asdict, dataclass

from hybridrag.evals.oracle.gold import RELATION_OF, RELATIONS, TYPE_OF, GoldRecord, norm
from hybridrag.evals.oracle.rates import RateTable
from hybridrag.prompts.grounding import STOP

METHOD_TYPES: dict[str, tuple[str, ...]] = {
    "hybgrag": ("wrong_entity", "wrong_relation", "missing_relation", "wrong_module", "missing_entity"),
    "mor": ("wrong_entity", "wrong_relation", "missing_relation", "wrong_category", "missing_entity"),
    "hydrarag": ("wrong_entity", "wrong_relation", "missing_relation", "wrong_module", "missing_entity"),
    "ssrag": ("wrong_entity", "wrong_module", "missing_entity"),
}
OPT_IN_TYPES: dict[str, tuple[str, ...]] = {"hybgrag": ("extra_entity",)}  # drawn only when named in types
ERROR_TYPES: tuple[str, ...] = tuple(
    dict.fromkeys(t for ts in [*METHOD_TYPES.values(), *OPT_IN_TYPES.values()] for t in ts)
)
# every method's error types, the opt-in ones included (what a rates file may name)
DRAWABLE: dict[str, tuple[str, ...]] = {m: (*ts, *OPT_IN_TYPES.get(m, ())) for m, ts in METHOD_TYPES.items()}
TARGET_TYPE = {RELATION_OF[k]: TYPE_OF[k] for k in RELATION_OF}  # relation → type of its non-movie end
TYPES: tuple[str, ...] = tuple(sorted(set(TYPE_OF.values())))
_WORD = re.compile(r"[^\W_][\w'-]*")


@dataclass(frozen=True)
class Injected:
    """One drawn error and its details (which hop, which wrong name)."""

    type: str
    hop: int = 0
    entity: str = ""
    relation: str = ""
    category: str = ""


def wrong_word(record: GoldRecord, rng: random.Random) -> str:
    """A word of the question outside the topic entity and every gold answer (no stop word)."""
    banned = set(norm(record.topic).split()) | {w for a in record.answers for w in norm(a).split()}
    words = [w for w in _WORD.findall(record.question) if len(w) > 2]
    pool = list(dict.fromkeys(w for w in words if norm(w) not in banned and norm(w) not in STOP))
    return rng.choice(pool) if pool else "something"


def wrong_relation(record: GoldRecord, hop: int, rng: random.Random) -> str:
    """Another relation for ``hop``: one reaching the same entity type when there is one."""
    gold = set(record.relations)
    same = [r for r in RELATIONS if r not in gold and TARGET_TYPE[r] == TARGET_TYPE[record.relations[hop]]]
    return rng.choice(same or [r for r in RELATIONS if r not in gold])


def inject(etype: str, record: GoldRecord, rng: random.Random) -> Injected:
    """The details of an error of type ``etype`` in ``record``'s first decision."""
    hop = rng.randrange(record.hops)
    match etype:
        case "wrong_entity" | "extra_entity":
            return Injected(etype, hop, entity=wrong_word(record, rng))
        case "wrong_relation":
            return Injected(etype, hop, relation=wrong_relation(record, hop, rng))
        case "wrong_category":
            at = rng.randrange(len(record.kinds))
            return Injected(etype, at, category=rng.choice([t for t in TYPES if t != record.types[at]]))
    return Injected(etype, hop)


@dataclass(frozen=True)
class Noise:
    """The noise setting: probability, seed and (optionally) the error types allowed, or measured rates."""

    p: float = 0.0
    seed: int = 0
    types: tuple[str, ...] = ()
    rates: RateTable | None = None

    @property
    def active(self) -> bool:
        """Whether any error can be drawn."""
        return self.p > 0 or self.rates is not None

    def describe(self) -> str:
        """``p=0.3 seed=0``, ``rates=smollm2 seed=0`` or ``none``."""
        if self.rates is not None:
            return f"rates={self.rates.name} seed={self.seed}"
        extra = f" types={'+'.join(self.types)}" if self.types else ""
        return f"p={self.p:g} seed={self.seed}{extra}" if self.p else "none"

    def draw(self, record: GoldRecord, method: str) -> Injected | None:
        """The error of ``record``'s first decision under ``method``, or None (deterministic)."""
        rng = random.Random(f"{self.seed}|{norm(record.question)}")
        if self.rates is not None:
            return self._draw_rated(record, method, rng)
        if self.p <= 0 or rng.random() >= self.p:
            return None
        allowed = [t for t in METHOD_TYPES[method] if not self.types or t in self.types]
        allowed += [t for t in OPT_IN_TYPES.get(method, ()) if t in self.types]
        if not allowed:
            return None
        return inject(rng.choice(allowed), record, rng)

    def _draw_rated(self, record: GoldRecord, method: str, rng: random.Random) -> Injected | None:
        """Type ``t`` with the measured ``p_t`` of the method at the record's hop count, else None."""
        assert self.rates is not None
        rates = self.rates.rates(method, record.hops)
        u, total = rng.random(), 0.0
        for etype in DRAWABLE[method]:
            total += rates.get(etype, 0.0)
            if u < total:
                return inject(etype, record, rng)
        return None


class NoiseLog:
    """Thread-safe record of the errors drawn per question and what became of them."""

    def __init__(self) -> None:
        """An empty log."""
        self._lock = threading.Lock()
        self._entries: dict[str, dict] = {}

    def start(self, record: GoldRecord, method: str, injected: Injected | None) -> None:
        """A question's run begins (its first decision): forget an earlier run, note the draw."""
        key = norm(record.question)
        with self._lock:
            self._entries.pop(key, None)
            if injected is not None:
                self._entries[key] = {
                    "id": record.id,
                    "question": record.question,
                    "method": method,
                    "type": injected.type,
                    "detail": {k: v for k, v in asdict(injected).items() if k != "type" and v not in ("", None)},
                    "applied": False,
                    "applied_by": [],
                    "later_decisions": 0,
                    "repaired": False,
                    "repaired_at": None,
                }

    def applied(self, record: GoldRecord, role: str) -> None:
        """A decision of ``role`` carried the error."""
        with self._lock:
            entry = self._entries.get(norm(record.question))
            if entry is not None:
                entry["applied"] = True
                entry["applied_by"] = list(dict.fromkeys([*entry["applied_by"], role]))

    def later(self, record: GoldRecord, named: bool) -> None:
        """A later decision ran; ``named``: the method's feedback named the error (it is repaired)."""
        with self._lock:
            entry = self._entries.get(norm(record.question))
            if entry is None or not entry["applied"]:
                return
            entry["later_decisions"] += 1
            if named and not entry["repaired"]:
                entry["repaired"], entry["repaired_at"] = True, entry["later_decisions"]

    def entries(self) -> list[dict]:
        """A copy of every entry."""
        with self._lock:
            return [dict(e) for e in self._entries.values()]


def summarise(entries: list[dict]) -> dict:
    """Counts over applied errors: overall and per type, with the repair shares.

    ``repair_share`` = repaired / applied; ``repair_share_when_looped`` = repaired / applied
    errors that were followed by at least one later decision (the loop ran).
    """

    def counts(rows: list[dict]) -> dict:
        looped = [r for r in rows if r["later_decisions"] > 0]
        repaired = sum(r["repaired"] for r in rows)
        return {
            "applied": len(rows),
            "looped": len(looped),
            "repaired": repaired,
            "repair_share": repaired / len(rows) if rows else None,
            "repair_share_when_looped": repaired / len(looped) if looped else None,
        }

    applied = [e for e in entries if e["applied"]]
    types = sorted({e["type"] for e in applied})
    return {
        **counts(applied),
        "drawn": len(entries),
        "by_type": {t: counts([e for e in applied if e["type"] == t]) for t in types},
    }
