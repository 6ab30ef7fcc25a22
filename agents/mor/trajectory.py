"""MoR trajectories: the steps that reached a candidate, and how two trajectories compare.

A trajectory is a list of steps ``{"id", "type", "via": "text" | "struct" | "mention", "edge":
[head, relation, tail] | None, "tf"}`` where ``tf`` is the textual score of the layer's expanded
query against that node (the reranker's textual fingerprint). A node reached several ways keeps
its most informative trajectory (:func:`rank_key`): anchored at a topic entity first, then the
longest, then the higher summed ``tf`` (the paper keeps the longest, Limitations).
"""

from __future__ import annotations

Trajectory = list[dict]
EDGES = ("struct", "mention")  # steps along an edge: a graph edge, or a textual edge (agents.mor.mentions)


def expand_query(question: str, restriction: str) -> str:
    """The expanded query of one planning node: the question plus its restriction (Eq. 5)."""
    return f"{question} {restriction}".strip()


def anchored(traj: Trajectory) -> bool:
    """Reached along edges all the way from a topic entity (a seed marked ``topic``)."""
    return len(traj) > 1 and bool(traj[0].get("topic")) and all(s["via"] in EDGES for s in traj[1:])


def rank_key(traj: Trajectory) -> tuple[bool, int, float]:
    """How informative a trajectory is: anchored, then its length, then its summed ``tf`` (higher is better)."""
    return anchored(traj), len(traj), sum(s["tf"] for s in traj)


def step(eid: str, etype: str, via: str, tf: float, edge: list[str] | None = None) -> dict:
    """One trajectory step: the node reached, its category, how (``via``), its textual score and edge."""
    return {"id": eid, "type": etype, "via": via, "edge": edge, "tf": round(float(tf), 6)}


def cap(layer: dict[str, Trajectory], limit: int, ordered: bool = False) -> dict[str, Trajectory]:
    """Keep the ``limit`` best trajectories of a layer (ours: bounds hub explosions).

    ``ordered``: return them best first even when there are fewer (a layer already cut to the cap).
    """
    if len(layer) <= limit and not ordered:
        return layer
    best = sorted(layer.items(), key=lambda kv: rank_key(kv[1]), reverse=True)[:limit]
    return dict(best)
