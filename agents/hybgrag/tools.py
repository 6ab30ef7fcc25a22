"""HybGRAG's retrieval steps as tools: dense_search (the text module's search), hybrid_retrieve."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.documents import Document
from pydantic import BaseModel, Field

from hybridrag.agents.hybgrag.paths import path_retrieve
from hybridrag.agents.hybgrag.retrieval import Reference, Retrieval, hybrid_retrieve
from hybridrag.kb.model import Triple
from hybridrag.tools.steps import VIEW_LIMIT, Step, StepCall, listed, score_of, search_step

REFERENCES = (
    "a list of entity references: dicts (or Documents: page_content as text, the rest in metadata) with "
    "id (the entity id), score, optional name and text, and optional paths (each a list of triples, a "
    "triple a dict head/relation/tail or a [head, relation, tail] list)"
)


class HybridArgs(BaseModel):
    """Arguments of the hybrid_retrieve step."""

    question: str = Field(description="The question the candidates are ranked against.")
    entities: list[str] = Field(description="Topic entity ids the router linked.")
    relations: list[str] = Field(description="Relation types the router chose (the path to follow).")
    hops: int = Field(description="Ego-graph radius, or path length along the relations.")
    k: int = Field(description="How many references to return.")
    along_path: bool = Field(
        default=False, description="Follow the relation path (radius-0 mode) instead of intersecting ego-graphs."
    )
    text_hops: bool = Field(default=True, description="Along a path, also hop through passages naming an entity.")


def _triple(t: Any, call: StepCall) -> Triple:
    if isinstance(t, Mapping) and {"head", "tail"} <= set(t) and ("relation" in t or "type" in t):
        return Triple(str(t["head"]), str(t.get("relation", t.get("type"))), str(t["tail"]))
    if isinstance(t, list | tuple) and len(t) == 3:
        return Triple(*(str(x) for x in t))
    raise call.error(f"returned a path step {str(t)[:60]!r}")


def _view(res: Retrieval) -> dict:
    refs = [
        {
            "id": r.id,
            "name": r.name,
            "score": r.score,
            "text": r.text,
            "paths": [[{"head": t.head, "relation": t.type, "tail": t.tail} for t in p] for p in r.paths],
        }
        for r in res.references[:VIEW_LIMIT]
    ]
    return {"module": res.module, "intersection": res.intersection, "ego_sizes": res.ego_sizes, "references": refs}


def _hybrid_default(kb: Any):
    def run(
        question: str,
        entities: list[str],
        relations: list[str],
        hops: int,
        k: int,
        along_path: bool = False,
        text_hops: bool = True,
        **_: Any,
    ) -> tuple[Retrieval, dict]:
        if along_path:
            res = path_retrieve(kb, question, entities, relations, hops, k, text_hops)
        else:
            res = hybrid_retrieve(kb, question, entities, relations, hops, k)
        return res, _view(res)

    return run


def _hybrid_adopt(kb: Any, output: Any, call: StepCall) -> Retrieval:
    refs = []
    for item in listed(output, call):
        row = {**item.metadata, "text": item.page_content} if isinstance(item, Document) else item
        if not isinstance(row, Mapping) or not row.get("id"):
            raise call.error(f"returned {str(item)[:60]!r}")
        eid = str(row["id"])
        paths = [[_triple(t, call) for t in p] for p in row.get("paths") or []]
        refs.append(
            Reference(
                eid,
                "entity",
                str(row.get("name") or kb.name(eid)),
                score_of(row, call),
                "kg",
                str(row.get("text") or kb.name(eid)),
                paths,
            )
        )
    return Retrieval("hybrid", refs[: call.args.get("k", len(refs))], {}, len(refs), [])


STEPS: dict[str, Step] = {
    s.name: s
    for s in [
        search_step(
            "dense_search",
            "Entity documents and passages nearest in meaning to the query (dense "
            "vectors): the text module's search (its hits are grouped by the entity they are about).",
            "dense_search",
        ),
        Step(
            "hybrid_retrieve",
            "The hybrid module: entities reached from the topic entities along the chosen "
            "relations (ego-graph intersection, or the relation path), ranked by their text's similarity to the "
            "question, each with its reasoning paths.",
            HybridArgs,
            REFERENCES,
            _hybrid_default,
            _hybrid_adopt,
        ),
    ]
}
