"""HydraRAG: exploring one source for a round's probe (paper §4.2).

This is the default behind the ``explore_source`` node's tool steps (:mod:`agents.hydrarag.tools`,
which a caller may replace):

- ``kg``: the path search of :mod:`agents.hydrarag.kg`, its beam corroborated by the chain's top
  document sentences when documents are searched this round (``beam_score="cross"``), and on the
  first KG exploration the seeds of the question subgraph ``E_q`` (its topic entities: E_q is
  every entity within ``max_depth`` hops of them, :func:`agents.hydrarag.kg.candidate_members`);
- ``docs`` and ``web``: the sentence paths of :mod:`agents.hydrarag.text`; web search unavailable or
  failing → no web paths, the reason noted.
"""

from __future__ import annotations

from typing import Any

from hybridrag.agents.hydrarag import kg as kg
from hybridrag.agents.hydrarag import text as text
from hybridrag.tools.web import WebSearchError


def beam_documents(kb: Any, ctx: Any, probe: dict) -> Any:
    """What the KG beam's cross-score corroborates against, per chain.

    Returns:
        A function of a chain giving its top document sentences (none when documents are not
        searched this round), or None under ``beam_score=relevance``.
    """
    if ctx.beam_score != "cross":
        return None
    if "docs" not in probe["sources"]:
        return lambda ch: []
    s = ctx.text()
    return lambda ch: [
        x["sentence"]
        for x in text.top_sentences(
            kb,
            text.gather_docs(kb, ch["doc_topics"], ch["query"], s.doc_pool, ch.get("doc_names")),
            ch["indicator"],
            s.num_sentences,
        )
    ]


def explore_one(
    src: str, question: str, probe: dict, topic_keys: list[str], has_subgraph: bool, ctx: Any, kb: Any, model: Any
) -> dict:
    """Explore one source: ``{"candidates", "notes", "usage"}``; on the first KG exploration ``"subgraph"``.

    Documents and web add ``"documents"``: every document read, with its best sentence and score.
    """
    calls: dict = {}
    out: dict = {}
    match src:
        case "kg":
            cands, notes = kg.explore_kg(
                kb,
                question,
                probe,
                topic_keys,
                ctx.pruning(),
                ctx.variant,
                beam_documents(kb, ctx, probe),
                ctx.beam_text,
            )
            if not has_subgraph:  # E_q's seeds; its members are asked for when the pruning needs them
                out["subgraph"] = list(dict.fromkeys(t for ch in probe["chains"] for t in ch["topics"]))
        case "docs":
            cands, calls, note, out["documents"] = text.explore_docs(kb, model, question, probe, ctx.text())
            notes = [note] if note else []
        case "web":
            try:
                cands, calls, note, out["documents"] = text.explore_web(kb, model, question, probe, ctx.text())
                notes = [note] if note else []
            except WebSearchError as exc:
                cands, notes = [], [str(exc)]
        case other:
            raise ValueError(f"unknown HydraRAG source {other!r}")
    return {"candidates": cands, "notes": notes, "usage": calls, **out}
