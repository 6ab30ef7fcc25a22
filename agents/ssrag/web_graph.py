"""SSRAG's graph branch on the web route: graph knowledge built from the web results' text.

The paper routes every retriever to the chosen source ("the router output would point the
vector, graph, and hybrid retriever to either web snippets ... or the pre-curated corpus",
§III-B) and builds its graph from documents (§III-C). On the web route the graph branch
therefore reads no local graph: it extracts triples from the web results the vector branch
fetched and makes graph nodes of them.

- Extraction: one LLM call (role ``triple_extractor``) over the results as numbered data
  blocks, returning ``subject | relation | object`` triples. A triple is kept only when its
  subject and object both occur in the result it cites (no invented entity).
- Fallback (unparseable reply, or no model): per sentence, the capitalised names it holds
  (:func:`tools.retrieval.explicit_mentions`); the first is the subject, each later one an
  object, and the words between them (at most ``MAX_RELATION_WORDS``) the relation.
- Nodes: the triples grouped by entity; the question's entities first, then the others by
  the cosine of their best fact to the question; each with its facts most relevant first, in
  the shape :func:`agents.ssrag.nodes.relevant_nodes` returns (ids ``web:<name>``).
"""

from __future__ import annotations

import re

import numpy as np
from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from agents.llm.structured import call_structured
from agents.ssrag.vectors import vectors
from kb.base import KnowledgeBase
from prompts import ssrag as P
from prompts.data_block import data_blocks
from tools.retrieval import explicit_mentions

MAX_RELATION_WORDS = 6
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


class WebTriple(BaseModel):
    """One fact stated by a web result."""

    subject: str = Field(description="The entity the fact is about, as written in the result.")
    relation: str = Field(description="The relation in a few words.")
    object: str = Field(description="The other entity or value, as written in the result.")
    source: int = Field(description="Number of the result that states it.")


class WebTriples(BaseModel):
    """Facts extracted from the web results."""

    triples: list[WebTriple] = Field(default_factory=list, description="Facts stated by the results.")


def _has(text: str, phrase: str) -> bool:
    return bool(phrase.strip()) and re.search(rf"(?<!\w){re.escape(phrase.strip())}(?!\w)", text,
                                              re.IGNORECASE) is not None


def rule_triples(texts: list[str]) -> list[tuple[str, str, str]]:
    """Deterministic triples: capitalised names of a sentence linked by the words between them."""
    out = []
    for text in texts:
        for sent in _SENTENCE.split(text):
            found = list(dict.fromkeys(n for n in explicit_mentions(sent) if n in sent))
            # runs joined across lower-case words ("Tom Hanks starred in Cast Away") hold two names
            names = sorted((n for n in found if not any(m != n and m in n for m in found)), key=sent.index)
            if len(names) < 2:
                continue
            head = names[0]
            for tail in names[1:]:
                between = sent[sent.index(head) + len(head): sent.index(tail)].split()
                rel = " ".join(between[:MAX_RELATION_WORDS]).strip(" ,;:") or "related to"
                out.append((head, rel, tail.rstrip(".")))
    return list(dict.fromkeys(out))


def extract(model: BaseChatModel | None, items: list[dict],
            method: str) -> tuple[list[tuple[str, str, str]], dict, str | None]:
    """Triples of the web results; returns (triples, usage, fallback note or None)."""
    texts = [it["text"] or "" for it in items]
    if not texts:
        return [], {}, None
    if model is None:
        return rule_triples(texts), {}, None
    blocks = data_blocks([("title", it["name"]), ("text", it["text"] or "")] for it in items)
    messages = [("system", P.WEB_TRIPLES_SYSTEM.template), ("human", P.WEB_TRIPLES.format(results=blocks))]
    reply, usage = call_structured(model, WebTriples, messages, role="triple_extractor", method=method)
    if reply is None:
        return rule_triples(texts), usage, "unparseable triples: names of each sentence linked by rule"
    kept = [(t.subject.strip(), " ".join(t.relation.split()), t.object.strip()) for t in reply.triples
            if 1 <= t.source <= len(texts) and _has(texts[t.source - 1], t.subject)
            and _has(texts[t.source - 1], t.object) and t.relation.strip()]
    dropped = len(reply.triples) - len(kept)
    return list(dict.fromkeys(kept)), usage, (f"dropped {dropped} triples not in their result" if dropped else None)


def web_nodes(kb: KnowledgeBase, triples: list[tuple[str, str, str]], entities: list[str], qv: np.ndarray,
              k: int, max_facts: int) -> list[dict]:
    """Graph nodes of the extracted triples: question entities first, then by best fact cosine."""
    facts: dict[str, list[tuple[str, list[str]]]] = {}
    for s, r, o in triples:
        for end in (s, o):
            facts.setdefault(end, []).append((f"{s} {r} {o}", [s, r, o]))
    if not facts or k <= 0:
        return []
    sentences = list(dict.fromkeys(f for fs in facts.values() for f, _ in fs))
    score = dict(zip(sentences, (vectors(kb, sentences) @ qv).tolist(), strict=True))
    asked = {e.lower() for e in entities}
    order = sorted(facts, key=lambda n: (n.lower() not in asked, -max(score[f] for f, _ in facts[n])))
    nodes = []
    for name in order[:k]:
        ranked = sorted(dict(facts[name]).items(), key=lambda fr: -score[fr[0]])[:max_facts]
        nodes.append({"id": f"web:{name}", "name": name, "facts": [f for f, _ in ranked],
                      "triples": [r for _, r in ranked], "links": {}, "hop": 0,
                      "prior": None if name.lower() in asked else round(max(score[f] for f, _ in facts[name]), 4)})
    return nodes
