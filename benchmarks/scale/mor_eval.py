"""``hybridrag eval`` with MoR's traversal of an earlier commit: the before half of a same-answers check.

``python -m benchmarks.scale.mor_eval --baseline REV -- <hybridrag eval arguments>`` puts every
function of ``agents/mor/traversal.py`` at ``REV`` (:mod:`benchmarks.scale.mor_baseline`) in place
of today's before the method's graph is imported, then runs the CLI; the same arguments without
``--baseline`` run today's code. Compare the two runs' Hit@1 on the same questions.
"""

from __future__ import annotations

import argparse
import sys
from types import FunctionType


def main(argv: list[str] | None = None) -> int:
    """Parse ``--baseline``, patch the traversal when given, and run ``hybridrag`` with the rest."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale.mor_eval")
    parser.add_argument("--baseline", default="", help="git revision whose MoR traversal runs (empty: today's)")
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="-- then the arguments of `hybridrag`")
    args = parser.parse_args(argv)
    rest = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
    if args.baseline:
        from benchmarks.scale.mor_baseline import load
        from hybridrag.agents.mor import traversal

        old = load(args.baseline)
        for name, value in vars(old).items():
            if isinstance(value, FunctionType) and value.__module__ == old.__name__:
                setattr(traversal, name, value)
    from hybridrag.app.cli import main as cli

    return cli(rest) or 0


if __name__ == "__main__":
    sys.exit(main())
