"""A graph run's memo (what its nodes would each work out alike) and the run's KB.

LangGraph makes one ``Runtime.control`` per ``invoke`` / ``stream``: the memo of a run is keyed by
it, so a resumed or forked thread (a new run) works everything out again. :func:`resolve_kb` opens
the KB a context names, once per run (every node of a run reads one KB build).
"""

from __future__ import annotations

import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybridrag.kb.base import KnowledgeBase, open_kb

if TYPE_CHECKING:
    from hybridrag.graphs.common import Context


class KBUnavailableError(ValueError):
    """A served run's KB cannot be opened; the message names the KB by the operator's name, never its path."""


_RUNS: dict[int, tuple[Any, dict]] = {}  # id(RunControl) -> (the control, its run's memo), oldest first
_RUNS_LOCK = threading.Lock()
MAX_RUN_MEMOS = 64


def run_memo(runtime: Any = None) -> dict | None:
    """A dict shared by the nodes of the graph run being executed, for what each node would
    otherwise work out alike (its checked context, its KB); None outside a run.

    A run is told by its ``Runtime.control`` (LangGraph makes one per ``invoke`` / ``stream``;
    resuming or forking a thread is a new run); the memos of the newest MAX_RUN_MEMOS runs are kept.
    """
    if runtime is None:
        try:
            from langgraph.runtime import get_runtime

            runtime = get_runtime()
        except RuntimeError:  # not inside a run
            return None
    control = getattr(runtime, "control", None)
    if control is None:  # a node called by hand, or a LangGraph without run controls
        return None
    with _RUNS_LOCK:
        entry = _RUNS.get(id(control))
        if entry is None or entry[0] is not control:
            entry = _RUNS[id(control)] = (control, {})
            if len(_RUNS) > MAX_RUN_MEMOS:
                del _RUNS[next(iter(_RUNS))]
        return entry[1]


def resolve_kb(ctx: Context) -> KnowledgeBase:
    """Open (once per process) the KB named by the context; within one graph run, every node
    gets the build the first one got (as :func:`kb.base.same_kb_build`), without a lookup each.

    In server mode a KB that cannot be opened is a :class:`KBUnavailableError` naming the KB
    (the Agent Server shows a ``ValueError``'s message; any other error becomes "An internal
    error occurred").
    """
    memo = run_memo()
    ref = memo.get(("kb", ctx.kb)) if memo is not None else None
    kb = ref() if ref is not None else None
    if kb is None:
        kb = _open_kb_of(ctx)
        if memo is not None:  # a weak reference: a memo never keeps a replaced build in memory
            memo[("kb", ctx.kb)] = weakref.ref(kb)
    return kb


def _open_kb_of(ctx: Context) -> KnowledgeBase:
    """The KB of ``ctx`` from the process-wide cache (``kb.base.open_kb``)."""
    from hybridrag.app.policy import server_mode

    if ctx.kb in ("", "sample"):
        from hybridrag.kb.sample import sample_kb_dir

        return open_kb(sample_kb_dir())
    if not server_mode():
        return open_kb(ctx.kb)
    from hybridrag.app.server_config import active_config
    from hybridrag.kb.model import KBError

    try:
        return open_kb(ctx.kb)
    except KBError:
        name = next((n for n, d in active_config().kbs.items() if d == ctx.kb), "requested")
        reason = "not built" if not (Path(ctx.kb) / "manifest.json").is_file() else "unreadable"
        raise KBUnavailableError(f"kb: the {name!r} KB cannot be opened on this server ({reason}); "
                                 f"the operator builds it with `hybridrag ingest`") from None
