"""The throw-away FalkorDB server of the tests: :mod:`kb.graph_local` (shared with the reliability probes)."""

from hybridrag.kb.graph_local import FalkorDBServer, binaries, bolt_answers, free_port

__all__ = ["FalkorDBServer", "binaries", "bolt_answers", "free_port"]
