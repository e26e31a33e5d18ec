"""Did-you-mean: the known names closest to a misspelt one, for every error message of fabgen."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from fabgen.natural import natural_key

__all__ = ["CUTOFF", "close_matches", "closest"]

# difflib.get_close_matches' default: below 0.6 a guess is more often wrong than helpful.
CUTOFF = 0.6


def close_matches(word: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """Up to `n` choices at least CUTOFF similar to `word`, most similar first.

    Scores are difflib's (as `get_close_matches` computes them), but equally close choices come
    in natural order: difflib's own tie-break picks the alphabetically last, and "did you mean
    'spine-04'?" for `spine-5` reads like a wrong guess when 'spine-01' scores the same.
    """
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(word)
    scored: list[tuple[float, tuple[tuple[int, int | str], ...], str]] = []
    for choice in set(choices):
        matcher.set_seq1(choice)
        # The quick ratios are upper bounds of ratio(): skip the full comparison when they fail.
        if matcher.real_quick_ratio() < CUTOFF or matcher.quick_ratio() < CUTOFF:
            continue
        score = matcher.ratio()
        if score >= CUTOFF:
            scored.append((-score, natural_key(choice), choice))
    scored.sort()  # the name itself last: the same answer whatever order `choices` came in
    return [choice for _, _, choice in scored[:n]]


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The one choice most like `word` (see `close_matches`), or None when none is close."""
    found = close_matches(word, choices, n=1)
    return found[0] if found else None
