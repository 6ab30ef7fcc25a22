"""The per-chunk cache of extraction replies under ``<kb>/.extract-cache/`` (what makes extraction resumable).

A reply is stored under a digest of the chunk text, the model, the structured-output method, the
schema and the prompt version, so a changed prompt, model or schema asks again and the same text
in another document (or another run) does not. Files are written to a temporary name and renamed:
a kill never leaves half a reply, and an unreadable file counts as absent.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

from hybridrag.kb.documents import Chunk
from hybridrag.kb.extract import Extraction
from hybridrag.kb.extract_schema import GraphSchema


class ExtractionCache:
    """One JSON file per extracted chunk under ``<kb>/.extract-cache/``, written atomically."""

    def __init__(self, folder: Path, model_name: str, method: str, schema: GraphSchema, prompt_version: str) -> None:
        """Cache for one model, structured method, schema and prompt version (all part of every key)."""
        self.folder = folder
        self._salt = json.dumps([prompt_version, model_name, method, schema.to_dict()], sort_keys=True)

    def _path(self, chunk: Chunk) -> Path:
        digest = hashlib.sha256(f"{self._salt}\n{chunk.text}".encode()).hexdigest()
        return self.folder / digest[:2] / f"{digest}.json"

    def get(self, chunk: Chunk) -> tuple[Extraction, dict] | None:
        """The cached reply and its usage; None when absent or unreadable (then it is asked again)."""
        try:
            data = json.loads(self._path(chunk).read_text(encoding="utf-8"))
            return Extraction.model_validate(data["extraction"]), data.get("usage", {})
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, chunk: Chunk, found: Extraction, usage: dict) -> None:
        """Store a reply (temporary file, then rename: a kill never leaves half a file)."""
        path = self._path(chunk)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")  # one writer per name
        tmp.write_text(
            json.dumps({"chunk": chunk.id, "extraction": found.model_dump(), "usage": usage}), encoding="utf-8"
        )
        os.replace(tmp, path)
