"""HydraRAG's KG paths as text and as candidates for the pruning.

:func:`verbalise` writes a clustered path as ``{A} → r → {B, C} ← r2 ← {D}`` with the first names of
each set (``SHOWN_NAMES`` in the prompts, ``EMBEDDED_NAMES`` in the text the pruning embeds), the
names of the sets the paths share read once into a memo (:func:`remember_names`);
:func:`signature` keeps only the relations and their directions; :func:`to_candidate` makes the
candidate path the pruning ranks.
"""

from __future__ import annotations

from hybridrag.agents.hydrarag import graph_ops as graph_ops
from hybridrag.agents.hydrarag.kg_paths import Chain
from hybridrag.kb.base import KnowledgeBase

SHOWN_NAMES = 6  # entity names shown per set in a verbalised path
EMBEDDED_NAMES = 2  # entity names per set in the text pruning embeds (ours: shorter, same relations)

Names = dict[frozenset[str], tuple[list[str], int]]  # a set → its first names (up to SHOWN_NAMES) and size


def read_names(kb: KnowledgeBase, ids: set[str] | frozenset[str]) -> dict[str, str]:
    """Names of the known ``ids`` in one store read.

    A graph server's ``names`` reads key and name only, and not the names its traversals brought
    along; other stores read the entities with ``get_many``.
    """
    if not ids:
        return {}
    reader = getattr(kb.graph, "names", None)
    if reader is not None:
        return reader(ids)
    return {i: e.name for i, e in kb.graph.get_many(ids).items()}


def _first(kb: KnowledgeBase, ids: frozenset[str], shown: int) -> tuple[list[str], int]:
    fast = graph_ops.arrays(kb.graph)
    if fast is not None:
        return graph_ops.first_names(fast, ids, shown)
    found = read_names(kb, ids)  # one read for the set (names as KnowledgeBase.name gives them)
    names = sorted(found.get(i, i) for i in ids)
    return names[:shown], len(names)


def remember_names(kb: KnowledgeBase, chains: list[Chain], memo: Names) -> None:
    """Put the first names of every set of ``chains`` not in ``memo`` there.

    They are read with one ``get_many`` for all of them (the array path needs no read).
    """
    sets = list(dict.fromkeys(n for c in chains for n in c.nodes if n not in memo))
    fast = graph_ops.arrays(kb.graph)
    found = read_names(kb, set().union(*sets)) if sets and fast is None else {}
    for ids in sets:
        if fast is not None:
            memo[ids] = graph_ops.first_names(fast, ids, SHOWN_NAMES)
        else:
            names = sorted(found.get(i, i) for i in ids)
            memo[ids] = names[:SHOWN_NAMES], len(names)


def _names(kb: KnowledgeBase, ids: frozenset[str], shown: int = SHOWN_NAMES, memo: Names | None = None) -> str:
    if memo is None or shown > SHOWN_NAMES:
        names, total = _first(kb, ids, shown)
    else:  # the first ``shown`` of a set's first SHOWN_NAMES names (paths share their sets)
        if ids not in memo:
            memo[ids] = _first(kb, ids, SHOWN_NAMES)
        names, total = memo[ids]
    more = f", +{total - shown} more" if total > shown else ""
    return "{" + ", ".join(names[:shown]) + more + "}"


def verbalise(kb: KnowledgeBase, chain: Chain, shown: int = SHOWN_NAMES, memo: Names | None = None) -> str:
    """The path as ``{A} → r → {B, C} ← r2 ← {D}`` (an arrow pointing left marks an inverse edge).

    ``shown``: names per set; ``memo`` keeps each set's names for the next path that shares it.
    """
    parts = [_names(kb, chain.nodes[0], shown, memo)]
    for (rels, inverse), node in zip(chain.edges, chain.nodes[1:], strict=True):
        rel = " | ".join(rels)
        parts += [f"← {rel} ←" if inverse else f"→ {rel} →", _names(kb, node, shown, memo)]
    return " ".join(parts)


def signature(chain: Chain) -> str:
    """The path's relations in order with their directions, entities left out.

    ``← starred_actors ← · → directed_by → ·`` is the beam's cheap semantic text, shared by every
    question with that shape.
    """
    return " ".join(
        f"← {' | '.join(rels)} ← ·" if inverse else f"→ {' | '.join(rels)} → ·" for rels, inverse in chain.edges
    )


def to_candidate(kb: KnowledgeBase, chain: Chain, phase: str, n: int, memo: Names | None = None) -> dict:
    """A KG chain as a candidate path for pruning (``memo``: see :func:`verbalise`)."""
    steps: list[dict] = [{"ids": sorted(chain.nodes[0])}]
    steps += [
        {"relations": list(rels), "inverse": inv, "ids": sorted(node)[:50]}
        for (rels, inv), node in zip(chain.edges, chain.nodes[1:], strict=True)
    ]
    return {
        "id": f"kg:{phase}:{n}",
        "source": "kg",
        "phase": phase,
        "text": verbalise(kb, chain, memo=memo),
        "embedded": verbalise(kb, chain, EMBEDDED_NAMES, memo),
        "signature": signature(chain),
        "keys": [f"id:{i}" for i in sorted(chain.entity_ids())],
        "answers": sorted(chain.answers())[:50],
        "doc_id": None,
        "doc_name": None,
        "path": steps,
    }
