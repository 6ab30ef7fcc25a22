"""Chat-shaped runs: every method also takes LangGraph's ``messages`` and answers with an AI message.

:func:`chat_shaped` gives a copy of a method's builder with two more nodes. A run whose last
message is the user's (no AI reply after it) is a *chat turn*: ``read_messages`` turns that
message into the ``question`` (a follow-up is read through the previous turn by the rules of
``agents/followup.py``, or rewritten by the run's chat model when it is not a small one), the
method runs as on a question, and ``reply`` appends an AI message with the answer and the
evidence that backs it. Any other run is the method's own: START goes straight to its first node
and its last node to END, so a ``{"question": ...}`` run passes exactly the nodes it always did.

Either way, a question that writes a KB name with a typo or in lower case (``tools/spelling.py``)
first passes ``read_question``, which respells those names as the KB does and records each change
in one trace entry (``{"node": "read_question", "decision": "spelling", "changes": [[as written, KB
name], ...]}``); a question whose names are spelled as the KB spells them, or a run with the
``spelling`` setting off, never passes it.

Both routers check the input first: no ``question`` and no ``messages``, an empty or non-string
question, or one longer than the server's limit is an :class:`InputError` naming the field.
"""

from __future__ import annotations

import inspect
from collections.abc import Hashable
from typing import Any, Final, Literal

from langchain_core.messages import AIMessage
from langgraph.constants import END, START

from hybridrag.agents.followup import follow_up, names_in_kb, rewrite_with_llm, rewrites_with_llm
from hybridrag.agents.llm.models import load_chat_model
from hybridrag.graphs.rewire import copy_builder
from hybridrag.graphs.runtime import active_policy, context_of, resolve_kb, run_memo, traced
from hybridrag.tools.spelling import kb_spelling

READ, SPELL, REPLY = "read_messages", "read_question", "reply"
TO_READ: Final = "chat turn: read the messages"
AS_QUESTION: Final = "question"
TO_SPELL: Final = "question: respell its names"
TO_REPLY: Final = "chat turn: reply"
TO_END: Final = "end"
CITED = 3
"""Evidence items an AI reply cites."""
MAX_LOOKBACK = 50
"""Messages read back from the last one to find the previous turn."""
EXAMPLE = 'e.g. {"question": "who directed Big"} or {"messages": [{"role": "user", "content": "who directed Big"}]}'


class InputError(ValueError):
    """A run's input that asks no question; the message starts with the field's name."""


def message_text(message: Any) -> str:
    """The text of a message's content (a string, or content blocks of type text)."""
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content or [])


def pending(state: dict) -> Any:
    """The user's last message when no AI reply follows it (this run is a chat turn), else None."""
    messages = state.get("messages") or []
    return messages[-1] if messages and getattr(messages[-1], "type", "") == "human" else None


def check_question(field: str, text: Any) -> str:
    """``text`` as a question, or :class:`InputError` naming ``field`` (empty, not a string, too long)."""
    if not isinstance(text, str):
        raise InputError(f"{field}: must be a string, not {type(text).__name__}; {EXAMPLE}")
    if not text.strip():
        raise InputError(f"{field}: empty; ask a question, {EXAMPLE}")
    policy = active_policy()
    limit = policy.question_limit() if policy is not None else None
    if limit is not None and len(text) > limit:
        raise InputError(f"{field}: at most {limit} characters, not {len(text)}")
    return text


def route_input(state: dict) -> Literal["chat turn: read the messages", "question"]:
    """A chat turn reads the messages first; a question goes to the method's first node."""
    last = pending(state)
    if last is not None:
        check_question("messages", message_text(last))
        return TO_READ
    if state.get("question") is None:
        raise InputError(f"input: no `question` and no `messages` (the user's last message); {EXAMPLE}")
    check_question("question", state["question"])
    return AS_QUESTION


def _spelled(state: dict, runtime: Any, context_cls: type) -> tuple[str, list[tuple[str, str]]]:
    """The run's question in the KB's spelling and the changes (none when the ``spelling`` setting is off).

    Worked out once per run and question: the router that sends a run to ``read_question`` and the
    node itself share it.
    """
    question = str(state.get("question") or "")
    ctx = context_of(runtime, context_cls)
    if not getattr(ctx, "spelling", False):
        return question, []
    memo = run_memo(runtime)
    key = ("spelling", question)
    if memo is None or key not in memo:
        found = kb_spelling(resolve_kb(ctx), question)
        if memo is None:
            return found
        memo[key] = found
    return memo[key]


def _route_to_method(context_cls: type) -> Any:
    def route_after_input(
        state: dict, runtime: Any = None
    ) -> Literal["chat turn: read the messages", "question: respell its names", "question"]:
        """A chat turn reads the messages first; a question whose names the KB spells otherwise is respelled."""
        if route_input(state) == TO_READ:
            return TO_READ
        return TO_SPELL if _spelled(state, runtime, context_cls)[1] else AS_QUESTION

    def route_after_reading(state: dict, runtime: Any = None) -> Literal["question: respell its names", "question"]:
        """The question read off the messages is respelled when the KB spells its names otherwise."""
        return TO_SPELL if _spelled(state, runtime, context_cls)[1] else AS_QUESTION

    return route_after_input, route_after_reading


def _read_question(context_cls: type):
    def read_question(state: dict, runtime: Any) -> dict:
        """The question with its names spelled as the KB spells them; a trace entry lists each change."""
        question, changes = _spelled(state, runtime, context_cls)
        step = traced(SPELL, "spelling", changes=[list(c) for c in changes])
        return {"question": question, "trace": [step]}

    return read_question


def previous_turn(messages: list) -> tuple[str, str]:
    """(the previous turn's question as it was read, its answer) before the last message; ('', '') for none."""
    window = messages[-MAX_LOOKBACK:-1]
    for i in range(len(window) - 1, -1, -1):
        if getattr(window[i], "type", "") != "ai":
            continue
        meta = getattr(window[i], "additional_kwargs", None) or {}
        answer = meta.get("answer") or message_text(window[i]).split("\n", 1)[0]
        asked = meta.get("question") or next(
            (message_text(m) for m in reversed(window[:i]) if getattr(m, "type", "") == "human"), ""
        )
        return _bounded(str(asked)), _bounded(str(answer))
    return "", ""


def _bounded(text: str) -> str:
    """An earlier turn's text cut to the operator's question bound (a client writes the whole history)."""
    policy = active_policy()
    limit = policy.question_limit() if policy is not None else None
    return text[:limit] if limit is not None else text


def _read_messages(context_cls: type):
    def read_messages(state: dict, runtime: Any) -> dict:
        """The user's last message as the question; a follow-up is read through the previous turn."""
        text = message_text(pending(state)).strip()
        asked, answer = previous_turn(state["messages"])
        question, decision, usage = text, "the message as written", dict[str, Any]()
        if asked or answer:
            ctx = context_of(runtime, context_cls)
            question = follow_up(text, asked, answer, names_in_kb(resolve_kb(ctx)))
            if question != text:
                decision = "follow-up read through the previous turn"
            llm = getattr(ctx, "llm", None)
            if rewrites_with_llm(llm):
                model = load_chat_model(llm, getattr(ctx, "llm_base_url", ""))
                method = getattr(ctx, "structured_method", "function_calling")
                rewritten, usage = rewrite_with_llm(model, text, asked, answer, method)
                if rewritten:
                    question, decision = rewritten, "follow-up rewritten by the chat model"
        step = traced(READ, decision, question=question)
        return {"question": question, "trace": [step], **({"usage": usage} if usage else {})}

    return read_messages


def _cited(evidence: list[dict], answer: str) -> list[dict]:
    """The evidence a reply cites: items that name the answer first, in the method's order."""
    folded = answer.casefold()
    names = [e for e in evidence if folded and folded in str(e.get("text", "")).casefold()]
    return (names + [e for e in evidence if e not in names])[:CITED]


def reply(state: dict) -> dict:
    """An AI message: the answer, then the numbered evidence that backs it, and how the question was read."""
    answer = str(state.get("answer") or "").strip()
    lines = [answer or "I found no answer in the knowledge base."]
    cited = _cited(list(state.get("evidence") or []), answer)
    if cited:
        lines += ["", "Evidence:"]
        for n, e in enumerate(cited, 1):
            text = " ".join(str(e.get("text", "")).split())
            lines.append(f"[{n}] {text[:300]}{'…' if len(text) > 300 else ''} ({e.get('source', '')})")
    question, asked = state.get("question", ""), message_text(pending(state)).strip()
    if question and question != asked:
        lines += ["", f"(Read as: {question})"]
    meta = {"question": question, "answer": answer}
    return {"messages": [AIMessage(content="\n".join(lines), additional_kwargs=meta)]}


def _ending(func: Any, ends: dict) -> Any:
    """Router ``func`` with its routes to END sent to the reply on a chat turn (it still gets the ``runtime``)."""
    to_end = {label for label, target in ends.items() if target == END}
    takes_runtime = "runtime" in inspect.signature(func).parameters

    def route(state: Any, runtime: Any = None) -> Any:
        result = func(state, runtime=runtime) if takes_runtime else func(state)
        if pending(state) is None:
            return result
        if isinstance(result, list):
            return [TO_REPLY if isinstance(r, Hashable) and r in to_end else r for r in result]
        return TO_REPLY if result in to_end else result

    route.__name__ = route.__qualname__ = func.__name__
    route.__annotations__ = {**route.__annotations__, "return": Literal[tuple([*ends, TO_REPLY])]}  # the drawn routes
    return route


def _to_reply(state: Any) -> Literal["chat turn: reply", "end"]:
    return TO_REPLY if pending(state) is not None else TO_END


def chat_shaped(builder: Any) -> Any:
    """A copy of a method's ``StateGraph`` builder that also takes ``messages`` (the builder given is left as it is)."""
    out = copy_builder(builder)
    firsts = [end for start, end in builder.edges if start == START]
    if len(firsts) != 1 or START in builder.branches:
        raise ValueError("chat_shaped: the method must start with one plain edge from START")
    out.edges = {(s, e) for s, e in builder.edges if s != START and e != END}
    for source, specs in builder.branches.items():
        for name, spec in specs.items():
            func = getattr(spec.path, "func", None)
            if END not in (spec.ends or {}).values():
                continue
            if not callable(func):
                raise ValueError(f"chat_shaped: the router {name!r} to END must be a function")
            del out.branches[source][name]
            out.add_conditional_edges(source, _ending(func, spec.ends), {**spec.ends, TO_REPLY: REPLY})
    after_input, after_reading = _route_to_method(builder.context_schema)
    out.add_node(READ, _read_messages(builder.context_schema))
    out.add_node(SPELL, _read_question(builder.context_schema))
    out.add_node(REPLY, reply)
    to_method = {TO_SPELL: SPELL, AS_QUESTION: firsts[0]}
    out.add_conditional_edges(START, after_input, {TO_READ: READ, **to_method})  # chat, misspelt or plain question
    out.add_conditional_edges(READ, after_reading, to_method)  # the question read off the messages, respelled or not
    out.add_edge(SPELL, firsts[0])  # the respelled question starts the method
    for source in sorted(s for s, e in builder.edges if e == END):  # the answer goes to the chat on a chat turn
        out.add_conditional_edges(source, _to_reply, {TO_REPLY: REPLY, TO_END: END})
    out.add_edge(REPLY, END)  # the reply ends a chat turn
    return out
