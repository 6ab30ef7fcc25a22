"""Measured error rates of a real model's first decisions: what the realistic stand-in draws from.

A rates file (``<name>.json`` in this folder, written by ``python -m benchmarks realistic-rates``)
holds, per LLM method, the share of MetaQA dev questions whose first decision (router, planner,
analysis, entity extraction) the model got wrong in each noise type of
:mod:`hybridrag.evals.oracle.noise`, over all hop counts (``all``) and per hop count
(``by_hops``). :class:`RateTable` reads it; ``oracle:rates=<name>`` (or ``oracle:realistic``,
the SmolLM2 file) makes the stand-in draw each question's error type ``t`` with probability
``p_t`` of the question's method and hop count.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

FOLDER = Path(__file__).resolve().parent
DEFAULT = "smollm2"  # oracle:realistic


@dataclass(frozen=True)
class RateTable:
    """Per method, per hop count (``0``: all hops pooled), the probability of each error type."""

    name: str
    table: dict[str, dict[int, dict[str, float]]] = field(default_factory=dict, compare=False, hash=False)

    def rates(self, method: str, hops: int) -> dict[str, float]:
        """The rates of ``method`` at ``hops`` (the pooled rates when that hop count was not measured)."""
        by_hops = self.table.get(method)
        if by_hops is None:
            raise ValueError(f"rates file {self.name!r} has no rates for method {method!r}")
        return by_hops.get(hops, by_hops[0])


def names() -> list[str]:
    """The rates files shipped here."""
    return sorted(p.stem for p in FOLDER.glob("*.json"))


def _probs(rates: object, where: str, known: tuple[str, ...]) -> dict[str, float]:
    if not isinstance(rates, dict):
        raise ValueError(f"{where}: 'rates' must map error types to probabilities")
    unknown = sorted(set(rates) - set(known))
    if unknown:
        raise ValueError(f"{where}: unknown error type(s) {unknown}; choose from {', '.join(known)}")
    probs = {str(t): float(p) for t, p in rates.items()}
    if any(not 0.0 <= p <= 1.0 for p in probs.values()) or sum(probs.values()) > 1.0 + 1e-9:
        raise ValueError(f"{where}: each rate must lie in [0, 1] and they must sum to at most 1, got {probs}")
    return probs


def parse_table(name: str, data: object, methods: dict[str, tuple[str, ...]]) -> RateTable:
    """A :class:`RateTable` from a rates file's content; ``methods``: every method's drawable types."""
    if not isinstance(data, dict) or not isinstance(data.get("methods"), dict):
        raise ValueError(f"rates file {name!r} has no 'methods' object")
    table: dict[str, dict[int, dict[str, float]]] = {}
    for method, known in methods.items():
        entry = data["methods"].get(method)
        if not isinstance(entry, dict) or "all" not in entry:
            raise ValueError(f"rates file {name!r} has no 'all' rates for method {method!r}")
        by = {0: _probs(entry["all"].get("rates"), f"{name}: {method} all", known)}
        for hops, cell in (entry.get("by_hops") or {}).items():
            by[int(hops)] = _probs(cell.get("rates"), f"{name}: {method} {hops}-hop", known)
        table[method] = by
    return RateTable(name, table)


def load(name: str, methods: dict[str, tuple[str, ...]]) -> RateTable:
    """The rates file ``name`` of this folder (ValueError naming the files there when it is missing or bad)."""
    if not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"bad rates name {name!r}: a file name of {FOLDER} without .json")
    path = FOLDER / f"{name}.json"
    if not path.is_file():
        raise ValueError(f"no rates file {name!r}; one of {', '.join(names()) or '(none)'} in {FOLDER}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"rates file {path} is not valid JSON: {exc}") from None
    return parse_table(name, data, methods)
