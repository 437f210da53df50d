"""Counts of generated programs checked, so the report can say how many ran per rule and family.

``oracle.differential.check`` calls ``count_program()`` once per program it compares; the pytest
plugin reads ``programs_checked()`` before and after each test to attribute the programs to it.
"""

from __future__ import annotations

_checked = 0


def count_program() -> None:
    global _checked
    _checked += 1


def programs_checked() -> int:
    return _checked
