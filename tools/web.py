"""Web search through Tavily; needs TAVILY_API_KEY."""

from __future__ import annotations

import os


class WebSearchError(RuntimeError):
    """Web search is unavailable or failed; the message says why in one line."""


def web_search(query: str, k: int = 5) -> list[dict]:
    """Return up to ``k`` web results as ``{"kind": "web", "id": url, "name": title, "text", "score"}``."""
    key = os.environ.get("TAVILY_API_KEY")
    if not key:
        raise WebSearchError("web search needs TAVILY_API_KEY to be set (get a key at tavily.com)")
    if not query.strip():
        raise WebSearchError("web search needs a non-empty query")
    from tavily import TavilyClient

    try:
        resp = TavilyClient(api_key=key).search(query, max_results=k)
    except Exception as exc:  # the client raises many transport-specific types
        raise WebSearchError(f"web search failed: {exc}") from None
    return [
        {
            "kind": "web",
            "id": r.get("url", ""),
            "entity_id": None,
            "name": r.get("title", ""),
            "text": r.get("content", ""),
            "score": float(r.get("score") or 0.0),
        }
        for r in resp.get("results", [])
    ]
