"""The inputs of one ingest, read and checked: duplicate ids and triples are counted and warned about."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from hybridrag.kb.build import gc_paused, triple_keys
from hybridrag.kb.loaders import read_entities, read_passages, read_triples, read_type_map
from hybridrag.kb.model import Entity, Passage, Triple


@dataclass
class Inputs:
    """Parsed, checked inputs of one ingest."""

    triples: list[Triple]
    entities: dict[str, Entity]
    type_map: dict[str, tuple[str, str]]
    passages: list[Passage]
    warnings: list[str] = field(default_factory=list)


def _first_of_each(items: list, path: Path, what: str, warnings: list[str]) -> list:
    """Keep the first row per id; warn with the count of later rows that repeated an id."""
    seen: dict[str, object] = {}
    dups: list[str] = []
    for item in items:
        if item.id in seen:
            dups.append(item.id)
        else:
            seen[item.id] = item
    if dups:
        shown = ", ".join(repr(d) for d in list(dict.fromkeys(dups))[:3])
        warnings.append(
            f"{path}: {len(dups)} {what} rows repeat an id already seen (e.g. {shown}); kept the first row of each"
        )
    return list(seen.values())


def parse_inputs(
    triples: Sequence[str | Path],
    entities: str | Path | None = None,
    passages: str | Path | None = None,
    type_map: str | Path | dict | None = None,
    progress: bool = True,
) -> Inputs:
    """Read every input file; duplicate ids and triples are dropped with a counted warning."""
    warnings: list[str] = []
    ents = {}
    if entities:
        ents = {
            e.id: e for e in _first_of_each(list(read_entities(Path(entities))), Path(entities), "entity", warnings)
        }
    tmap = type_map if isinstance(type_map, dict) else (read_type_map(Path(type_map)) if type_map else {})
    parsed: list[Triple] = []
    with gc_paused():  # millions of acyclic Triples: nothing for the cyclic GC to find, much to re-scan
        for path in triples:
            it = read_triples(Path(path))
            parsed.extend(tqdm(it, desc=f"triples {Path(path).name}", unit=" triples", disable=not progress))
        repeated = len(parsed) - len(set(triple_keys(parsed)))
    if repeated:
        warnings.append(f"{repeated} duplicate triples in the triple files; kept one of each")
    pas = _first_of_each(list(read_passages(Path(passages))), Path(passages), "passage", warnings) if passages else []
    return Inputs(parsed, ents, tmap, pas, warnings)
