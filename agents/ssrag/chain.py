"""The small-model graph branch's chain walk: follow the nearest solved example's relation chain.

SSRAG's graph branch walks from the linked entities to the neighbours reached by the facts most
relevant to the question (:func:`agents.ssrag.nodes.relevant_nodes`). Its contexts are ranked by
relevance, not by the question's relation chain ("the films that share actors with X were in
which genres": X's own genre is as relevant as its co-actors' films' genres), so an answer rule
reading them in rank order (:func:`agents.ssrag.small.rule_answer`) can take an off-chain context.

A bank example is one relation chain from its topic entity, with the direction of each hop
(:class:`agents.shots.example.Example`). Under the small-model rules (``judge`` ``rules``, or
``auto`` with a small model) and with ``chain_walk`` on, the graph branch also follows the
nearest example's chain from the linked entities, hop by hop along each relation in its
direction (and, on a KB with passages, through a passage sentence that states the relation:
the shared text hops of :mod:`tools.text_hops`, which the graph retrieval step passes in); the
entities at the chain's end (never a linked entity) come first among the graph nodes, marked
``chain``, and the answer rule takes the first such context. This is a decision of this project
for small models, not a part of the paper; ``chain_walk=false`` measures the paper's walk alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.cancel import check_cancelled
from hybridrag.kb.store import Direction

MAX_TEXT_FRONTIER = 100  # entities of a hop that also step through passages (a bound on lexical searches)
MAX_FRONTIER = 200  # entities carried from one hop of the chain to the next (a hub is not walked whole)


def example_chain(examples: list) -> list[tuple[str, str]]:
    """The relation chain ``[(relation, direction), ...]`` of the first example that has relations.

    The direction is ``both`` where the example does not give one; ``[]`` when no example has relations.
    """
    ex = next((e for e in examples if getattr(e, "relations", ())), None)
    if ex is None:
        return []
    dirs = ex.directions if len(ex.directions) == len(ex.relations) else ("both",) * len(ex.relations)
    return list(zip(ex.relations, dirs, strict=True))


TextSteps = Callable[[KnowledgeBase, list[str], str, set[str]], list[tuple]]  # (parent, child, triple) rows


def follow_chain(
    kb: KnowledgeBase,
    seeds: list[str],
    chain: list[tuple[str, str]],
    limit: int,
    max_frontier: int = MAX_FRONTIER,
    text: TextSteps | None = None,
) -> list[str]:
    """Entities reached from ``seeds`` along ``chain``, most chain paths first (then by id), at most ``limit``.

    A seed is never an intermediate or a final entity (MetaQA's "films that share actors with X"
    are not X). Each hop keeps the ``max_frontier`` entities reached by the most paths. ``text``:
    steps through passages (``text_steps(kb, frontier, relation, on_graph)``), for the first
    ``MAX_TEXT_FRONTIER`` entities of a hop.
    """
    if not seeds or not chain or limit <= 0:
        return []
    start = set(seeds)
    frontier: Counter[str] = Counter({s: 1 for s in seeds})
    for relation, direction in chain:
        check_cancelled()
        reached: Counter[str] = Counter()
        ids, stepped = list(frontier), set()
        way: Direction = "in" if direction == "in" else "out" if direction == "out" else "both"
        for t in kb.graph.neighbors(ids, [relation], way):
            for here, there in ((t.head, t.tail), (t.tail, t.head)):
                if here in frontier and there not in start and _along(direction, t.head == here):
                    reached[there] += frontier[here]
                    stepped.add(here)
        if text:  # the edge may be stated in a passage only (either way: a sentence's voice is not a direction)
            for here, there, _ in text(kb, ids[:MAX_TEXT_FRONTIER], relation, stepped):
                if there not in start and there not in reached:
                    reached[there] += frontier[here]
        frontier = Counter(dict(sorted(reached.items(), key=lambda kv: (-kv[1], kv[0]))[:max_frontier]))
        if not frontier:
            return []
    return [e for e, _ in sorted(frontier.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def _along(direction: str, from_head: bool) -> bool:
    """Whether stepping from the triple's head (``from_head``) or tail goes the chain's way."""
    return direction == "both" or (direction == "out") == from_head


def chain_text(chain: list[tuple[str, str]]) -> str:
    """The chain as the trace shows it: ``starred_actors> starred_actors< has_genre>``."""
    return " ".join(f"{r}{'>' if d == 'out' else '<' if d == 'in' else '-'}" for r, d in chain)


def with_chain_ends(
    kb: KnowledgeBase,
    nodes: list[dict],
    seeds: list[str],
    chain: list[tuple[str, str]],
    k: int,
    max_facts: int,
    fact_qv,
    text_edges: bool,
    scoring: str,  # noqa: ANN001
    text: TextSteps | None = None,
) -> list[dict]:
    """The relevance walk's ``nodes`` with the chain's end entities first, each marked ``chain``.

    At most half of ``k`` are end entities; the walk's last nodes make room, so there are still at most ``k``.
    """
    from hybridrag.agents.ssrag.nodes import nodes_facts

    ends = follow_chain(kb, seeds, chain, max(k // 2, 1), text=text)
    if not ends:
        return nodes
    walked = {n["id"]: n for n in nodes}
    new = [e for e in ends if e not in walked]
    made = (
        {
            n["id"]: {**n, "prior": None, "hop": len(chain), "path": 0.0}
            for n in nodes_facts(kb, new, max_facts, fact_qv, text_edges, scoring=scoring)
        }
        if new
        else {}
    )
    first = [{**(walked.get(e) or made[e]), "chain": True} for e in ends if e in walked or e in made]
    at_end = set(ends)
    rest = [n for n in nodes if n["id"] not in at_end]
    return (first + rest)[:k]
