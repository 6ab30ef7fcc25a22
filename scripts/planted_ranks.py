"""Where the planted documents of a documents-QA run land: one markdown row per run folder.

Usage: ``python scripts/planted_ranks.py RUN_DIR [RUN_DIR ...]`` where each folder holds the
``records.jsonl`` of a ``hybridrag eval`` run on AdvHotpotQA (or any documents KB with gold
``supporting`` and ``planted`` documents). Per question, the documents are those of the evidence,
best first; the columns are defined in :mod:`benchmarks.realdata.planted` (shared with
``python -m benchmarks realdata``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: the benchmarks package

from benchmarks.realdata.planted import planted_row  # noqa: E402 - after the path it is found on


def main(argv: list[str]) -> int:
    """Print the header and one row per run folder; returns the exit status."""
    if not argv:
        print(__doc__)
        return 2
    keys = list(planted_row([]))
    print("| run | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for folder in argv:
        lines = (Path(folder) / "records.jsonl").read_text(encoding="utf-8").splitlines()
        row = planted_row([json.loads(line) for line in lines if line.strip()])
        cells = [f"{row[k]:.0f}" if k == "questions" else f"{row[k]:.3f}" for k in keys]
        print(f"| {folder} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
