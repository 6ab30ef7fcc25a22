"""HybGRAG text views: references as prompt text, and the refinement path as in the paper's figures."""

from __future__ import annotations


def format_references(refs: list[dict]) -> str:
    """References as prompt text: name, text, then reasoning paths."""
    blocks = []
    for i, r in enumerate(refs, 1):
        paths = "".join(f"\n  path: {p}" for p in r["paths"])
        blocks.append(f"[{i}] {r['name']}\n  text: {r['text'][:600]}{paths}")
    return "\n".join(blocks)



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
