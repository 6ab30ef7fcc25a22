"""How string values are stored on a graph server so that no user string can reach its query text.

Some servers do not keep parameters apart from the query: FalkorDB's own client (falkordb-py
``_build_params_header``) and its Bolt layer both splice parameter values into a ``CYPHER k=v``
header of the query text, and the Bolt layer does not escape ``'``. Values sent to such a server are
therefore encoded into characters that cannot end a string literal: :data:`HEX` (UTF-8 bytes as
lowercase hex). A genuine Neo4j keeps parameters apart, so it gets readable values (:data:`PLAIN`).

Equality lookups never send the value itself: they use :func:`digest` keys (fixed-size hex), so a
lookup of an 8 KB name costs the same small message as any other.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import overload

SAFE = re.compile(r"^[0-9a-f]*$")


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def digest(text: str) -> str:
    """A 32-character hex key of ``text`` (BLAKE2b, 128 bits): what equality lookups compare."""
    return hashlib.blake2b(_utf8(text), digest_size=16).hexdigest()


@dataclass(frozen=True)
class Codec:
    """Turns strings into the form stored on the server and back; ``name`` is recorded in the graph."""

    name: str

    @overload
    def enc(self, text: str) -> str: ...
    @overload
    def enc(self, text: None) -> None: ...
    def enc(self, text: str | None) -> str | None:
        """The stored form of ``text`` (None stays None)."""
        if text is None or self.name == "plain":
            return text
        return _utf8(text).hex()

    @overload
    def dec(self, stored: str) -> str: ...
    @overload
    def dec(self, stored: None) -> None: ...
    def dec(self, stored: str | None) -> str | None:
        """The original string of a stored value (None stays None)."""
        if stored is None or self.name == "plain":
            return stored
        return bytes.fromhex(stored).decode("utf-8", "surrogatepass")

    def enc_all(self, texts: Iterable[str]) -> list[str]:
        """Stored forms of several strings."""
        return [self.enc(t) for t in texts]

    def dec_all(self, stored: Iterable[str] | None) -> tuple[str, ...]:
        """Original strings of several stored values (None is empty)."""
        return tuple(self.dec(s) for s in stored or ())


PLAIN = Codec("plain")
HEX = Codec("hex")
CODECS = {c.name: c for c in (PLAIN, HEX)}
