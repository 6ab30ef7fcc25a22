"""HybGRAG text views: references as prompt data, and the refinement path as in the paper's figures."""

from __future__ import annotations

from prompts.data_block import data_block

TEXT_CHARS = 600  # characters of a reference's text shown to the validator and the answerer


def format_references(refs: list[dict]) -> str:
    """References as quoted data: one numbered block each with its name, text and reasoning paths."""
    blocks = []
    for i, r in enumerate(refs, 1):
        fields = [("name", r["name"]), ("text", r["text"][:TEXT_CHARS]), *(("path", p) for p in r["paths"])]
        blocks.append(data_block(fields, n=i, source=r.get("source", "")))
    return "\n".join(blocks) or "(none)"


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
