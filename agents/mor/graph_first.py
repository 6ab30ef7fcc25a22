"""MoR's graph-first candidate pool (ours; ``ranking="graph_first"``, the default; no LLM).

Two changes to the paper's single pool:

- the question's topic entity is never a candidate answer. A route that returns to its start
  category (``movie<Heat> → person → movie``) walks back to the seed it started from, and
  textual matching of the question finds that seed again at the last layer; the paper keeps it
  (and reports its worst results on such "P → A → P" routes). The topic entities of a route
  with at least one hop are its layer-0 seeds that its first node's restriction names
  (:func:`topic_entities`), or its best seed when it names none;
- when a valid plan's traversal reached candidates along the route's edges all the way from a
  topic entity, every other candidate (a text match somewhere on its trajectory: a look-alike
  seed, an intermediate or last-layer text match) ranks below them, as fillers already do: a
  name that merely looks like the question ("The Astronaut Farmer" → Mimsy Farmer, or a film
  of the director of a look-alike seed) cannot outrank an entity reached along the planned
  relations from the entity the question names.

``ranking="paper"`` keeps the paper's behaviour: every reached entity in one pool, ordered by
the reranker score alone.
"""

from __future__ import annotations

import numpy as np

from hybridrag.agents.mor.traversal import Trajectory, anchored, select_candidates
from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.text import name_pattern

TEXT_TIER = 1  # rerank tier of text-only candidates (0: structurally reached; fillers rank last)


def _named(name: str, question: str) -> bool:
    name = name.strip().lower()
    return bool(name) and name_pattern(name).search(question.lower()) is not None


def topic_entities(kb: KnowledgeBase, route: dict, seeds: list[str]) -> set[str]:
    """The topic entities of one route (none for 0 hops), the first of these sets that is not empty.

    The layer-0 seeds named exactly as the first node's restriction; the entities of the first
    node's type that have exactly that name in the KB (textual matching can miss a short or common
    name: the film "Western" among every western's passage); the seeds the restriction names as a
    phrase and no longer named seed contains ("Beauty and the Beast", not "The Beast"); the best seed.
    """
    first = route["nodes"][0]
    restriction = first.get("restriction", "").strip().lower()
    if len(route["nodes"]) < 2 or not seeds:
        return set()
    names = {s: n.strip().lower() for s, n in kb.names(seeds).items()}  # one store read
    exact = {s for s, n in names.items() if n and n == restriction}
    linked = {e.id for e in kb.graph.lookup(restriction) if e.type == first["type"]} if restriction else set()
    named = {s for s, n in names.items() if _named(n, restriction)}
    longest = {s for s in named if not any(names[s] != names[o] and _named(names[s], names[o]) for o in named)}
    return exact or linked or longest or {seeds[0]}


def select_graph_first(kb: KnowledgeBase, query_vec: np.ndarray, pool: dict[str, Trajectory], limit: int) -> list[dict]:
    """Keep ``limit`` candidates, those reached from a topic entity along edges first.

    The others (a text match somewhere on their trajectory) follow, marked tier 1.

    Without any candidate reached from a topic entity this is the plain semantic selection.
    """
    graph = {e: t for e, t in pool.items() if anchored(t)}
    if not graph:
        return select_candidates(kb, query_vec, pool, limit)
    text = {e: t for e, t in pool.items() if e not in graph}
    chosen = select_candidates(kb, query_vec, graph, limit)
    rest = select_candidates(kb, query_vec, text, limit - len(chosen)) if len(chosen) < limit else []
    return chosen + [{**c, "tier": TEXT_TIER} for c in rest]
