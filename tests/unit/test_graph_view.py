"""The read-only graph view (issue 28 item 5): ``hybridrag kb show``, the server's /graph and /<method>/view."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from hybridrag.app.cli import main
from hybridrag.app.graph_view import answer_path, entity_view, render_text
from hybridrag.kb.base import open_kb
from hybridrag.kb.model import UnknownEntityError
from hybridrag.kb.sample import sample_kb_dir


@pytest.fixture(scope="module")
def kb():
    return open_kb(sample_kb_dir())


@pytest.fixture(scope="module")
def client():
    from hybridrag.app.server import create_app

    return TestClient(create_app(methods=["fusion"]))


def test_kb_show_prints_the_entity_its_type_neighbours_by_relation_and_passages(capsys):
    assert main(["kb", "show", "--entity", "forrest gump"]) == 0  # names match case-insensitively
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Forrest Gump  [movie]")
    assert "  Forrest Gump → directed by → Robert Zemeckis" in lines
    assert "  Forrest Gump → starred actors → Sally Field; Tom Hanks" in lines
    assert any(line.startswith("passages: ") for line in lines) and all("\n" not in line for line in lines)


def test_incoming_edges_read_from_the_other_entity(kb):
    text = render_text(entity_view(kb, "Tom Hanks"))
    assert re.search(r"^  .*Forrest Gump.* → starred actors → Tom Hanks$", text, flags=re.M)


def test_an_unknown_entity_names_the_closest(capsys):
    assert main(["kb", "show", "--entity", "Forest Gump"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: no entity named 'Forest Gump'") and "closest: Forrest Gump" in err
    assert len(err.splitlines()) == 1


def test_the_neighbour_list_is_bounded(kb):
    view = entity_view(kb, "Tom Hanks", max_neighbours=3)
    assert len(view.neighbours) == 3 < view.total_neighbours
    assert "(showing 3)" in render_text(view)
    with pytest.raises(ValueError, match="at least 1"):
        entity_view(kb, "Tom Hanks", max_neighbours=0)
    with pytest.raises(ValueError, match="empty entity name"):
        entity_view(kb, " ")


def test_the_path_behind_an_answer(kb):
    [hop] = answer_path(kb, "Forrest Gump", "Robert Zemeckis")
    assert (hop.head, hop.type, hop.tail) == ("Forrest Gump", "directed_by", "Robert Zemeckis")
    two = answer_path(kb, "Sally Field", "Robert Zemeckis", max_hops=9)  # clamped to MAX_HOPS
    assert [t.type for t in two] == ["starred_actors", "directed_by"]
    with pytest.raises(UnknownEntityError):
        answer_path(kb, "Forrest Gump", "Nobody Atall")


def test_graph_page_draws_the_neighbours_and_the_path(client):
    r = client.get("/graph", params={"entity": "Forrest Gump", "answer": "Robert Zemeckis"})
    assert r.status_code == 200 and "<script" not in r.text
    assert not re.search(r'(src|href)="(https?:)?//', r.text)  # nothing fetched from elsewhere: works offline
    hood = r.text.split('<svg id="neighbourhood"')[1].split("</svg>")[0]
    assert {"Robert Zemeckis", "Tom Hanks", "Sally Field", "Winston Groom"} <= set(
        re.findall(r'data-id="([^"]+)"', hood)
    )
    path = r.text.split('<svg id="answer-path"')[1].split("</svg>")[0]
    assert re.findall(r'data-id="([^"]+)"', path) == ["Forrest Gump", "Robert Zemeckis"] and "directed by" in path


@pytest.mark.parametrize(
    ("params", "status", "says"),
    [
        ({"entity": "Forest Gump"}, 404, "closest: Forrest Gump"),
        ({"entity": "Big", "kb": "/etc"}, 400, "unknown KB"),  # a client names a KB, never a path
        ({"entity": "Big", "hops": 7}, 400, "hops: 1 to 3"),
        ({"entity": "x" * 201}, 400, "at most 200"),
        ({}, 400, "entity: give"),
    ],
)
def test_graph_page_refuses_in_one_line(client, params, status, says):
    r = client.get("/graph", params=params)
    assert r.status_code == status and says in r.text and 'id="error"' in r.text


def test_view_page_puts_the_answer_before_the_evidence(client):
    r = client.get("/fusion/view", params={"question": "who directed Forrest Gump"})
    assert r.status_code == 200
    text = r.text
    assert re.search(r'id="answer" class="answer">Robert Zemeckis<', text)
    assert text.index('id="answer"') < text.index('id="evidence"') < text.index("Forrest Gump → directed by")
    assert '<svg id="answer-path"' in text


def test_view_page_refuses_a_kb_path_and_a_long_question(client):
    assert client.get("/fusion/view", params={"question": "who directed Big", "kb": "/tmp"}).status_code == 400
    r = client.get("/fusion/view", params={"question": "x" * 5000})
    assert r.status_code in (400, 422) and 'id="error"' in r.text


def test_the_playground_page_loads_the_answer_first_script(client):
    page = client.get("/fusion/playground/")
    assert page.status_code == 200 and '<script src="/fusion/playground-answer.js"></script></body>' in page.text
    assert int(page.headers["content-length"]) == len(page.content)
    script = client.get("/fusion/playground-answer.js")
    assert script.headers["content-type"].startswith("application/javascript") and "hr-answer-first" in script.text
    assert "http" not in script.text  # nothing fetched from elsewhere
    assert "playground-answer.js" not in client.get("/fusion/playground/assets/" + _asset(page.text)).text
    assert client.get("/health").headers["content-type"].startswith("application/json")


def _asset(html: str) -> str:
    return re.search(r'assets/([^"]+\.js)', html).group(1)


def test_the_operator_sets_the_graph_pages_bounds_and_a_lower_one_is_honoured():
    import argparse

    from hybridrag.app.operator import add_operator_arguments, operator_config
    from hybridrag.app.server import create_app
    from hybridrag.app.server_config import ServerConfig

    p = argparse.ArgumentParser()
    add_operator_arguments(p)
    flags = ["--kb", "sample=sample", "--graph-neighbours", "2", "--graph-max-hops", "1", "--graph-name-chars", "16"]
    config = operator_config(p.parse_args(flags))
    assert (config.graph_neighbours, config.graph_max_hops, config.graph_name_chars) == (2, 1, 16)
    assert (ServerConfig().graph_neighbours, ServerConfig().graph_max_hops, ServerConfig().graph_name_chars) == (
        40,
        3,
        200,
    )  # today's values are the defaults
    with pytest.raises(ValueError, match="graph_max_hops must be at most 3"):
        ServerConfig(graph_max_hops=4)
    with pytest.raises(ValueError, match="graph_neighbours must be an integer of at least 1"):
        ServerConfig(graph_neighbours=0)
    low = TestClient(create_app(methods=["fusion"], config=config))
    r = low.get("/graph", params={"entity": "Forrest Gump"})  # no hops named: within the operator's 1
    hood = r.text.split('<svg id="neighbourhood"')[1].split("</svg>")[0]
    assert r.status_code == 200 and len(set(re.findall(r'data-id="([^"]+)"', hood)) - {"Forrest Gump"}) == 2
    r = low.get("/graph", params={"entity": "Forrest Gump", "hops": 2})
    assert r.status_code == 400 and "hops: 1 to 1, not 2" in r.text
    two = {"entity": "Sally Field", "answer": "Robert Zemeckis"}  # 2 hops apart: drawn by default, not under 1
    assert (
        '<svg id="answer-path"'
        in TestClient(create_app(methods=["fusion"], config=ServerConfig())).get("/graph", params=two).text
    )
    r = low.get("/graph", params=two)
    assert r.status_code == 200 and '<svg id="answer-path"' not in r.text
    r = low.get("/fusion/view", params={"question": "who directed Forrest Gump"})  # a 1-hop path: still drawn
    assert r.status_code == 200 and '<svg id="answer-path"' in r.text
    r = low.get("/graph", params={"entity": "Forrest Gump Forrest Gump"})
    assert r.status_code == 400 and "at most 16 characters" in r.text
