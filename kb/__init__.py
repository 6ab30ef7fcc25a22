"""The knowledge base layer: data model, graph stores, text indexes, ingestion."""

from kb.model import Entity, KBError, MalformedInputError, Passage, Schema, Triple, UnknownEntityError

__all__ = ["Entity", "KBError", "MalformedInputError", "Passage", "Schema", "Triple", "UnknownEntityError"]
