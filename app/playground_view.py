"""LangServe's playground with the answer first.

The playground's output pane prints every stream chunk as JSON, so a run's answer sat thousands
of characters down the page. :class:`AnswerFirst` adds one same-origin script to the
playground's page (``/<method>/playground/``); the script (:data:`SCRIPT`, served at
``/<method>/playground-answer.js``) reads the run's last chunk (``{"node": "__end__", "output"}``)
off the pane and shows, above it, the answer and the numbered items with their own evidence
(the pairing of :mod:`app.display`: by id, else by name), and it keeps the raw JSON in a short
scrolling box. ``?question=...`` on the playground's address fills the question and starts the
run. Nothing is fetched from elsewhere; every wait of the script is bounded.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.responses import Response

SCRIPT = r"""(() => {
  const POLLS = 1200, EVERY_MS = 250, SETTLE_MS = 1500, END = '{\n  "node": "__end__"';
  const CHARS = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"};
  const esc = (s) => String(s ?? "").replace(/[&<>"]/g, (c) => CHARS[c]);
  const line = (s, n) => {
    const t = String(s ?? "").split(/\s+/).filter(Boolean).join(" ");
    return t.length > n ? t.slice(0, n - 1) + "…" : t;
  };
  const quote = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const names = (text, name) =>
    name.trim() !== "" && new RegExp("(^|\\W)" + quote(name.trim()) + "(\\W|$)", "i").test(text);
  function evidenceOf(item, evidence) {
    const own = evidence.filter((e) => e.id != null && String(e.id) === String(item.id));
    if (own.length) return own;
    return evidence.filter((e) => names(`${e.text ?? ""} ${(e.path || []).join(" ")}`, String(item.name ?? "")));
  }
  function itemHtml(r, evidence) {
    const evs = evidenceOf(r, evidence).slice(0, 2)
      .map((e) => `<div class="hr-ev">${esc(e.source)}: ${esc(line(e.text, 240))}</div>`).join("");
    const score = `<span class="hr-muted">[${esc(r.source)} ${Number(r.score).toFixed(3)}]</span>`;
    return `<li>${esc(r.name)} ${score}${evs || '<div class="hr-ev">(no evidence of its own)</div>'}</li>`;
  }
  function render(out) {
    const ranked = (out.ranked || []).map((r, i) => [r, i])
      .sort((a, b) => (b[0].score - a[0].score) || (a[1] - b[1])).slice(0, 10);
    const items = ranked.map(([r]) => itemHtml(r, out.evidence || [])).join("");
    const answer = esc(out.answer) || "(no answer)";
    return `<div id="hr-answer" style="font-size:1.5rem;font-weight:600">${answer}</div>` +
      `<div id="hr-evidence"><b>Evidence</b><ol style="list-style:decimal;margin-left:1.5rem">${items}</ol></div>`;
  }
  function outputPane() {
    const h = [...document.querySelectorAll("h2")].find((e) => e.textContent.trim() === "Output");
    return h ? h.nextElementSibling : null;
  }
  let shown = "";
  function update() {
    const pane = outputPane();
    if (!pane) return;
    const text = pane.innerText, at = text.lastIndexOf(END);
    let box = document.getElementById("hr-answer-first");
    if (at < 0) { if (box) box.remove(); shown = ""; return; }
    if (text === shown) return;
    let out;
    try { out = JSON.parse(text.slice(at)).output; } catch (e) { return; }  // the chunk is still arriving
    if (!box) {
      box = document.createElement("section");
      box.id = "hr-answer-first";
      box.style.cssText = "padding:1rem;border:2px solid #3b82f6;border-radius:1rem;margin-bottom:.75rem";
      pane.parentElement.insertBefore(box, pane);
    }
    box.innerHTML = render(out || {});
    pane.style.maxHeight = "12rem"; pane.style.overflow = "auto";  // the raw chunks stay, in a short box
    shown = text;
  }
  function start(question, polls) {
    const area = document.getElementById("#/properties/question-input");
    const run = document.querySelector("button.bg-blue-500");  // the playground's start button
    const again = () => { if (polls > 0) setTimeout(() => start(question, polls - 1), EVERY_MS); };
    if (!area || !run) return again();
    if (area.value !== question) {
      Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value").set.call(area, question);
      area.dispatchEvent(new Event("input", {bubbles: true}));
      return setTimeout(() => start(question, polls - 1), SETTLE_MS);  // the form takes the value in
    }
    if (run.disabled) return again();
    run.click();
  }
  const question = new URLSearchParams(location.search).get("question");
  if (question) {  // the playground reads its own address for its routes: drop the query before it runs
    history.replaceState(null, "", location.pathname);
    start(question.slice(0, 2000), POLLS);
  }
  let polls = 0;
  const timer = setInterval(() => { update(); if (++polls > POLLS * 20) clearInterval(timer); }, EVERY_MS);
})();
"""


class AnswerFirst:
    """ASGI middleware: the playground pages of ``methods`` load :data:`SCRIPT`; every other response passes as is."""

    def __init__(self, app: Any, methods: list[str]) -> None:
        """Wrap ``app``; ``methods`` are the served methods whose playgrounds get the script."""
        self.app = app
        self.pages = {f"/{m}/playground/": m for m in methods} | {f"/{m}/playground/index.html": m for m in methods}

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        """Pass the request on; add the script tag to a playground page's HTML."""
        method = self.pages.get(scope.get("path", "")) if scope.get("type") == "http" else None
        if method is None or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        start: dict = {}
        body = bytearray()

        async def keep(message: dict) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                body.extend(message.get("body", b""))
                if not message.get("more_body"):
                    await send_page()

        async def send_page() -> None:
            page = bytes(body)
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            if any(k.lower() == b"content-type" and b"text/html" in v for k, v in headers):
                tag = f'<script src="/{method}/playground-answer.js"></script></body>'.encode()
                page = page.replace(b"</body>", tag, 1)
            await send({**start, "headers": [*headers, (b"content-length", str(len(page)).encode())]})
            await send({"type": "http.response.body", "body": page})

        await self.app(scope, receive, keep)


def add_playground_view(app: FastAPI, methods: list[str]) -> None:
    """Serve :data:`SCRIPT` for each method's playground and add the :class:`AnswerFirst` middleware."""
    for method in methods:
        app.add_api_route(
            f"/{method}/playground-answer.js",
            lambda: Response(SCRIPT, media_type="application/javascript"),
            methods=["GET"],
            include_in_schema=False,
        )
    app.add_middleware(AnswerFirst, methods=methods)
