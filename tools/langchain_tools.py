"""The retrieval functions as LangChain tools bound to one KB (for agentic source selection)."""

from __future__ import annotations

from langchain_core.tools import BaseTool, StructuredTool

from kb.base import KnowledgeBase
from tools import retrieval, web


def make_tools(kb: KnowledgeBase, include_web: bool = False) -> list[BaseTool]:
    """Return the KB's retrieval tools, named by what they do; web search only on request."""

    def text_search(query: str, k: int = 10) -> list[dict]:
        """Search entity documents and passages by meaning (dense vectors)."""
        return retrieval.dense_search(kb, query, k)

    def keyword_search(query: str, k: int = 10) -> list[dict]:
        """Search entity documents and passages by keywords (BM25)."""
        return retrieval.lexical_search(kb, query, k)

    def link_entities(mentions: list[str]) -> dict[str, list[dict]]:
        """Map entity mentions to KB entities."""
        return retrieval.link_entities(kb, mentions)

    def graph_neighbors(ids: list[str], relations: list[str] | None = None, direction: str = "both") -> list:
        """List the relations of entities, optionally of given types and direction (out/in/both)."""
        return retrieval.neighbors(kb, ids, relations, direction)  # type: ignore[arg-type]

    def graph_ego(ids: list[str], radius: int = 2, relations: list[str] | None = None) -> dict:
        """Entities within a few hops of the given entities, with the paths reaching them."""
        return retrieval.ego_graph(kb, ids, radius, relations)

    def graph_paths(sources: list[str], targets: list[str], max_hops: int = 2) -> list:
        """Paths of at most max_hops relations connecting two sets of entities."""
        return retrieval.paths(kb, sources, targets, max_hops)

    fns = [text_search, keyword_search, link_entities, graph_neighbors, graph_ego, graph_paths]
    tools = [StructuredTool.from_function(f) for f in fns]
    if include_web:
        tools.append(StructuredTool.from_function(web.web_search, name="web_search"))
    return tools
