"""Human in the loop: a pause before a method retrieves, to approve or edit what it decided.

Each LLM method has one decision that steers its retrieval (:data:`POINTS`): HybGRAG's router
action, MoR's plan, HydraRAG's source selection, SSRAG's route. :func:`with_approval` puts an
``approve_<key>`` node right after the node that makes it; the node does nothing unless the run's
context says ``approve=True``, and then calls LangGraph's ``interrupt()`` with the proposal. The
run resumes with ``Command(resume=True)`` (approved as proposed) or ``Command(resume={key: value})``
(the edited value; an edited dict is merged into the proposed one), and the method's edges read
the approved value. A pause needs a checkpointed thread: ``graphs.get_builder(name)`` (which
includes these nodes) compiled with a checkpointer, or the Agent Server / LangGraph Studio.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, get_args

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from hybridrag.agents.hybgrag.roles import RouterAction
from hybridrag.agents.hydrarag.replies import SourceName
from hybridrag.agents.ssrag.routing import Label
from hybridrag.graphs import APPROVABLE, ApprovalError, check_approvable  # noqa: F401 - part of this module's API
from hybridrag.graphs.rewire import insert_after
from hybridrag.graphs.runtime import context_of, traced


@dataclass(frozen=True)
class ApprovalPoint:
    """Where a method pauses: after ``after``, showing the state keys ``keys``."""

    after: str
    keys: tuple[str, ...]
    what: str
    choices: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    """Allowed values of the fields an edit may set, by dotted path (``x.y[]``: each item of list ``x.y``)."""

    @property
    def node(self) -> str:
        """Name of the approval node in the graph."""
        return f"approve_{self.keys[0]}"


POINTS: dict[str, ApprovalPoint] = {
    "hybgrag": ApprovalPoint(
        "route_question",
        ("action",),
        "the router's action: module, entities, relations",
        {"action.module": get_args(RouterAction.model_fields["module"].annotation)},
    ),
    "mor": ApprovalPoint("plan_question", ("plan",), "the planning graph the traversal follows"),
    "hydrarag": ApprovalPoint(
        "select_sources",
        ("probe",),
        "the sources to explore and their plan",
        {"probe.sources[]": get_args(SourceName)},
    ),
    "ssrag": ApprovalPoint(
        "route_query",
        ("route", "source"),
        "the route: TEMPORAL or FACTUAL, web or local",
        {"route": get_args(Label), "source": ("web", "local")},
    ),
}
"""The decision each method may pause on before it retrieves (fusion makes none: no LLM)."""

MAX_EDIT_CHARS = 20_000
"""Largest edited value (as JSON) an approval takes when the run has no operator config."""


def _edit_limit() -> int:
    from hybridrag.graphs.runtime import active_policy

    policy = active_policy()
    limit = policy.edit_limit() if policy is not None else None
    return MAX_EDIT_CHARS if limit is None else limit


def _kind_error(path: str, old: Any, value: Any) -> str | None:
    """Why ``value`` cannot stand where the proposal has ``old`` (None when it can), checked into dicts and lists."""
    numbers = [isinstance(x, int | float) and not isinstance(x, bool) for x in (old, value)]
    if old is None or all(numbers):  # an int where a float was proposed, or the other way
        return None
    if type(value) is not type(old):
        return f"{path}: expected a {type(old).__name__} like the proposal, got {type(value).__name__}"
    if isinstance(old, dict):
        unknown = sorted(set(value) - set(old))
        if unknown:
            return f"{path}.{unknown[0]}: not a field of the proposed {path} ({', '.join(old)})"
        return next(filter(None, (_kind_error(f"{path}.{k}", old[k], v) for k, v in value.items())), None)
    if isinstance(old, list) and old:
        return next(filter(None, (_kind_error(f"{path}[]", old[0], v) for v in value)), None)
    return None


def _at(value: Any, parts: list[str]) -> list[Any]:
    """The values at a dotted path below ``value`` (``name[]``: each item of the list ``name``)."""
    if not parts:
        return [value]
    name, many = parts[0].removesuffix("[]"), parts[0].endswith("[]")
    if not isinstance(value, dict) or name not in value:
        return []
    items = value[name] if many and isinstance(value[name], list) else [value[name]]
    return [x for item in items for x in _at(item, parts[1:])]


def _choice_error(choices: dict[str, tuple[Any, ...]], key: str, value: Any) -> str | None:
    """The first edited field outside its allowed values, as a message naming them (None when all fit)."""
    for path, allowed in choices.items():
        bad = [v for v in _at({key: value}, path.split(".")) if v not in allowed]
        if bad:
            return f"{path.removesuffix('[]')}: {bad[0]!r} is not allowed; one of {', '.join(map(str, allowed))}"
    return None


def apply_answer(
    proposal: dict[str, Any],
    answer: Any,
    limit: int = MAX_EDIT_CHARS,
    choices: dict[str, tuple[Any, ...]] | None = None,
) -> dict[str, Any]:
    """The state update a human's answer makes: {} when approved as proposed, else the edited keys.

    ``answer`` is True / "approve" / None (approve) or a dict ``{key: value}`` over the proposal's
    keys; a dict value is merged into the proposed dict, any other value replaces it. Every edited
    value must be of the proposed value's JSON kind, field by field, and fit ``choices`` (the
    point's allowed values, e.g. ``{"action.module": ("hybrid", "text")}``): ``{"module": "sql"}``
    is refused with the allowed values named, never run as something else.
    """
    if answer is None or answer is True or answer == "approve":
        return {}
    if not isinstance(answer, dict):
        raise ApprovalError(
            f"resume with true (approve) or an edit {{key: value}} over {', '.join(proposal)}; "
            f"got {type(answer).__name__}"
        )
    size = len(json.dumps(answer, default=str))
    if size > limit:
        raise ApprovalError(f"the edit is {size} characters as JSON; at most {limit}")
    update = {}
    for key, value in answer.items():
        if key not in proposal:
            raise ApprovalError(f"{key}: not an approvable key here; edit {', '.join(proposal)}")
        old = proposal[key]
        problem = _kind_error(key, old, value) or _choice_error(choices or {}, key, value)
        if problem:
            raise ApprovalError(problem)
        if isinstance(old, dict) and isinstance(value, dict):
            value = {**old, **value}
        if value != old:
            update[key] = value
    return update


def approval_node(method: str, point: ApprovalPoint) -> Any:
    """The node that pauses for ``point`` when the run's context says ``approve=True``."""
    from hybridrag.graphs import context_class

    cls = context_class(method)

    def approve(state: dict, runtime: Runtime) -> dict:
        if not context_of(runtime, cls).approve:
            return {}
        proposal = {key: state.get(key) for key in point.keys}
        answer = interrupt(
            {
                "method": method,
                "approve": point.what,
                "proposal": proposal,
                "resume": f"true to approve, or {{key: edited value}} over {', '.join(point.keys)}",
            }
        )
        update = apply_answer(proposal, answer, _edit_limit(), point.choices)
        step = traced(point.node, f"edited {', '.join(update)}" if update else "approved", **update)
        return {**update, "trace": [step]}

    approve.__name__ = approve.__qualname__ = point.node
    return approve


def with_approval(builder: Any, method: str) -> Any:
    """A copy of a method's builder with its approval node after the deciding node.

    The deciding node's edges and branches now leave the approval node; a method without an
    approval point gets ``builder`` as is.
    """
    point = POINTS.get(method)
    if point is None:
        return builder
    after, node = point.after, point.node
    missing = [k for k in point.keys if k not in builder.channels]
    if after not in builder.nodes or missing:
        raise ValueError(
            f"{method}: approval point after {after!r} showing {', '.join(point.keys)} "
            f"does not fit the graph (graphs/approval.py POINTS)"
        )
    return insert_after(builder, after, node, approval_node(method, point))
