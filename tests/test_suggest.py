"""The one did-you-mean helper: difflib's scores, ties in natural order, any input order."""

from __future__ import annotations

import difflib
import itertools

from fabgen.suggest import close_matches, closest


def test_closest_takes_the_natural_first_of_equally_close_names() -> None:
    spines = [f"spine-{i:02d}" for i in (1, 2, 3, 4, 6, 7, 8)]  # no spine-05
    # Every spine-0N scores the same against `spine-5`; difflib alone would say spine-08.
    assert difflib.get_close_matches("spine-5", spines, n=1) == ["spine-08"]
    assert closest("spine-5", spines) == "spine-01"
    assert closest("spine-5", [*spines, "spine-05"]) == "spine-05"  # closer wins over order
    assert closest("sn560", ["sn5400", "sn5600", "qm9700"]) == "sn5600"


def test_the_answer_does_not_depend_on_the_order_of_the_choices() -> None:
    names = ["leaf-su1-r2", "leaf-su1-r10", "leaf-su1-r1", "spine-01"]
    answers = {tuple(close_matches("leaf-su1-r", list(p))) for p in itertools.permutations(names)}
    assert answers == {("leaf-su1-r1", "leaf-su1-r2", "leaf-su1-r10")}


def test_nothing_close_is_no_suggestion() -> None:
    assert closest("topology", ["fabric", "qos"]) is None
    assert close_matches("x", []) == []
