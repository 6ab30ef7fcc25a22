"""What the graph read, write and namespace helpers need from a Cypher store.

:class:`~kb.graph_cypher_store.CypherGraphStore` satisfies this protocol; the helpers take it as an
argument typed by the protocol, so they never import the store module that imports them.
"""

from __future__ import annotations

from typing import Any, Protocol

from hybridrag.kb.graph_codec import Codec


class CypherSession(Protocol):
    """A Cypher store as its helpers see it: limits, codec, and the query and id-cache calls."""

    codec: Codec
    max_message_bytes: int
    max_record_chars: int
    uri: str

    def _query(self, query: str, params: dict[str, Any], write: bool = False) -> list[dict[str, Any]]:
        """Run one query; return its records as dicts."""
        ...

    @property
    def _id_cache(self) -> dict[str, str]:
        """Digest key -> entity id of the entities read so far."""
        ...

    def _remember(self, key: str, entity_id: str) -> None:
        """Put one key -> id pair in the id cache."""
        ...

    def _by_keys(self, query: str, keys: list[str], **extra: Any) -> list[dict[str, Any]]:
        """Run ``query`` over ``$keys`` in as few requests as the message cap allows."""
        ...
