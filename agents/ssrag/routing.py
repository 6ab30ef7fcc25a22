"""SSRAG agentic query routing (paper §III-B, Algorithm 2).

The LLM labels the augmented query TEMPORAL (time-sensitive) or FACTUAL. TEMPORAL goes to
the web (the paper's Google API; Tavily here). FACTUAL goes to the local corpus (the paper's
pre-curated Wikipedia database; the opened KB here), unless the local corpus has nothing for
the query, in which case it goes to the web too. An unparseable label, or ``routing="rules"``,
takes the paper's stated rule instead: a recency cue means TEMPORAL, otherwise FACTUAL.

"Nothing local" (Algorithm 2, line 4) is our reading for a KB whose dense search always
returns something: no entity of the query links to the KB and the best dense score is below
``min_score``. Web unavailability is handled where the web is searched (the vector branch).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from hybridrag.agents.llm.structured import call_structured
from hybridrag.kb.base import KnowledgeBase
from hybridrag.prompts import ssrag as P
from hybridrag.prompts.data_block import data_block
from hybridrag.tools.retrieval import mentions_in

Label = Literal["TEMPORAL", "FACTUAL"]


class RouteLabel(BaseModel):
    """The router's one-word decision."""

    label: Label = Field(description="TEMPORAL if the query needs recent information, else FACTUAL.")


def classify(
    model: BaseChatModel, query: str, method: str, feedback: tuple[str, str] | None = None
) -> tuple[RouteLabel | None, dict]:
    """Ask the LLM for TEMPORAL or FACTUAL given the augmented query only (quoted: it holds KB names).

    ``feedback``: (earlier label, why it is doubted): the router is asked again with its
    earlier label as the assistant turn and the reason after it (the corrective loop).
    """
    messages = [("system", P.ROUTER_SYSTEM.template), ("human", P.ROUTER.format(query=data_block(query)))]
    if feedback:
        messages += [
            ("ai", feedback[0]),
            ("human", P.ROUTE_RETRY.format(feedback=feedback[1], query=data_block(query))),
        ]
    return call_structured(model, RouteLabel, messages, role="router", method=method)


def rule_label(cues: dict) -> Label:
    """The paper's rule: a temporal cue present → TEMPORAL, else factual cues dominate → FACTUAL."""
    return "TEMPORAL" if cues.get("recency") else "FACTUAL"


def probe_local(kb: KnowledgeBase, qv: np.ndarray, query: str, entities: list[dict], min_score: float) -> dict:
    """QueryWikipediaDB(Q_aug): does the local corpus hold anything for the query (``qv``: its vector)?

    Returns ``{"found", "linked": [entity ids], "best_score"}``.
    """
    linked = [e["id"] for e in entities if e.get("id")] + mentions_in(kb, query)
    hits = kb.dense_search(qv, 1)
    best = hits[0].score if hits else 0.0
    return {
        "found": bool(linked) or best >= min_score,
        "linked": list(dict.fromkeys(linked))[:10],
        "best_score": round(best, 4),
    }


def choose_source(label: Label, local: dict) -> tuple[str, str]:
    """Algorithm 2: (source, reason) with source ``web`` or ``local``."""
    if label == "TEMPORAL":
        return "web", "time-sensitive query: real-time web"
    if local["found"]:
        return "local", "factual query with local results: local corpus"
    return "web", f"factual query, nothing local (best score {local['best_score']}): web"
