"""Pairwise (all-pairs) covering rows: every value of every factor meets every value of every other
factor in at least one row, in far fewer rows than the full product.

A conformance test parametrized by ``covering_rows(factors)`` is guaranteed to combine each pair
of options in the ci profile, whatever hypothesis draws for the rest (conformance/
test_combinations.py). The rows are built greedily and deterministically (AETG's greedy step, no
randomness): each row starts from the first pair not yet covered and fills the other factors with
the value that covers most uncovered pairs with the values already chosen (the first on a tie).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any


def uncovered_pairs(factors: dict[str, tuple], rows: list[dict[str, Any]]) -> set[tuple]:
    """The pairs ``((factor, index), (factor, index))`` no row of ``rows`` covers."""
    names = list(factors)
    pairs = {
        ((a, i), (b, j))
        for a, b in combinations(names, 2)
        for i in range(len(factors[a]))
        for j in range(len(factors[b]))
    }
    for row in rows:
        chosen = [(n, _index(factors[n], row[n])) for n in names]
        pairs -= set(combinations(chosen, 2))
    return pairs


def covering_rows(factors: dict[str, tuple]) -> list[dict[str, Any]]:
    """Rows (factor -> value) covering every pair of values of two factors of ``factors`` (each a
    non-empty tuple of values, told apart by position)."""
    if not all(factors.values()):
        raise ValueError("every factor needs at least one value")
    names = list(factors)
    if len(names) < 2:
        return [{n: v} for n in names for v in factors[n]]
    left = uncovered_pairs(factors, [])
    rows: list[dict[str, int]] = []
    while left:
        (a, i), (b, j) = min(left, key=lambda p: (_order(p[0], names), _order(p[1], names)))
        row = {a: i, b: j}
        for name in names:
            if name in row:
                continue
            gains = [
                sum(_pair(name, k, other, row[other], names) in left for other in row)
                for k in range(len(factors[name]))
            ]
            row[name] = gains.index(max(gains))
        rows.append({n: row[n] for n in names})
        left -= set(combinations([(n, row[n]) for n in names], 2))
    return [{n: factors[n][row[n]] for n in names} for row in rows]


def _order(value: tuple[str, int], names: list[str]) -> tuple[int, int]:
    """A chosen value's place: its factor's position, then its own."""
    return names.index(value[0]), value[1]


def _pair(a: str, i: int, b: str, j: int, names: list[str]) -> tuple:
    """The pair of two chosen values in factor order (as ``uncovered_pairs`` keys it)."""
    return ((a, i), (b, j)) if names.index(a) < names.index(b) else ((b, j), (a, i))


def _index(values: tuple, value: Any) -> int:
    """The position of ``value`` among ``values`` (by identity first: equal values stay apart)."""
    for k, v in enumerate(values):
        if v is value:
            return k
    return values.index(value)
