"""A read-only view of the knowledge graph: one entity, its type, its neighbours by relation, its passages.

``hybridrag kb show --entity NAME [--kb DIR]`` prints it (:func:`render_text`); the server's
``/graph`` page draws it (:mod:`app.graph_page`). A name is looked up exactly (id, name or
alias, case-insensitive); an unknown name is an :class:`UnknownEntityError` naming the closest
entity names (by the KB's own embeddings). Every list is bounded: at most ``max_neighbours``
neighbours and :data:`MAX_PASSAGES` passages, and a path behind an answer has at most
:data:`MAX_HOPS` hops.
"""
# ruff: noqa: T201 - `kb show` prints its view, like app/cli.py

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hybridrag.app.display import one_line
from hybridrag.kb.model import Triple, UnknownEntityError

if TYPE_CHECKING:  # hybridrag --help builds this module's parser: nothing heavy at import
    from hybridrag.kb.base import KnowledgeBase

MAX_NEIGHBOURS = 40  # neighbours a view shows (the CLI's --max-neighbours may lower or raise it)
MAX_PASSAGES = 5
MAX_HOPS = 3  # the longest path behind an answer that is looked for
CLOSEST = 5  # names offered for an unknown entity


@dataclass
class Neighbour:
    """One edge of the view: the relation, its direction from the entity, the entity at its other end."""

    relation: str
    outgoing: bool
    id: str
    name: str
    type: str


@dataclass
class EntityView:
    """What the view shows of one entity."""

    id: str
    name: str
    type: str
    neighbours: list[Neighbour] = field(default_factory=list)
    total_neighbours: int = 0
    passages: list[str] = field(default_factory=list)


def find_entity(kb: KnowledgeBase, name: str):
    """The entity ``name`` names exactly, or UnknownEntityError naming the closest entity names."""
    if not name.strip():
        raise ValueError("empty entity name: give one, e.g. --entity 'Forrest Gump'")
    exact = kb.graph.lookup(name.strip())
    if exact:
        return exact[0]
    near = [kb.name(h.doc.id) for h in kb.dense_search(name, k=CLOSEST, kind="entity")]
    hint = f"; closest: {', '.join(near)}" if near else ""
    raise UnknownEntityError(f"no entity named {name!r} in the KB{hint}")


def entity_view(kb: KnowledgeBase, name: str, max_neighbours: int = MAX_NEIGHBOURS) -> EntityView:
    """The entity ``name`` with at most ``max_neighbours`` neighbours (by relation) and its passages."""
    if max_neighbours < 1:
        raise ValueError(f"max_neighbours must be at least 1, not {max_neighbours}")
    e = find_entity(kb, name)
    triples = kb.graph.neighbors([e.id], direction="both")
    edges = sorted({(t.type, t.head == e.id, t.tail if t.head == e.id else t.head) for t in triples})
    others = kb.graph.get_many({other for _, _, other in edges[:max_neighbours]})
    view = EntityView(e.id, e.name, e.type, total_neighbours=len(edges))
    for rel, out, other in edges[:max_neighbours]:
        o = others.get(other)
        view.neighbours.append(Neighbour(rel, out, other, o.name if o else other, o.type if o else "entity"))
    docs = [d for d in kb.passages_of({e.id}) if d.kind != "entity"] or [
        d for d in kb.passages_of({e.id}) if d.text.strip()
    ]
    view.passages = [d.text for d in docs[:MAX_PASSAGES]]
    return view


def answer_path(kb: KnowledgeBase, source: str, target: str, max_hops: int = 2) -> list[Triple]:
    """The shortest graph path from entity ``source`` to ``target`` (names), at most ``max_hops`` ≤ MAX_HOPS."""
    hops = max(1, min(max_hops, MAX_HOPS))
    a, b = find_entity(kb, source), find_entity(kb, target)
    paths = kb.graph.paths([a.id], [b.id], max_hops=hops, limit=20)
    return min(paths, key=len) if paths else []


def relation_label(n: Neighbour) -> str:
    """``relation →`` for an edge leaving the entity, ``← relation`` for one arriving."""
    rel = n.relation.replace("_", " ")
    return f"{rel} →" if n.outgoing else f"← {rel}"


def render_text(view: EntityView, width: int = 100) -> str:
    """The view as text: the entity and its type, neighbours grouped by relation, its passages."""
    lines = [f"{view.name}  [{view.type}]  id: {view.id}"]
    groups: dict[tuple[str, bool], list[str]] = {}
    for n in view.neighbours:
        groups.setdefault((n.relation.replace("_", " "), n.outgoing), []).append(n.name)
    shown = len(view.neighbours)
    more = f" (showing {shown})" if shown < view.total_neighbours else ""
    lines.append(f"neighbours: {view.total_neighbours}{more}")
    for (rel, out), names in groups.items():
        them = one_line("; ".join(names), width)
        lines.append(f"  {view.name} → {rel} → {them}" if out else f"  {them} → {rel} → {view.name}")
    lines.append(f"passages: {len(view.passages)}" if view.passages else "passages: none")
    for i, text in enumerate(view.passages, 1):
        lines.append(f"  {i}. {one_line(text, width)}")
    return "\n".join(lines)


def add_show_arguments(kb_sub: argparse._SubParsersAction) -> None:
    """Add ``hybridrag kb show --entity NAME [--kb DIR] [--max-neighbours N]`` to the ``kb`` group."""
    p = kb_sub.add_parser("show", help="show an entity: its type, neighbours by relation and passages (read-only)")
    p.add_argument("--entity", required=True, help="an entity's name, alias or id")
    p.add_argument("--kb", type=Path, help="KB directory (default: the bundled sample KB)")
    p.add_argument("--max-neighbours", type=int, default=MAX_NEIGHBOURS, help="neighbours to list (default: 40)")
    p.set_defaults(func=run_show)


def run_show(args: argparse.Namespace) -> int:
    """Print the view of ``args.entity`` in ``args.kb``."""
    from hybridrag.kb.base import open_kb
    from hybridrag.kb.sample import sample_kb_dir

    kb = open_kb(args.kb if args.kb else sample_kb_dir())
    print(render_text(entity_view(kb, args.entity, args.max_neighbours)))
    return 0
