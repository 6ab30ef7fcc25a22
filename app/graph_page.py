"""The server's pages a person reads: an answer first (``/<method>/view``) and the graph (``/graph``).

Plain HTML with inline SVG drawn on the server: no script, nothing fetched from elsewhere
(the pages work offline and in any browser).

- ``GET /<method>/view?question=Q[&kb=NAME]``: the method's answer, then its numbered items,
  each with its own evidence (:func:`app.display.answer_view`), then the graph path from the
  question's entity to the answer. The run is admitted and bounded like ``/invoke``'s.
- ``GET /graph?entity=NAME[&kb=NAME][&answer=NAME][&hops=N]``: the entity's neighbourhood
  (at most the operator's ``graph_neighbours`` neighbours) and, with ``answer``, the path to
  it (at most ``graph_max_hops`` hops) (:mod:`app.view_routes`). ``kb`` is a name the operator
  gave a KB, never a path.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any
from urllib.parse import urlencode

from hybridrag.app.display import answer_view, one_line
from hybridrag.app.graph_view import EntityView, relation_label
from hybridrag.kb.model import Triple

W, H, R = 760, 560, 215  # the neighbourhood drawing: size and ring radius
STYLE = """body{font-family:sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem;color:#222}
.answer{font-size:1.6rem;font-weight:bold;margin:.5rem 0 1rem}.muted{color:#666}
ol li{margin:.4rem 0}.ev{display:block;color:#444;font-size:.9rem;margin-left:1rem}
svg text{font-size:11px}.node circle{fill:#dbe8ff;stroke:#3367d6}.center circle{fill:#ffd966}
.on-path circle{fill:#b6e3b6;stroke:#2e7d32}.edge{stroke:#999}.path-edge{stroke:#2e7d32;stroke-width:3}
.error{color:#b00020}"""


def page(title: str, body: str, status_note: str = "") -> str:
    """A whole HTML page."""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f"<style>{STYLE}</style></head><body>{status_note}{body}</body></html>"
    )


def graph_link(entity: str, kb: str = "", answer: str = "") -> str:
    """The ``/graph`` address of an entity (and of the path to ``answer``)."""
    query = {k: v for k, v in (("entity", entity), ("kb", kb), ("answer", answer)) if v}
    return f"/graph?{urlencode(query)}"


def _node(x: float, y: float, nid: str, name: str, css: str, below: bool = False) -> str:
    label = escape(one_line(name, 28))
    at = f'x="{x:.0f}" y="{y + 24:.0f}" text-anchor="middle"' if below else f'x="{x + 11:.0f}" y="{y + 4:.0f}"'
    return (
        f'<g class="node {css}" data-id="{escape(nid)}"><circle cx="{x:.0f}" cy="{y:.0f}" r="9"/>'
        f"<text {at}>{label}</text></g>"
    )


def _edge(a: tuple[float, float], b: tuple[float, float], label: str, css: str = "edge") -> str:
    mx, my = (a[0] + b[0]) / 2, (a[1] + b[1]) / 2
    return (
        f'<line class="{css}" x1="{a[0]:.0f}" y1="{a[1]:.0f}" x2="{b[0]:.0f}" y2="{b[1]:.0f}"/>'
        f'<text class="rel" x="{mx:.0f}" y="{my - 3:.0f}" fill="#777">{escape(one_line(label, 24))}</text>'
    )


def neighbourhood_svg(view: EntityView, on_path: set[str] | None = None) -> str:
    """The entity in the middle, its neighbours on a ring, each edge labelled with its relation."""
    on_path = on_path or set()
    cx, cy, n = W / 2, H / 2, max(len(view.neighbours), 1)
    edges, nodes = [], []
    for i, nb in enumerate(view.neighbours):
        angle = 2 * math.pi * i / n
        x, y = cx + R * math.cos(angle), cy + R * math.sin(angle)
        css = "path-edge" if nb.id in on_path else "edge"
        edges.append(_edge((cx, cy), (x, y), relation_label(nb), css))
        nodes.append(_node(x, y, nb.id, nb.name, "on-path" if nb.id in on_path else ""))
    nodes.append(_node(cx, cy, view.id, view.name, "center"))
    return (
        f'<svg id="neighbourhood" xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        f'viewBox="0 0 {W} {H}" role="img" aria-label="{escape(view.name)} and its neighbours">'
        + "".join(edges + nodes)
        + "</svg>"
    )


def path_svg(path: list[Triple], names: dict[str, str], start: str) -> str:
    """A path left to right: each hop's entity and the relation joining it to the one before."""
    ids, here = [start], start
    for t in path:
        here = t.tail if t.head == here else t.head
        ids.append(here)
    step, left, y = 200, 90, 30
    width = max(step * len(ids), 200)
    parts = []
    for i, t in enumerate(path):
        rel = t.type.replace("_", " ") + ("" if t.head == ids[i] else " (inverse)")
        parts.append(_edge((left + i * step, y), (left + (i + 1) * step, y), rel, "path-edge"))
    parts += [_node(left + i * step, y, nid, names.get(nid, nid), "on-path", True) for i, nid in enumerate(ids)]
    return (
        f'<svg id="answer-path" xmlns="http://www.w3.org/2000/svg" width="{width}" height="80" '
        f'viewBox="0 0 {width} 80" role="img" aria-label="the path behind the answer">' + "".join(parts) + "</svg>"
    )


def answer_body(method: str, question: str, out: dict, kb: str = "", path: str = "") -> str:
    """The answer first, then numbered items with their own evidence, then the answer's path."""
    answer, items = answer_view(out)
    html = [
        f'<form action="/{escape(method)}/view"><input name="question" size="60" value="{escape(question)}">'
        + (f'<input type="hidden" name="kb" value="{escape(kb)}">' if kb else "")
        + f' <button>ask {escape(method)}</button> <a href="/{escape(method)}/playground/">playground</a></form>',
        f'<p class="muted">{escape(method)} · {escape(question)}</p>',
        f'<div id="answer" class="answer">{escape(answer) or "(no answer)"}</div>',
        '<h2 id="evidence">Evidence</h2><ol>',
    ]
    for it in items:
        link = graph_link(it.name, kb) if it.kind == "entity" else ""
        name = f'<a href="{escape(link)}">{escape(it.name)}</a>' if link else escape(it.name)
        evs = (
            "".join(
                f'<span class="ev">{escape(str(e.get("source", "")))}: {escape(one_line(e.get("text"), 240))}</span>'
                for e in it.evidence
            )
            or '<span class="ev muted">(no evidence of its own)</span>'
        )
        html.append(f"<li>{name} <span class='muted'>[{escape(it.source)} {it.score:.3f}]</span>{evs}</li>")
    html.append("</ol>")
    if path:
        html.append(f"<h2>The path behind the answer</h2>{path}")
    return "".join(html)


def graph_body(view: EntityView, kb: str, answer: str = "", path: str = "", on_path: set[str] | None = None) -> str:
    """An entity's neighbourhood drawing, the path to ``answer`` when asked, its passages."""
    more = (
        f" (showing {len(view.neighbours)} of {view.total_neighbours})"
        if len(view.neighbours) < view.total_neighbours
        else ""
    )
    html = [
        f'<form action="/graph"><input name="entity" value="{escape(view.name)}">'
        + (f'<input type="hidden" name="kb" value="{escape(kb)}">' if kb else "")
        + " <button>show</button></form>",
        f'<h1 id="entity">{escape(view.name)} <span class="muted">[{escape(view.type)}]</span></h1>',
        f"<p>{view.total_neighbours} neighbours{more}</p>",
    ]
    if answer:
        html.append(f"<h2>Path to {escape(answer)}</h2>{path or '<p class=muted>no path within the hop bound</p>'}")
    html.append(neighbourhood_svg(view, on_path))
    html.append("<h2>Passages</h2><ol>" + "".join(f"<li>{escape(one_line(p, 400))}</li>" for p in view.passages))
    html.append("</ol>")
    return "".join(html)


def error_body(message: Any) -> str:
    """A one-line error as a page body."""
    return f'<p class="error" id="error">{escape(str(message))}</p>'
