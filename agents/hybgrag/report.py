"""HybGRAG views: references as output dicts, evidence and prompt data, and the refinement path.

The refinement path reads as in the paper's figures (Action t → Feedback t → ... → Accept).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridrag.agents.hybgrag.retrieval import Reference, Retrieval, reference_paths
from hybridrag.kb.base import KnowledgeBase
from hybridrag.prompts.data_block import data_block
from hybridrag.tools.answer_span import bare_passage, names_passage, passage_answer
from hybridrag.tools.list_answer import asks_for_list, joined

TEXT_CHARS = 600  # characters of a reference's text shown to the validator and the answerer


def own_ids(action: Mapping[str, Any]) -> set[str]:
    """The question's own entities: the ids the router linked (never an answer)."""
    return {e["id"] for e in action.get("linked", [])}


def own_last(refs: list[dict], own: set[str]) -> list[dict]:
    """References with the question's own entities (``own`` ids) moved to the end."""
    return [r for r in refs if r["id"] not in own] + [r for r in refs if r["id"] in own]


def first_answer(question: str, refs: list[dict], own: set[str]) -> str:
    """The answer the best reference that is not one of the question's own entities gives ("" if none).

    An entity gives its name; a passage about no entity gives the span the passages from it on
    state (:func:`tools.answer_span.passage_answer`), never its id. A list question
    (:func:`tools.list_answer.asks_for_list`) whose best reference was reached along a graph path
    gives every such reference's name, in rank order, joined by "; ".
    """
    for i, r in enumerate(refs):
        if r["id"] not in own:
            if bare_passage(r):
                return passage_answer(question, refs[i:])
            if r.get("triples") and asks_for_list(question):
                reached = [x["name"] for x in refs[i:] if x["id"] not in own and x.get("triples")]
                return joined(list(dict.fromkeys(reached)))
            return r["name"]
    return ""


def reply_or_first(question: str, reply: str | None, refs: list[dict], own: set[str]) -> str:
    """The answerer's ``reply``, or :func:`first_answer` when there is none or it is a passage's id.

    A passage's id is matched by its file part, so a small model's misremembered chunk number
    (``doc.txt#1`` for ``doc.txt#0``) is caught too.
    """
    cited = bool(reply) and names_passage(str(reply).split("#", 1)[0], refs)
    return reply if reply and not cited else first_answer(question, refs, own)


def format_references(refs: list[dict]) -> str:
    """References as quoted data: one numbered block each with its name, text and reasoning paths."""
    blocks = []
    for i, r in enumerate(refs, 1):
        fields = [("name", r["name"]), ("text", r["text"][:TEXT_CHARS]), *(("path", p) for p in r["paths"])]
        blocks.append(data_block(fields, n=i, source=r.get("source", "")))
    return "\n".join(blocks) or "(none)"


def answer_references(refs: list[dict], chars: int) -> list[dict]:
    """The references the answerer reads: best first, until their texts (each cut at ``TEXT_CHARS``) reach ``chars``.

    The first is always kept. On a documents KB the passage that states the answer often ranks
    below the ones that name the question's topic (the second hop of a two-hop question), so the
    answerer reads as many references as the budget allows, not a fixed few.
    """
    kept, used = [], 0
    for r in refs:
        size = len(r["text"][:TEXT_CHARS]) + sum(len(p) for p in r["paths"])
        if kept and used + size > chars:
            break
        kept.append(r)
        used += size
    return kept


def render_trace(trace: list[dict]) -> str:
    """The refinement path as in the paper's figures: Action t → Feedback t → ... → Accept."""
    lines = []
    for s in trace:
        t = s.get("iteration")
        if s["node"] == "route_question":
            lines.append(f"Action {t}: {s['module']} module")
            if s["module"] == "hybrid":
                lines.append(f"  Entity: {', '.join(s['entities']) or '(none)'}")
                lines.append(f"  Relational: {', '.join(s['relations']) or '(none)'}")
            if s.get("fallback"):
                lines.append(f"  Fallback: {s['fallback']}")
        elif s["node"] == "validate_retrieval" and s["decision"] == "accept":
            lines.append(f"Feedback {t}: Accept ✓")
        elif s["node"] == "comment_on_routing":
            lines.append(f"Feedback {t}: {s['feedback']}")
        elif s["node"] == "validate_retrieval" and s is trace[-1]:
            lines.append(f"Feedback {t}: rejected; iteration limit reached, returning the last retrieval")
    return "\n".join(lines)


def reference_dicts(kb: KnowledgeBase, refs: list[Reference]) -> list[dict]:
    """References as state/output dicts with their verbalised paths and their triples."""
    return [
        {
            "id": r.id,
            "kind": r.kind,
            "name": r.name,
            "score": r.score,
            "source": r.source,
            "text": r.text,
            "paths": reference_paths(kb, r),
            "triples": [[[x.head, x.type, x.tail] for x in p] for p in r.paths if p],
        }
        for r in refs
    ]


def evidence_of(refs: list[dict]) -> list[dict]:
    """The output evidence: each reference's text, then its reasoning paths as graph evidence."""
    evidence = []
    for r in refs:
        evidence.append({"source": "doc", "id": r["id"], "text": r["text"], "score": r["score"], "path": None})
        evidence += [
            {"source": "kg", "id": r["id"], "text": p, "score": r["score"], "path": trip}
            for p, trip in zip(r["paths"], r["triples"], strict=True)
        ]
    return evidence


def retrieval_outputs(kb: KnowledgeBase, question: str, res: Retrieval, own: set[str], **facts: Any) -> dict:
    """The state update of a retrieval: references (the question's ``own`` entities last), its facts and outputs.

    Returns:
        ``references``, ``retrieval`` (module, intersection, ego_sizes, unused_relations and ``facts``),
        ``evidence``, ``ranked`` and ``answer`` (:func:`first_answer` of ``question``).
    """
    refs = own_last(reference_dicts(kb, res.references), own)
    return {
        "references": refs,
        "retrieval": {
            "module": res.module,
            "intersection": res.intersection,
            "ego_sizes": res.ego_sizes,
            "unused_relations": res.unused_relations,
            **facts,
        },
        "evidence": evidence_of(refs),
        "ranked": [{k: r[k] for k in ("id", "kind", "name", "score", "source")} for r in refs],
        "answer": first_answer(question, refs, own),
    }
