"""HydraRAG's retrieval steps as tools: kg_exploration, document_exploration, web_exploration.

Each explores one source for the round's probe and returns candidate paths for the pruning. The
chat model, the settings and whether the KG subgraph is known go around the tool (``extra``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.documents import Document
from pydantic import BaseModel, Field

from hybridrag.agents.hydrarag import documents, text
from hybridrag.agents.hydrarag.exploration import explore_one
from hybridrag.tools.retrieval import mentions_in
from hybridrag.tools.steps import VIEW_LIMIT, Step, StepCall, listed, passage, run_step

SOURCES = {"kg": "kg_exploration", "docs": "document_exploration", "web": "web_exploration"}
LABELS = {"kg": "kg", "docs": "doc", "web": "web"}  # the candidates' source label
PATHS = (
    "a list of candidate paths: dicts with text (e.g. 'Tom Hanks → starred in → Big'), optional answers "
    "(entity ids it reaches) and keys; or a list of passages (LangChain Documents, or dicts with id and text), "
    "whose sentences most like each chain's skyline become paths"
)


class ExploreArgs(BaseModel):
    """Arguments of an exploration step."""

    question: str = Field(description="The question (or the round's follow-up question).")
    probe: dict = Field(description="The round's probe: phase, depth, sources and chains (topics, skyline, query).")
    topic_keys: list[str] = Field(default_factory=list, description="Keys of the topic entities.")


def _view(found: dict) -> dict:
    cands = [{k: c.get(k) for k in ("id", "source", "text", "answers", "doc_id")} for c in found["candidates"]]
    return {"candidates": cands[:VIEW_LIMIT], "found": len(cands), "notes": found["notes"]}


def _default(src: str):
    def factory(kb: Any):
        def run(
            question: str,
            probe: dict,
            topic_keys: list[str] | None = None,
            *,
            has_subgraph: bool = True,
            ctx: Any = None,
            model: Any = None,
        ) -> tuple[dict, dict]:
            found = explore_one(src, question, probe, topic_keys or [], has_subgraph, ctx, kb, model)
            return found, _view(found)

        return run

    return factory


def _is_path(row: Mapping) -> bool:
    return "text" in row and ("answers" in row or "path" in row or "keys" in row or "id" not in row)


def _path(kb: Any, row: Mapping, label: str, phase: str, n: int) -> dict:
    ids = [str(i) for i in row.get("answers") or mentions_in(kb, str(row["text"]))]
    keys = list(row.get("keys") or [f"id:{i}" for i in ids])
    return {
        "id": f"{label}:{phase}:user{n}",
        "source": label,
        "phase": phase,
        "text": str(row["text"]),
        "keys": keys,
        "answers": ids,
        "doc_id": row.get("doc_id"),
        "doc_name": row.get("doc_name"),
        "path": list(row.get("path") or [str(row["text"])]),
        "sentence": str(row["text"]),
        "instructions": [],
    }


def _adopt(src: str):
    label = LABELS[src]

    def adopt(kb: Any, output: Any, call: StepCall) -> dict:
        probe = call.args["probe"]
        ctx: Any = call.extra.get("ctx")
        phase, cands, docs = probe.get("phase", "user"), [], []
        for n, item in enumerate(listed(output, call)):
            if isinstance(item, Mapping) and _is_path(item):
                cands.append(_path(kb, item, label, phase, n))
            elif isinstance(item, Document | Mapping):
                p = passage(item, call)
                docs.append((p["id"], p.get("name") or p["id"], p["text"]))
            else:
                raise call.error(f"returned a {type(item).__name__} item ({str(item)[:60]!r})")
        notes: list[str] = []
        read: list[dict] = []
        if docs:
            s = ctx.text()
            picked, read = documents.read(kb, probe.get("chains", []), lambda ch: docs, s.num_sentences, label)
            built, _ = text.to_candidates(kb, None, picked, label, phase, s.link_threshold)
            cands += built
            notes.append("the user's passages: sentences kept as paths")
        return {"candidates": cands, "notes": notes, "usage": {}, **({"documents": read} if read else {})}

    return adopt


STEPS: dict[str, Step] = {
    name: Step(name, doc, ExploreArgs, PATHS, _default(src), _adopt(src))
    for src, name, doc in [
        (
            "kg",
            SOURCES["kg"],
            "Knowledge-graph exploration: relation paths from the topic entities that follow the "
            "skyline, found by a beam search to the probe's depth.",
        ),
        (
            "docs",
            SOURCES["docs"],
            "Document exploration: the topic entities' passages and the passages nearest the "
            "question, their sentences most like the skyline turned into paths.",
        ),
        (
            "web",
            SOURCES["web"],
            "Web exploration: web search results the model selects, their sentences most like "
            "the skyline turned into paths.",
        ),
    ]
}


def explore_step(
    src: str, question: str, probe: dict, topic_keys: list[str], has_subgraph: bool, ctx: Any, kb: Any, model: Any
) -> dict:
    """Explore one source as a tool call (the user's tool when the context names its step)."""
    if src not in SOURCES:
        return explore_one(src, question, probe, topic_keys, has_subgraph, ctx, kb, model)  # raises: unknown
    return run_step(
        "hydrarag",
        STEPS,
        SOURCES[src],
        {"question": question, "probe": probe, "topic_keys": topic_keys},
        kb,
        ctx.tools,
        {"has_subgraph": has_subgraph, "ctx": ctx, "model": model},
    )
