"""HydraRAG structured retrieval (paper §4.2.1, Algorithm 1): KG paths through all topic entities.

- Subgraph detection: ``E_q`` is the ``D_max``-hop ego-graph of the topic entities (its seeds);
  cross-source verification (entity-path alignment) asks only whether the candidates' entities are
  in it (:func:`candidate_members`), so E_q is never read whole from a graph server.
- Structured retrieval of a probe (:func:`explore_kg`): for every chain of topic entities, the
  path search of :mod:`agents.hydrarag.kg_paths` (clustering, beam, joins, graph reduction) scored
  by relevance (and, with documents, cross-scores), its paths made candidates by
  :mod:`agents.hydrarag.kg_text`.
- Under the judge's rules (a small model, ``probe["follow"]``) the beam keeps the paths that follow
  the chain's skyline hop by hop first (:func:`follow_bonus`): relevance compares the skyline with a
  path's relation words regardless of their order, so paths with the same words in another order
  (``release_year ← release_year → written_by`` for ``written by, written by, release year``) could
  fill the beam and push out every path along the skyline.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable

from hybridrag.agents.hydrarag import graph_ops as graph_ops
from hybridrag.agents.hydrarag.audit import hops_follow, wanted_relations
from hybridrag.agents.hydrarag.kg_paths import Chain, explore, overlaps
from hybridrag.agents.hydrarag.kg_text import EMBEDDED_NAMES, Names, remember_names, signature, to_candidate, verbalise
from hybridrag.agents.hydrarag.pruning import PruneSettings, beam_cross_scores, relevance
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.cancel import check_cancelled


def detect_subgraph(kb: KnowledgeBase, topic_ids: list[str], max_depth: int) -> list[str]:
    """Entities within ``max_depth`` hops of the topic entities (the question subgraph E_q), all of them."""
    if not topic_ids:
        return []
    fast = graph_ops.arrays(kb.graph)
    if fast is not None:
        return graph_ops.within_hops(fast, topic_ids, max_depth)
    return list(kb.graph.ego_graph(topic_ids, radius=max_depth).distance)


def subgraph_members(kb: KnowledgeBase, seeds: list[str], max_depth: int, ids: set[str]) -> set[str]:
    """The ``ids`` inside E_q, the ``max_depth``-hop subgraph around ``seeds``, without materialising E_q.

    In memory the whole E_q is a vectorised walk (:func:`detect_subgraph`); a graph server is asked
    only about ``ids`` (``within_hops``: a breadth-first walk on the server, keys of ``ids`` back);
    any other store reads the ego graph.
    """
    if not seeds or not ids:
        return set()
    walk = getattr(kb.graph, "within_hops", None)
    if graph_ops.arrays(kb.graph) is None and walk is not None:
        return set(walk(seeds, sorted(ids), max_depth))
    return ids & set(detect_subgraph(kb, seeds, max_depth))


def candidate_members(kb: KnowledgeBase, seeds: list[str], max_depth: int, cands: list[dict]) -> set[str]:
    """The entities of ``cands`` (their ``id:`` keys) inside E_q around ``seeds``.

    A KG path whose roots are all seeds lies inside E_q by construction (each of its sets is at most
    its depth ≤ ``max_depth`` hops from a root, :mod:`agents.hydrarag.kg_paths`), so only the other
    paths' entities that no such path holds are looked up.
    """
    inside: set[str] = set()
    rest: set[str] = set()
    for c in cands:
        ids = {k[3:] for k in c["keys"] if k.startswith("id:")}
        roots = c.get("roots")
        if c["source"] == "kg" and roots and set(roots) <= set(seeds):
            inside |= ids
        else:
            rest |= ids
    return inside | subgraph_members(kb, seeds, max_depth, rest - inside)


def follow_bonus(chains: list[Chain], indicator: str) -> list[float]:
    """1.0 for a chain whose hops carry the skyline's relations in order so far (a prefix of it), else 0.0.

    Added to the beam's scores (in [0, 1]), it ranks the paths along the skyline first.
    """
    wanted = wanted_relations(indicator)
    return [float(hops_follow([rels for rels, _ in c.edges], wanted, prefix=True)) for c in chains]


def explore_kg(
    kb: KnowledgeBase,
    question: str,
    probe: dict,
    topic_keys: list[str],
    s: PruneSettings,
    variant: str = "hydrarag",
    doc_sentences: Callable[[dict], list[str]] | None = None,
    beam_text: str = "relations",
) -> tuple[list[dict], list[str]]:
    """Structured retrieval for every chain of a probe; returns candidates and notes.

    The beam ranks by cross-score against the chain's retrieved document sentences when
    ``doc_sentences`` is given (§4.2.1), else by relevance alone (Algorithm 1's Relevant_Pruning).
    Its semantic term compares the skyline with the path's relation :func:`signature`
    (``beam_text="relations"``, ours: the embeddings are shared across questions) or with the
    whole verbalised path (``"path"``, the paper; one embedding per path per hop). Corroboration
    by document sentences reads the path with ``EMBEDDED_NAMES`` names per set.
    """
    rng = random.Random(zlib.crc32(question.encode())) if variant == "hydrarag-e" else None
    cands: list[dict] = []
    notes: list[str] = []
    memo: Names = {}  # names of the sets the paths share
    for ch in probe["chains"]:
        check_cancelled()
        if not ch["topics"]:
            notes.append("a chain has no topic entity in the KG")
            continue
        docs = doc_sentences(ch) if doc_sentences is not None else None
        follow = probe.get("follow", False) and len(set(ch["topics"])) == 1  # a join reads the skyline both ways

        def score(
            chains: list[Chain], indicator: str = ch["indicator"], docs: list[str] | None = docs, follow: bool = follow
        ) -> list[float]:
            if docs or beam_text != "relations":
                remember_names(kb, chains, memo)
            sem = [signature(c) if beam_text == "relations" else verbalise(kb, c, memo=memo) for c in chains]
            texts = [verbalise(kb, c, EMBEDDED_NAMES, memo) for c in chains] if docs else []
            rel = relevance(kb, indicator, topic_keys, sem, overlaps(chains, topic_keys), s.lambda_sem)
            out = (rel if docs is None else beam_cross_scores(kb, rel, texts, docs, s)).tolist()
            if follow:
                out = [x + b for x, b in zip(out, follow_bonus(chains, indicator), strict=True)]
            return out

        chains, joined = explore(kb, ch["topics"], probe["depth"], s.beam_width, score, rng, probe.get("floor", False))
        if len(set(ch["topics"])) > 1:
            notes.append(
                f"{' + '.join(ch['names'])}: "
                + (
                    "paths joined through every topic entity"
                    if joined
                    else "topic entities do not meet within the depth: per-topic paths"
                )
            )
        remember_names(kb, chains, memo)
        roots = sorted(set(ch["topics"]))  # E_q holds every path from these within the depth
        cands += [
            {**to_candidate(kb, c, probe["phase"], len(cands) + n, memo), "roots": roots} for n, c in enumerate(chains)
        ]
    return cands, notes
