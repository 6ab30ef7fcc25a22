"""``python -m benchmarks NAME [--quick] [options]``; ``python -m benchmarks --list`` shows every suite."""

from __future__ import annotations

import argparse
import importlib
import sys

from benchmarks.suites import SUITES, suite


def listing() -> str:
    """Every suite with its one-line description and the docs page it writes."""
    width = max(len(s.name) for s in SUITES)
    return "\n".join(f"{s.name:<{width}}  {s.description}\n{'':<{width}}  -> {s.doc}" for s in SUITES)


def main(argv: list[str] | None = None) -> int:
    """Run one suite with its options (the quick form first with ``--quick``)."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("--list", "-l", "--help", "-h"):
        sys.stdout.write("usage: python -m benchmarks NAME [--quick] [options]\n\n" if argv[:1] != ["--list"] else "")
        sys.stdout.write(listing() + "\n")
        return 0 if argv else 2
    try:
        chosen = suite(argv[0])
    except KeyError as exc:
        sys.stderr.write(f"{exc.args[0]}\n")
        return 2
    module = importlib.import_module(chosen.module)
    parser = argparse.ArgumentParser(prog=f"python -m benchmarks {chosen.name}", description=chosen.description)
    parser.add_argument("--quick", action="store_true", help=f"the smallest run: {' '.join(chosen.quick) or 'as is'}")
    for flags, options in module.OPTIONS:
        parser.add_argument(*flags, **options)
    rest = argv[1:]
    if "--quick" in rest:
        rest = [*chosen.quick, *(a for a in rest if a != "--quick")]
    args = parser.parse_args(rest)
    args.suite, args.argv = chosen.name, rest
    return int(module.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
