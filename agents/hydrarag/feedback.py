"""HydraRAG's corrective feedback: what an answer check's {No} hands to the next round.

The paper's check answers {No} "then explains the reason" (App. E); the refined and predicted
rounds are asked to find the additional evidence. The shortfall makes that explanation
concrete: the model's own statement of what is missing, plus the method's account of the
round (which sources were searched and which were not, the KG depth, how many paths were
kept, which topic entities no kept path names, and the audit's topic and path problems:
one ``topic_problem`` / ``path_problem`` line each), so the follow-up question and the
predictions can aim at the gap (a wrong source, a wrong entity, a wrong relation or depth).
"""

from __future__ import annotations

from hybridrag.prompts.data_block import data_block


def shortfall(state: dict, missing: str, found: dict[str, list[str]] | None = None) -> dict:
    """What a {No} leaves for the next round.

    Returns:
        The model's statement of the missing evidence, the method's own account of the round
        (sources searched and not, depth, topic entities no path names) and the audit's topic and
        path problems (:mod:`agents.hydrarag.audit`).
    """
    probe = state.get("probe") or {}
    searched = list(probe.get("sources", []))
    texts = [c["text"].casefold() for c in state.get("selected", [])]
    unnamed = [t["name"] for t in state.get("topics", []) if not any(t["name"].casefold() in x for x in texts)]
    return {
        "missing": missing.strip(),
        "phase": state.get("phase", ""),
        "searched": searched,
        "not_searched": [s for s in state.get("available", []) if s not in searched],
        "depth": probe.get("depth"),
        "paths": len(state.get("selected", [])),
        "unnamed_topics": unnamed,
        "topic_problems": list((found or {}).get("topic", [])),
        "path_problems": list((found or {}).get("path", [])),
    }


def feedback_block(state: dict) -> str:
    """The last {No}'s shortfall as a quoted data block for the follow-up and prediction prompts."""
    fb = state.get("shortfall")
    if not fb:
        return "(none)"
    fields = [
        ("missing", fb["missing"] or "(not stated)"),
        ("round", fb["phase"]),
        ("searched", ", ".join(fb["searched"]) or "(none)"),
        ("not_searched", ", ".join(fb["not_searched"]) or "(none)"),
        ("kg_depth", str(fb["depth"])),
        ("paths_kept", str(fb["paths"])),
        ("topics_in_no_path", ", ".join(fb["unnamed_topics"]) or "(none)"),
        *(("topic_problem", p) for p in fb.get("topic_problems", [])),
        *(("path_problem", p) for p in fb.get("path_problems", [])),
    ]
    return data_block(fields, source="check")
