"""Text primitives every method shares: the sentence splitter, the whole-word name pattern, word tokens.

A sentence ends at ``.``, ``!`` or ``?`` followed by white space. What may come just before
that mark without ending the sentence is the splitter's ``after`` rule:

- ``abbreviations`` (the default): an initial ("Harry L. Fraser", "J.K. Simmons") or a title
  ("Dr.", "Jr.", "Mrs.");
- ``spaced abbreviations``: an initial, a title or "Mt." written after a space or at the start
  ("J.K. Simmons" is cut after "J.K.", "Harry L. Fraser" is not);
- ``initials``: an initial only ("Dr. No" is cut after "Dr.");
- ``short words``: a word of one character or one holding a period ("S.", "U.S.", "1.").

What must come after the white space is the ``before`` rule: ``any`` (the default), ``not lower``
(no lower-case letter: "Railroaded! was" goes on) or ``capital`` (a capital, a digit, a quote or
an opening bracket). The rules are those the methods' own texts were read with; a method keeps
its rule so its outputs stay as they were.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import Literal

from hybridrag.kb.text_index import WORD, words

__all__ = ["WORD", "After", "Before", "name_pattern", "sentences", "words"]

After = Literal["abbreviations", "spaced abbreviations", "initials", "short words"]
Before = Literal["any", "not lower", "capital"]

NAME_PATTERNS = 16384  # name patterns kept compiled (names outnumber the re module's own cache of 512)
_NOT_AFTER: dict[str, str] = {
    "abbreviations": r"(?<!\b[A-Z]\.)(?<!\b(?:Jr|Sr|Dr|Mr|Ms|St)\.)(?<!\bMrs\.)",
    "spaced abbreviations": r"(?<!(?<!\S)[A-Z]\.)(?<!(?<!\S)(?:Dr|Mr|Ms|St|Jr|Sr|Mt)\.)(?<!(?<!\S)Mrs\.)",
    "initials": r"(?<!\b[A-Z]\.)",
    "short words": r"(?<=[^\s.]{2}[.!?])",
}
_BEFORE: dict[str, str] = {"any": "", "not lower": r"(?=[^a-z])", "capital": r"(?=[A-Z0-9\"'(\[])"}


@cache
def _sentence_end(after: str, before: str) -> re.Pattern[str]:
    """The white space that ends a sentence under the ``after`` and ``before`` rules."""
    return re.compile(rf"(?<=[.!?]){_NOT_AFTER[after]}\s+{_BEFORE[before]}")


def sentences(
    text: str | None,
    *,
    after: After = "abbreviations",
    before: Before = "any",
    min_chars: int = 1,
    keep: re.Pattern[str] | None = None,
) -> list[str]:
    """The sentences of ``text``, stripped, in order (see the module docstring for the rules).

    Args:
        text: the text to split (None reads as empty).
        after: what may precede a sentence's final mark without ending it.
        before: what must follow the white space after the mark.
        min_chars: sentences shorter than this many characters (once stripped) are left out.
        keep: a pattern whose matches are never cut ("Mrs. Brown's Boys" stays whole).

    Returns:
        The sentences, each stripped and at least ``min_chars`` long.
    """
    text = text or ""
    kept = [m.span() for m in keep.finditer(text)] if keep is not None else []
    cuts = [m.span() for m in _sentence_end(after, before).finditer(text)]
    bounds = [0, *(x for a, b in cuts if not any(s < a < e for s, e in kept) for x in (a, b)), len(text)]
    pieces = (text[bounds[i] : bounds[i + 1]].strip() for i in range(0, len(bounds), 2))
    return [p for p in pieces if p and len(p) >= min_chars]


@lru_cache(maxsize=NAME_PATTERNS)
def name_pattern(name: str) -> re.Pattern[str]:
    """The case-insensitive pattern of ``name`` as a whole phrase: no word character on either side.

    The name is matched as written (the caller strips it when it should be); patterns are cached.
    """
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.IGNORECASE)
