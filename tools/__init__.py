"""Retrieval operations over a KB, as plain typed functions and as LangChain tools."""

from hybridrag.tools.retrieval import (
    dense_search,
    ego_graph,
    lexical_search,
    link_entities,
    mentions_in,
    neighbors,
    paths,
)
from hybridrag.tools.web import WebSearchError, web_search

__all__ = [
    "WebSearchError",
    "dense_search",
    "ego_graph",
    "lexical_search",
    "link_entities",
    "mentions_in",
    "neighbors",
    "paths",
    "web_search",
]
