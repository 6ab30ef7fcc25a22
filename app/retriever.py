"""Every method as a LangChain retriever and as a tool an agent can call.

``get_retriever("mor", kb="/srv/kb/movies", llm=my_chat_model, top_k=5)`` is a
``BaseRetriever``: ``invoke(question)`` / ``ainvoke(question)`` run the method's graph and
return its evidence as ``Document``s, best first, each with ``metadata``:

- ``score`` (the method's score), ``source`` (``kg``, ``doc`` or ``web``), ``path`` (the KG
  path or passage trail that led to it), ``id`` (entity or passage id), ``rank`` (1-based);
- ``method``, ``answer`` (the method's answer to the whole question) and ``trace_id`` (the
  retriever run's id: the same id LangSmith and callbacks see, one per question).

``as_tool("fusion", kb=...)`` wraps the retriever with ``create_retriever_tool`` for an agent's
tool node (docs/retrievers.md). Settings are checked when the retriever is made (an unknown
one names the known ones); this is the Python API: a server never builds one from a
client's request (``app.policy``).
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import BaseTool, create_retriever_tool
from pydantic import ConfigDict

from hybridrag.graphs import REGISTRY, context_for, get_graph


def documents(output: dict, method: str, trace_id: str) -> list[Document]:
    """A method's output as Documents: its evidence (else its ranked items), best first."""
    evidence = output.get("evidence") or []
    answer = output.get("answer", "")
    if not evidence:  # a method that ranked items without evidence text: the items themselves
        evidence = [
            {
                "source": r.get("source", ""),
                "id": r.get("id", ""),
                "text": r.get("name", ""),
                "score": r.get("score", 0.0),
                "path": [],
            }
            for r in output.get("ranked") or []
        ]
    docs = []
    for rank, ev in enumerate(evidence, 1):
        path = ev.get("path") or []
        meta = {
            "score": float(ev.get("score") or 0.0),
            "source": str(ev.get("source", "")),
            "path": [str(p) for p in path] if isinstance(path, list | tuple) else [str(path)],
            "id": str(ev.get("id", "")),
            "rank": rank,
            "method": method,
            "answer": answer,
            "trace_id": trace_id,
        }
        docs.append(Document(page_content=str(ev.get("text", "")), metadata=meta, id=f"{trace_id}:{rank}"))
    return docs


class HybridRAGRetriever(BaseRetriever):
    """A registered method answering ``invoke(question)`` with Documents (see the module docstring)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    method: str
    settings: dict[str, Any] = {}

    def _context(self) -> Any:
        return context_for(self.method, **self.settings)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        out = get_graph(self.method).invoke(
            {"question": query}, context=self._context(), config={"callbacks": run_manager.get_child()}
        )
        return documents(out, self.method, str(run_manager.run_id))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        out = await get_graph(self.method).ainvoke(
            {"question": query}, context=self._context(), config={"callbacks": run_manager.get_child()}
        )
        return documents(out, self.method, str(run_manager.run_id))


def get_retriever(method: str, kb: str | None = None, **settings: Any) -> HybridRAGRetriever:
    """The retriever of ``method`` over ``kb`` (a KB directory; default the bundled sample) with ``settings``.

    ``settings`` are any fields of the method's Context: ``top_k``, ``mode``, ``llm`` as a spec or a
    chat model object, ... Unknown methods or settings raise at once, naming the known ones.
    """
    settings = {**settings, **({"kb": str(kb)} if kb is not None else {})}
    context_for(method, **settings)  # KeyError / TypeError now rather than at the first question
    return HybridRAGRetriever(method=method, settings=settings, tags=["hybridrag", method])


def as_tool(method: str, kb: str | None = None, *, name: str = "", description: str = "", **settings: Any) -> BaseTool:
    """The retriever of ``method`` as an agent tool (``create_retriever_tool``).

    The tool takes a query and returns the evidence, one ``[source score] text`` block per Document.
    """
    from langchain_core.prompts import PromptTemplate

    retriever = get_retriever(method, kb, **settings)
    return create_retriever_tool(
        retriever,
        name or f"hybridrag_{method}",
        description
        or (
            f"Search the knowledge base (knowledge graph and passages) with hybridrag's {method} "
            f"method: {REGISTRY[method].description} Input: a self-contained question."
        ),
        document_prompt=PromptTemplate.from_template("[{source} {score}] {page_content}"),
    )
