"""Documents → hybrid KB: graph extraction per chunk (an LLM, or rules offline) and the document ingest.

- :mod:`agents.extraction.extractor`: one structured call per chunk (:mod:`prompts.extract`),
  replies cached on disk, a bounded number of calls at a time (or, for texts of one question
  such as SSRAG's web pages, one at a time within an LLM call cap);
- :mod:`agents.extraction.rules`: extraction by rule, the fallback when no reply is usable;
- :mod:`agents.extraction.patterns` (names and dates from :mod:`agents.extraction.spans`): the
  offline extractor, sentence patterns with no model (``--extract-llm rules``);
- :mod:`agents.extraction.pipeline`: :func:`ingest_documents`, documents → chunks → (extraction →
  entity resolution) → a KB build with provenance (the ``kb`` parts do everything but the LLM).

``ingest_documents`` is imported on first use, so the extractor alone (SSRAG's web route) does
not load the ingest's build machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hybridrag.agents.extraction.pipeline import ingest_documents

__all__ = ["ingest_documents"]


def __getattr__(name: str):
    if name == "ingest_documents":
        from hybridrag.agents.extraction.pipeline import ingest_documents

        return ingest_documents
    raise AttributeError(f"module 'hybridrag.agents.extraction' has no attribute {name!r}")
