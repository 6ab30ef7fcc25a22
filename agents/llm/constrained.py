"""Schema-constrained output: the reply can only be JSON of the schema, with names from the KB.

A small model asked for a relation path in words invents relation names, misspells the
entity, or breaks the JSON. Where the backend can constrain decoding, the role's JSON
schema is sent with ``enum`` lists filled from the KB at hand and the question:

- :func:`kb_choices`: the KB's relation names and entity types;
- :func:`question_spans`: every run of up to ``max_words`` consecutive words of the question,
  the only strings an entity name may be (a topic entity is named in the question);
- :func:`with_choices`: the role's pydantic schema as JSON schema, with those lists put on the
  fields a dotted path names (``"hops.relation"`` follows arrays and ``$ref`` definitions).

:func:`constrained_call` then asks the backend to decode within that schema:

- a llama.cpp model (``local:*``, ``ChatLlamaCpp``): ``response_format={"type": "json_object",
  "schema": ...}``, which llama.cpp compiles into a grammar; there every list on the way to a
  constrained field is required and holds at least one item (:func:`non_empty`): SmolLM2-135M
  otherwise skips or empties them (HybGRAG's router on 10 MetaQA 1-hop questions with the bank's
  examples: no entity, no relation, the text module, on all 10);
- an OpenAI or OpenAI-compatible chat model: ``json_schema`` structured output; a server that
  rejects it is asked with the llama.cpp ``response_format`` (what ``llama_cpp.server`` accepts),
  and one rejecting both gets plain function calling (unconstrained, still validated).

The reply is validated against the pydantic schema and against the lists, so a backend that
ignores the constraint cannot slip an unknown name through: such a reply counts as unparseable
and the caller takes its fallback, as for any other bad reply.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, cast

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)
Choices = Mapping[str, Sequence[str]]
_WORD = re.compile(r"[^\s,;:?!()\"]+")
MAX_CHOICES = 5000  # a grammar over more alternatives than this is slow to build: the field stays free


class ConstraintError(ValueError):
    """A reply outside the allowed names, or a choices path the schema does not have."""


def question_spans(question: str, max_words: int = 6) -> list[str]:
    """Every run of 1..``max_words`` consecutive words of ``question``, longest first, no repeats."""
    words = [w.strip(".'") or w for w in _WORD.findall(question)]
    spans = {" ".join(words[i : i + n]) for n in range(1, max_words + 1) for i in range(len(words) - n + 1)}
    return sorted(spans, key=lambda s: (-len(s.split()), s))


def kb_choices(kb: Any) -> dict[str, list[str]]:
    """``{"relation": [...], "type": [...]}`` from a KB's schema (sorted, for a stable grammar)."""
    schema = kb.graph.schema()
    return {"relation": sorted(schema.relation_types), "type": sorted(schema.entity_types)}


def _resolve(node: dict, defs: dict) -> dict:
    ref = node.get("$ref")
    return defs[ref.rsplit("/", 1)[-1]] if ref else node


def _field(schema: dict, path: str) -> dict:
    """The JSON-schema node a dotted path names, through arrays, ``anyOf`` and ``$ref``s."""
    defs = schema.setdefault("$defs", {})
    node = schema
    for part in path.split("."):
        node = _resolve(node, defs)
        props = node.get("properties") or {}
        if part not in props:
            raise ConstraintError(f"the schema has no field {part!r} on the path {path!r}")
        node = _unwrap(props[part], defs)
    return node


def _unwrap(node: dict, defs: dict, min_items: int | None = None) -> dict:
    """The value node under ``$ref``s, arrays and a nullable ``anyOf``.

    Each array passed through holds at least ``min_items`` (a larger ``minItems`` the schema already
    sets is kept).
    """
    while True:
        node = _resolve(node, defs)
        if node.get("type") == "array":
            if min_items is not None:
                node["minItems"] = max(min_items, node.get("minItems", 0))
            node = node["items"]
        elif "anyOf" in node:
            node = next(n for n in node["anyOf"] if n.get("type") != "null")
        else:
            return node


def with_choices(schema: type[BaseModel], choices: Choices) -> dict:
    """The JSON schema of ``schema`` with ``enum`` put on each field that ``choices`` names."""
    out = copy.deepcopy(schema.model_json_schema())
    for path, names in choices.items():
        names = list(dict.fromkeys(str(n) for n in names))
        if not names or len(names) > MAX_CHOICES:
            continue  # nothing to choose from, or too many for a grammar: left free (still a string)
        node = _field(out, path)
        node["enum"] = names
    if not out["$defs"]:
        out.pop("$defs")
    return out


def _is_list(node: dict, defs: dict) -> bool:
    node = _resolve(node, defs)
    return node.get("type") == "array" or any(_resolve(n, defs).get("type") == "array" for n in node.get("anyOf", []))


def non_empty(json_schema: dict, choices: Choices) -> dict:
    """A copy of ``json_schema`` whose lists on the way to each constrained field are required and non-empty.

    The lists lead to a field ``choices`` constrains with names to choose from; they get
    ``minItems: 1`` (the grammar form only). llama.cpp's grammar writes the required properties
    first, so an optional ``entities`` list after the required ``module`` would be left out and the
    router would choose its module without naming any entity. An optional scalar stays optional: a
    required relation in MoR's first node makes SmolLM2 write one there and stop after one node.
    """
    out = copy.deepcopy(json_schema)
    defs = out.get("$defs", {})
    for path, names in choices.items():
        if not names or len(set(names)) > MAX_CHOICES:
            continue
        node: Any = out
        for part in path.split("."):
            parent = _resolve(node, defs)
            node = (parent.get("properties") or {}).get(part)
            if node is None:
                break
            if _is_list(node, defs) and part not in parent.setdefault("required", []):
                parent["required"].append(part)  # a list only: an optional scalar stays optional
            node = _unwrap(node, defs, min_items=1)
    return out


def _values(data: Any, parts: list[str]) -> list[Any]:
    if isinstance(data, list):
        return [v for item in data for v in _values(item, parts)]
    if not parts:
        return [data]
    if isinstance(data, dict) and data.get(parts[0]) is not None:
        return _values(data[parts[0]], parts[1:])
    return []


def check_choices(data: dict, choices: Choices) -> None:
    """Raise :class:`ConstraintError` when a field named in ``choices`` holds a name outside its list."""
    for path, names in choices.items():
        allowed = set(map(str, names))
        if not allowed or len(allowed) > MAX_CHOICES:
            continue
        bad = [v for v in _values(data, path.split(".")) if str(v) not in allowed]
        if bad:
            raise ConstraintError(f"{path} = {bad[0]!r} is not one of the allowed names")


def is_llama_cpp(model: BaseChatModel) -> bool:
    """Whether ``model`` runs llama.cpp in process (it takes ``response_format`` with a schema)."""
    return any(c.__name__ == "ChatLlamaCpp" for c in type(model).__mro__)


def _llama_format(json_schema: dict) -> dict:
    return {"type": "json_object", "schema": json_schema}


def _parse(text: str, schema: type[T], choices: Choices) -> T:
    match = re.search(r"\{.*\}", text or "", re.DOTALL)
    if not match:
        raise ValueError("no JSON object in the reply")
    data = json.loads(match.group(0))
    check_choices(data, choices)
    return schema.model_validate(data)


def constrained_call(
    model: BaseChatModel, schema: type[T], messages: list, choices: Choices, method: str = "json_schema"
) -> dict:
    """One constrained call: ``{"raw", "parsed", "parsing_error", "mode"}`` (``mode``: how it was asked).

    ``method="json_schema"`` tries the strongest constraint the backend takes; server errors that
    say the request form is unsupported move to the next form, other errors propagate.
    """
    json_schema = with_choices(schema, choices)
    forms = ["llama_grammar"] if is_llama_cpp(model) else ["json_schema", "llama_grammar", "function_calling"]
    if method == "function_calling" and not is_llama_cpp(model):
        forms = ["function_calling"]  # the caller's choice; the reply is still checked against the lists
    last: Exception | None = None
    for form in forms:
        try:
            if form == "llama_grammar":
                raw = model.invoke(messages, response_format=_llama_format(non_empty(json_schema, choices)))
                text = raw.content if isinstance(raw.content, str) else json.dumps(raw.content)
                try:
                    return {"raw": raw, "parsed": _parse(text, schema, choices), "parsing_error": None, "mode": form}
                except (ValueError, ConstraintError) as exc:
                    return {"raw": raw, "parsed": None, "parsing_error": exc, "mode": form}
            bound = model.with_structured_output(
                json_schema if form == "json_schema" else schema, method=form, include_raw=True
            )
            out = cast(dict[str, Any], bound.invoke(messages))  # include_raw=True: a dict
        except Exception as exc:  # noqa: BLE001 - a rejected request form falls through to the next
            if not _rejected(exc):
                raise
            last = exc
            continue
        parsed, error = out.get("parsed"), out.get("parsing_error")
        if parsed is not None and error is None:
            try:
                data = parsed if isinstance(parsed, dict) else parsed.model_dump()
                check_choices(data, choices)
                parsed = schema.model_validate(data)
            except (ValueError, ConstraintError) as exc:
                parsed, error = None, exc
        return {"raw": out.get("raw"), "parsed": parsed, "parsing_error": error, "mode": form}
    raise last if last else RuntimeError("no request form to try")


def _rejected(exc: BaseException) -> bool:
    """Whether a server refused the request's form (4xx/5xx on the structured-output request)."""
    status = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
    names = {c.__name__ for c in type(exc).__mro__}
    return (
        bool(status and int(status) in (400, 404, 415, 422, 500, 501))
        or "BadRequestError" in names
        or isinstance(exc, NotImplementedError)
    )
