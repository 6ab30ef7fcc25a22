"""``--set FIELD=VALUE`` on the command line: a Context field, its value read as the field's type.

``hybridrag ask --set mode=vector --set top_k=3`` sets the run's context fields;
``hybridrag serve --set structured_method=json_mode --set hybgrag.few_shot=/srv/shots.json``
sets the operator's settings (``ServerConfig.settings``: ``"*"`` for every method that has the
field, or one method). A value is read as the type of the field's default: ``true``/``false``
for a flag, a number for a number, text otherwise (one of the field's choices when it has
them); an unknown field or a malformed value is a one-line error naming it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, get_args, get_origin

TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _field(cls: type, name: str) -> dataclasses.Field | None:
    return next((f for f in dataclasses.fields(cls) if f.name == name), None)


def typed_value(flag: str, name: str, raw: str, default: Any) -> Any:
    """``raw`` read as the type of ``default`` (ValueError naming the flag and the field)."""
    if isinstance(default, bool):
        if raw.strip().lower() not in TRUE + FALSE:
            raise ValueError(f"{flag} {name}={raw}: expected true or false")
        return raw.strip().lower() in TRUE
    if isinstance(default, int | float):
        try:
            return type(default)(raw)
        except ValueError:
            kind = "an integer" if isinstance(default, int) else "a number"
            raise ValueError(f"{flag} {name}={raw}: expected {kind}") from None
    return raw


def checked_choice(flag: str, name: str, value: Any, annotation: Any) -> Any:
    """``value`` when the field's type is no ``Literal`` or lists it; else ValueError naming the choices."""
    if get_origin(annotation) is Literal and value not in get_args(annotation):
        raise ValueError(f"{flag} {name}={value}: expected one of {', '.join(map(str, get_args(annotation)))}")
    return value


def split_pair(flag: str, raw: str) -> tuple[str, str]:
    """``NAME=VALUE`` → (name, value); ValueError when malformed."""
    name, sep, value = raw.partition("=")
    if not sep or not name.strip():
        raise ValueError(f"{flag} {raw!r}: expected FIELD=VALUE")
    return name.strip(), value.strip()


def run_settings(method: str, pairs: list[str]) -> dict[str, Any]:
    """``ask --set`` pairs → context overrides of ``method`` (unknown fields name the known ones)."""
    from hybridrag.agents.context import field_types
    from hybridrag.graphs import context_class

    cls, out = context_class(method), {}
    for raw in pairs:
        name, value = split_pair("--set", raw)
        f = _field(cls, name)
        if f is None:
            known = ", ".join(sorted(x.name for x in dataclasses.fields(cls)))
            raise ValueError(f"--set {name}: {method} has no such setting; known: {known}")
        typed = typed_value("--set", name, value, f.default)
        out[name] = checked_choice("--set", name, typed, field_types(cls)[name])
    return out


def operator_settings(pairs: list[str]) -> dict[str, dict[str, Any]]:
    """``serve --set [METHOD.]FIELD=VALUE`` pairs → ``ServerConfig.settings`` ({"*" or method: fields})."""
    from hybridrag.agents.context import field_types
    from hybridrag.graphs import context_class, list_graphs

    out: dict[str, dict[str, Any]] = {}
    for raw in pairs:
        key, value = split_pair("--set", raw)
        scope, _, name = key.rpartition(".")
        scope = scope or "*"
        if scope != "*" and scope not in list_graphs():
            raise ValueError(f"--set {key}: unknown method {scope!r}; one of {', '.join(list_graphs())}")
        methods = list_graphs() if scope == "*" else [scope]
        found = [f for m in methods if (f := _field(context_class(m), name)) is not None]
        if not found:
            where = "any method" if scope == "*" else scope
            raise ValueError(f"--set {key}: {where} has no setting {name!r}")
        typed = typed_value("--set", key, value, found[0].default)
        for m in methods:
            if name in (types := field_types(context_class(m))):
                checked_choice("--set", key, typed, types[name])
        out.setdefault(scope, {})[name] = typed
    return out
