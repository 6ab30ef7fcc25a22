"""Synthetic MetaQA KBs k times the size: the triples replicated with renamed entities.

Copy 1 is MetaQA itself (names unchanged, so 1× is the real KB); copy ``c`` ≥ 2 renames every
entity ``X`` to ``X #c`` and keeps the relations. Copies share no entity, so a k× KB is k
disconnected replicas of the MetaQA graph: every question has the same neighbourhood at every
factor, and what grows is only what the rest of the KB costs (indexes, tables, memory).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

SUFFIX = re.compile(r" #(\d+)$")
SEP = "|"


def copy_name(name: str, copy: int) -> str:
    """The name of entity ``name`` in copy ``copy`` (1-based; copy 1 is the original)."""
    if copy < 1:
        raise ValueError(f"copy numbers start at 1, got {copy}")
    return name if copy == 1 else f"{name} #{copy}"


def original_name(name: str) -> str:
    """The MetaQA name a copy's entity was renamed from."""
    return SUFFIX.sub("", name)


def _rows(src: Path) -> list[tuple[str, str, str]]:
    rows = []
    for no, line in enumerate(src.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split(SEP)
        if len(parts) != 3:
            raise ValueError(f"{src}:{no}: expected head|relation|tail, got {line!r}")
        for name in (parts[0], parts[2]):
            if SUFFIX.search(name):  # a copy's name must map back to exactly one original
                raise ValueError(f"{src}:{no}: entity {name!r} already ends like a copy suffix ' #N'")
        rows.append((parts[0], parts[1], parts[2]))
    return rows


def write_synthetic(src: str | Path, out: str | Path, factor: int) -> dict:
    """Write ``factor`` renamed copies of the triples in ``src`` to ``out``; return the counts."""
    if factor < 1:
        raise ValueError(f"factor must be a positive integer, got {factor}")
    src, out = Path(src), Path(out)
    rows = _rows(src)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for c in range(1, factor + 1):
            f.writelines(f"{copy_name(h, c)}{SEP}{r}{SEP}{copy_name(t, c)}\n" for h, r, t in rows)
    tmp.replace(out)
    names = {n for h, _, t in rows for n in (h, t)}
    return {
        "factor": factor,
        "triples": len(rows) * factor,
        "entities": len(names) * factor,
        "source_triples": len(rows),
        "source_entities": len(names),
    }


def paths(work: Path, factor: int) -> tuple[Path, Path]:
    """The synthetic kb.txt and the KB directory of one factor under the work dir."""
    return work / f"x{factor}" / "kb.txt", work / f"x{factor}" / "kb"


def random_copies(n: int, factor: int, seed: int = 0) -> list[int]:
    """``n`` copy numbers drawn uniformly from 1..factor (seeded)."""
    rng = random.Random(seed)
    return [rng.randint(1, factor) for _ in range(n)]
