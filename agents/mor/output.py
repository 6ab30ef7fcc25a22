"""MoR results in the common output shape, the answerer's context, and a readable trace."""

from __future__ import annotations

import re

from hybridrag.agents.mor.matching import best_text, question_vector
from hybridrag.kb.base import KnowledgeBase
from hybridrag.prompts.data_block import data_block
from hybridrag.tools.answer_span import passage_answer
from hybridrag.tools.fused_text import hybrid_search
from hybridrag.tools.list_answer import asks_for_list, joined

TEXT_CHARS = 500  # characters of each path or text shown to the answerer
ANSWER_CHARS = 4000  # characters of retrieved text the answerer reads, by default (``answer_chars``)
_CHOICE_SPLIT = re.compile(r"(,|\bor\b)")


def _walk(trajectory: list[dict]) -> list[tuple[str, str]]:
    """(relation as walked, entity reached) of each step after the seed."""
    node, out = trajectory[0]["id"], []
    for step in trajectory[1:]:
        head, rel, tail = step["edge"]
        forward = head == node
        node = tail if forward else head
        out.append((rel if forward else f"{rel} (inverse)", node))
    return out


def _entities(trajectory: list[dict]) -> list[str]:
    """The seed and every entity the trajectory reaches, in order."""
    return [trajectory[0]["id"], *(node for _, node in _walk(trajectory))]


def verbalise_trajectory(kb: KnowledgeBase, trajectory: list[dict], names: dict[str, str] | None = None) -> str:
    """``seed → relation → ... → candidate``; an edge walked tail-to-head says (inverse).

    ``names`` (entity id → name) holds every entity on the trajectory when given; else they are
    read in one store call.
    """
    walk = _walk(trajectory)
    if names is None:
        names = kb.names(_entities(trajectory))
    parts = [names[trajectory[0]["id"]]]
    for rel, node in walk:
        parts += [rel, names[node]]
    return " → ".join(parts)


def _named(name: str, question: str) -> bool:
    """Whether ``name`` occurs in ``question`` as a whole phrase (case-insensitive)."""
    name = name.strip().lower()
    return bool(name) and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", question.lower()) is not None


def is_own(text: str, question: str, topic_names: list[str] | tuple = ()) -> bool:
    """Whether an answer ``text`` is the question's own entity: a topic entity's name, or a phrase of the question."""
    key = text.strip().lower()
    return bool(key) and (key in {n.strip().lower() for n in topic_names} or _named(key, question))


def _plain(text: str) -> str:
    """Lower-case words joined by single spaces (punctuation dropped)."""
    return " ".join(re.findall(r"\w+", text.lower()))


def offered_choice(text: str, question: str) -> bool:
    """Whether ``text`` is one side of an "X or Y" the question asks to choose from.

    The question splits at commas and at "or"; a side is a whole part, the end of the part before
    an "or" ("democratic" in "are they democratic or republican") or the start of the part after one.
    A question without "or" offers no choice.
    """
    key, parts = _plain(text), _CHOICE_SPLIT.split(question.lower())
    if not key or "or" not in parts:
        return False
    for i in range(0, len(parts), 2):
        words = _plain(parts[i])
        before_or = i + 1 < len(parts) and parts[i + 1] == "or"
        after_or = i > 0 and parts[i - 1] == "or"
        if (
            words == key
            or (before_or and f" {words}".endswith(f" {key}"))
            or (after_or and f"{words} ".startswith(f"{key} "))
        ):
            return True
    return False


def answer_of(ranked: list[dict], question: str, topics: list[str] | tuple = ()) -> str:
    """The name of the best ranked entity that is not the question's own; empty when every one is a topic.

    The question's own: a topic entity of the plan's routes, or a name the question holds as a whole phrase.
    When every ranked entity is one of those and some are not topics, the best of these is the answer:
    "is The Lookout considered good" is answered by the rating "good" its route reached, not by nothing.
    A list question (:func:`tools.list_answer.asks_for_list`) whose best entity was reached along
    graph edges gets every such entity's name, in rank order, joined by "; ".
    """
    own = set(topics)
    fresh = [r for r in ranked if r["id"] not in own and not _named(r["name"], question)]
    if fresh and fresh[0].get("source") == "kg" and asks_for_list(question):  # every graph-reached answer
        return joined(list(dict.fromkeys(r["name"] for r in fresh if r.get("source") == "kg")))
    if not fresh:  # only names the question writes: the best one that is no topic (the rating "good")
        fresh = [r for r in ranked if r["id"] not in own]
    return fresh[0]["name"] if fresh else ""


def outputs(kb: KnowledgeBase, question: str, top: list[dict], topics: list[str] | tuple = ()) -> dict:
    """``answer``, ``ranked`` and ``evidence`` of the reranked top-K.

    The answer is the name of the best entity that is not the question's own (:func:`answer_of`;
    retrieval, not generation; QA mode generates one instead).

    Each candidate reached along edges gives an item with its traversal path (``kg`` when a graph
    edge is on it, ``doc`` for textual edges only), and every candidate a ``doc`` item (its text
    closest to the question).
    """
    qvec = question_vector(kb, question) if top else None
    on_paths = [e for c in top if len(c["trajectory"]) > 1 for e in _entities(c["trajectory"])]
    names = kb.names(dict.fromkeys([*(c["id"] for c in top), *on_paths])) if top else {}  # one store read
    ranked, evidence = [], []
    for c in top:
        traj, eid = c["trajectory"], c["id"]
        structural = any(s["via"] == "struct" for s in traj)
        ranked.append(
            {
                "id": eid,
                "kind": "entity",
                "name": names[eid],
                "score": c["score"],
                "source": "kg" if structural else "doc",
            }
        )
        if len(traj) > 1:  # reached along edges (graph edges, or textual ones: agents.mor.mentions)
            evidence.append(
                {
                    "source": "kg" if structural else "doc",
                    "id": eid,
                    "text": verbalise_trajectory(kb, traj, names),
                    "score": c["score"],
                    "path": [s["edge"] for s in traj[1:]],
                }
            )
        evidence.append(
            {"source": "doc", "id": eid, "text": best_text(kb, qvec, eid), "score": c["score"], "path": None}
        )
    return {"answer": answer_of(ranked, question, topics), "ranked": ranked, "evidence": evidence}


def passage_outputs(kb: KnowledgeBase, question: str, k: int, matcher: str = "bm25") -> dict:
    """``answer``, ``ranked`` and ``evidence`` from the passages about no entity, for a run that reached no entity.

    MoR retrieves graph nodes; where the text that answers lives only in passages tied to no
    entity (a documents KB), the ``k`` passages that best match the question are ranked instead (BM25 and
    dense hits fused, near-duplicates by corroboration: :func:`tools.fused_text.hybrid_search`; ``matcher``
    is kept for callers, both searches run), and the answer is the span they
    state (:func:`tools.answer_span.passage_answer`).
    """
    hits = [h for h in hybrid_search(kb, question, k, "passage") if not h.doc.entity_id]
    items = [{"kind": "passage", "id": h.doc.id, "text": h.doc.text, "score": h.score} for h in hits]
    return {
        "answer": passage_answer(question, items),
        "ranked": [
            {"id": i["id"], "kind": "passage", "name": i["id"], "score": i["score"], "source": "doc"} for i in items
        ],
        "evidence": [
            {"source": "doc", "id": i["id"], "text": i["text"], "score": i["score"], "path": None} for i in items
        ],
    }


def references_text(ranked: list[dict], evidence: list[dict], chars: int = ANSWER_CHARS) -> str:
    """The ranked entities with their paths and texts, as the answerer's quoted data (one block each).

    Best first, until their paths and texts (each cut at ``TEXT_CHARS``) reach ``chars`` characters;
    the first entity is always shown. On a documents KB the passage that states the answer often
    ranks below the ones that name the question's topic (the second hop of a two-hop question), so
    the answerer reads as many as the budget allows, not a fixed few.
    """
    blocks, used = [], 0
    for i, r in enumerate(ranked, 1):
        fields = [("name", r["name"])]
        fields += [
            ("path" if e.get("path") else "text", e["text"][:TEXT_CHARS]) for e in evidence if e["id"] == r["id"]
        ]
        size = sum(len(v) for _, v in fields)
        if blocks and used + size > chars:
            break
        blocks.append(data_block(fields, n=i, source=r["source"]))
        used += size
    return "\n".join(blocks) or "(nothing retrieved)"


def render_trace(trace: list[dict]) -> str:
    """The Planning → Reasoning → Organizing path of one run, one line per step."""
    lines = []
    for s in trace:
        match s["node"]:
            case "plan_question":
                routes = "; ".join(s["routes"]) or "(none)"
                lines.append(f"Plan {s['iteration']}: {routes} — {s['decision']}")
                lines += [f"  problem: {p}" for p in s["problems"]]
            case "traverse_route":
                sizes = ", ".join(f"{x['type']} {x['struct']}+{x['text']}" for x in s["layers"])
                lines.append(f"Traverse {s['decision']} (per layer structural+textual: {sizes})")
            case "intersect_routes":
                lines.append(
                    f"Merge: {s['decision']} of {s['route_sizes']} → {s['merged']}, {s['selected']} kept for reranking"
                )
            case "match_text":
                lines.append(f"Text: {s['decision']}")
            case "rerank_trajectories":
                mix = f"{s['structural']} structural, {s['textual']} textual"
                lines.append(f"Rerank: {s['decision']} ({mix})")
            case "generate_answer":
                lines.append(f"Answer: {s['answer']}")
    return "\n".join(lines)
