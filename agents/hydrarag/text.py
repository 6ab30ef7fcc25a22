"""HydraRAG unstructured retrieval (paper §4.2.1, Algorithm 2): documents and web → paths.

- Documents: the topics' documents and the ``doc_pool`` best corpus passages for the query
  (:mod:`agents.hydrarag.documents`), split into sentences; the dense retrieval model keeps the
  top sentences by similarity to the skyline indicator (not the question), and one LLM call
  turns them into knowledge paths. The documents read are returned with the paths.
- Web: the query goes to the search engine (:func:`tools.web.web_search`), the LLM picks
  the top W_max results, and their text goes through the same sentence screening and
  path construction.
- Path entities are aligned to the KB (exact name, else embedding match) so verification
  can check them against the question subgraph.

Fallback when the path construction is unparseable: each selected sentence becomes a one-step
path whose entities are the KB names it mentions. Each candidate keeps the sentence it was built
from and, under ``instructions``, the sentences shown to the path-construction call that read as
instructions (usually none), so the answer support check knows what the model may have been told
(:mod:`prompts.grounding`).
"""

from __future__ import annotations

from dataclasses import dataclass

from hybridrag.agents.hydrarag import roles as roles
from hybridrag.agents.hydrarag.analysis import link_names, split_chain
from hybridrag.agents.hydrarag.documents import NAMING_PER_POOL as NAMING_PER_POOL
from hybridrag.agents.hydrarag.documents import build_sentence_table as build_sentence_table
from hybridrag.agents.hydrarag.documents import gather_docs as gather_docs
from hybridrag.agents.hydrarag.documents import naming as naming
from hybridrag.agents.hydrarag.documents import read
from hybridrag.agents.hydrarag.documents import sentences as sentences
from hybridrag.agents.hydrarag.documents import top_sentences as top_sentences
from hybridrag.agents.hydrarag.pruning import apply_choice
from hybridrag.agents.hydrarag.text_rules import rule_paths
from hybridrag.agents.llm.structured import add_usage
from hybridrag.kb.base import KnowledgeBase
from hybridrag.prompts.data_block import data_block, data_list
from hybridrag.prompts.grounding import is_instruction
from hybridrag.tools import web
from hybridrag.tools.retrieval import mentions_in


@dataclass(frozen=True)
class TextSettings:
    """Settings of unstructured retrieval."""

    num_sentences: int = 3
    doc_pool: int = 5
    web_results: int = 5
    max_width: int = 3
    link_threshold: float = 0.75
    method: str = "function_calling"
    rules: bool = False  # paragraph → path by rule (:mod:`agents.hydrarag.text_rules`), no LLM call


def _paragraphs(sents: list[dict]) -> str:
    return "\n".join(data_block(s["sentence"], n=i) for i, s in enumerate(sents, 1))


def _fallback_paths(kb: KnowledgeBase, sents: list[dict]) -> list[dict]:
    return [{"sent": s, "tokens": [s["sentence"]], "ids": mentions_in(kb, s["sentence"])} for s in sents]


def _parsed_paths(kb: KnowledgeBase, reply: roles.TextPaths, sents: list[dict], threshold: float) -> list[dict]:
    raw = [(sents[p.paragraph - 1], split_chain(p.path)) for p in reply.paths if 1 <= p.paragraph <= len(sents)]
    raw = [(s, toks) for s, toks in raw if len(toks) >= 3]
    linked = link_names(kb, [n for _, toks in raw for n in toks[0::2]], threshold)
    return [
        {"sent": s, "tokens": toks, "names": toks[0::2], "ids": [linked.get(n) for n in toks[0::2]]} for s, toks in raw
    ]


def to_candidates(
    kb: KnowledgeBase,
    reply: roles.TextPaths | None,
    sents: list[dict],
    source: str,
    phase: str,
    threshold: float,
    built: list[dict] | None = None,
) -> tuple[list[dict], str | None]:
    """Candidate paths and the fallback note (None when no fallback was taken).

    The paths are the LLM's, or ``built`` ones (:mod:`agents.hydrarag.text_rules`), or the sentence fallback.
    """
    if built is None:
        built = _parsed_paths(kb, reply, sents, threshold) if reply is not None else []
    note = None
    if not built:
        note = (
            "unparseable path construction: sentences kept as paths"
            if reply is None
            else "no usable path in the reply: sentences kept as paths"
        )
        built = _fallback_paths(kb, sents)
    flagged = [s["sentence"] for s in sents if is_instruction(s["sentence"])]
    out = []
    for n, b in enumerate(built):
        names = b.get("names", [])
        keys = (
            [f"id:{i}" if i else f"name:{nm.lower()}" for nm, i in zip(names, b["ids"], strict=True)]
            if names
            else [f"id:{i}" for i in b["ids"]]
        )
        out.append(
            {
                "id": f"{source}:{phase}:{n}",
                "source": source,
                "phase": phase,
                "text": " → ".join(b["tokens"]),
                "keys": list(dict.fromkeys(keys)),
                "answers": [i for i in b["ids"] if i],
                "doc_id": b["sent"]["doc_id"],
                "doc_name": b["sent"]["doc_name"],
                "path": b["tokens"],
                "sentence": b["sent"]["sentence"],
                "instructions": flagged,
                "follows": b.get("follows", False),
            }
        )
    return out, note


def _select_sentences(kb: KnowledgeBase, chains: list[dict], docs_of, k: int) -> list[dict]:
    """Each chain's top ``k`` sentences, each sentence once (:func:`agents.hydrarag.documents.read`)."""
    return read(kb, chains, docs_of, k, "doc")[0]


def _build_paths(
    kb, model, question: str, probe: dict, sents: list[dict], source: str, s: TextSettings
) -> tuple[list[dict], dict, str | None]:
    note: str | None
    if not sents:
        return [], {}, f"no {source} sentences"
    names = sorted({n for ch in probe["chains"] for n in ch["names"]})
    if s.rules:
        built = rule_paths(kb, probe["chains"], sents)
        note = "judge rules (small model): paths from the sentences naming a topic" + (
            "" if built else "; none found: sentences kept as paths"
        )
        return to_candidates(kb, None, sents, source, probe["phase"], s.link_threshold, built)[0], {}, note
    skyline = data_list(dict.fromkeys(ch["indicator"] for ch in probe["chains"]))
    reply, usage = roles.paths_from_text(
        model, question, data_list(names), skyline, _paragraphs(sents), s.method, probe.get("examples", "")
    )
    cands, note = to_candidates(kb, reply, sents, source, probe["phase"], s.link_threshold)
    return cands, usage, note


def explore_docs(kb: KnowledgeBase, model, question: str, probe: dict, s: TextSettings):
    """Document exploration: returns (candidates, usage, note, documents read)."""
    sents, documents = read(
        kb,
        probe["chains"],
        lambda ch: gather_docs(kb, ch["doc_topics"], ch["query"], s.doc_pool, ch.get("doc_names")),
        s.num_sentences,
        "doc",
    )
    return (*_build_paths(kb, model, question, probe, sents, "doc", s), documents)


def explore_web(kb: KnowledgeBase, model, question: str, probe: dict, s: TextSettings):
    """Web exploration: (candidates, usage, note, documents read); raises :class:`tools.web.WebSearchError`."""
    results: dict[str, dict] = {}
    for q in dict.fromkeys(ch["query"] for ch in probe["chains"]):
        for r in web.web_search(q, k=s.web_results):
            results.setdefault(r["id"], r)
    found = list(results.values())
    if not found:
        return [], {}, "web search returned nothing", []
    listing = "\n".join(
        data_block([("title", r["name"]), ("snippet", r["text"][:300])], n=i) for i, r in enumerate(found, 1)
    )
    skyline = data_block(probe["chains"][0]["indicator"])
    choice, usage = roles.select_web(model, question, skyline, listing, s.max_width, s.method)
    chosen, used = apply_choice(found, choice.selected if choice else None, s.max_width)
    docs = [(r["id"], r["name"] or r["id"], r["text"]) for r in chosen]
    sents, documents = read(kb, probe["chains"], lambda ch: docs, s.num_sentences, "web")
    cands, more, note = _build_paths(kb, model, question, probe, sents, "web", s)
    pick_note = None if used else "web selection unusable: top results by engine order"
    return cands, add_usage(usage, more), "; ".join(n for n in (pick_note, note) if n) or None, documents
