"""Documents → hybrid KB with an LLM: graph extraction per chunk and the document ingest that uses it.

- :mod:`agents.extraction.extractor`: one structured call per chunk (:mod:`prompts.extract`),
  replies cached on disk, a bounded number of calls at a time;
- :mod:`agents.extraction.pipeline`: :func:`ingest_documents`, documents → chunks → (extraction →
  entity resolution) → a KB build with provenance (the ``kb`` parts do everything but the LLM).
"""

from agents.extraction.pipeline import ingest_documents

__all__ = ["ingest_documents"]
