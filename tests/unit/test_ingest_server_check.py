"""An ingest naming a graph server that is down is refused before it parses or embeds anything."""

import socket

import pytest

from hybridrag.kb.model import KBError


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("option", ["neo4j_uri", "falkordb_uri"])
def test_a_graph_server_that_is_down_is_refused_before_the_embeddings(tmp_path, monkeypatch, option):
    from hybridrag.kb import ingest as ki

    def no_embeddings(*args, **kwargs):
        raise AssertionError("the embeddings must not start when the graph server is down")

    monkeypatch.setattr(ki, "get_embeddings", no_embeddings)
    triples = tmp_path / "kb.txt"
    triples.write_text("Big|directed_by|Penny Marshall\n")
    scheme = "bolt" if option == "neo4j_uri" else "redis"
    with pytest.raises(KBError, match="cannot reach"):
        ki.ingest(
            tmp_path / "kb", triples=[triples], progress=False, **{option: f"{scheme}://127.0.0.1:{_closed_port()}"}
        )
