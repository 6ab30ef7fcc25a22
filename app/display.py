"""A method's output as a person reads it: the answer first, then numbered items with their own evidence.

Every method returns ``answer``, ``ranked`` and ``evidence`` (docs/architecture.md, "Output
shape"). The evidence list is not parallel to the ranked list (HybGRAG gives each reference its
text and every reasoning path; MoR a trajectory and a text), so an item's evidence is found, not
zipped:

1. the evidence entries whose ``id`` is the item's id;
2. else the entries whose text or path names the item (HydraRAG's paths carry a passage or path
   id, the entity they reach is named in the path).

Items are shown in the order of the score they show (ties keep the method's order), at most
``max_items``; texts are collapsed to one line and cut at ``width`` characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

PER_ITEM = 2  # evidence lines shown under one item


@dataclass
class ViewItem:
    """One numbered line of the view: an item and the evidence that is its own."""

    rank: int
    name: str
    kind: str
    source: str
    score: float
    evidence: list[dict] = field(default_factory=list)


def one_line(text: Any, width: int = 100) -> str:
    """``text`` on one line (runs of whitespace, newlines included, become one space), cut at ``width`` with …."""
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= width else flat[: max(width - 1, 0)].rstrip() + "…"


def _score(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _names(text: str, name: str) -> bool:
    if not name.strip():
        return False
    return re.search(rf"(?<!\w){re.escape(name.strip())}(?!\w)", text, flags=re.IGNORECASE) is not None


def evidence_of(item: dict, evidence: list[dict]) -> list[dict]:
    """The evidence entries of ``item``: those with its id, else those whose text or path names it."""
    own = [e for e in evidence if e.get("id") is not None and str(e.get("id")) == str(item.get("id"))]
    if own:
        return own
    name = str(item.get("name", ""))
    return [e for e in evidence if _names(f"{e.get('text', '')} {' '.join(map(str, e.get('path') or []))}", name)]


def answer_view(out: dict, max_items: int = 10) -> tuple[str, list[ViewItem]]:
    """``(answer, items)`` of a method's output: the items by the score they show, each with its evidence."""
    ranked = [r for r in out.get("ranked") or [] if isinstance(r, dict)]
    evidence = [e for e in out.get("evidence") or [] if isinstance(e, dict)]
    order = sorted(range(len(ranked)), key=lambda i: -_score(ranked[i].get("score")))[:max_items]
    items = []
    for n, i in enumerate(order, 1):
        r = ranked[i]
        items.append(
            ViewItem(
                n,
                str(r.get("name", r.get("id", ""))),
                str(r.get("kind", "")),
                str(r.get("source", "")),
                _score(r.get("score")),
                evidence_of(r, evidence)[:PER_ITEM],
            )
        )
    return str(out.get("answer") or "").strip(), items


def render_text(out: dict, width: int = 100, max_items: int = 10) -> str:
    """The CLI's reading of an output: ``answer: ...``, then numbered items, each with its evidence lines."""
    answer, items = answer_view(out, max_items)
    lines = [f"answer: {one_line(answer, 4 * width) or '(none)'}"]
    if items:
        lines.append("evidence:")
    for it in items:
        lines.append(f"{it.rank:>2}. {one_line(it.name, width)}  [{it.source} {it.score:.3f}]")
        for ev in it.evidence:
            lines.append(f"      {ev.get('source', '')}: {one_line(ev.get('text', ''), width)}")
        if not it.evidence:
            lines.append("      (no evidence of its own)")
    return "\n".join(lines)
