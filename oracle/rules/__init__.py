"""The rule catalogue: every behaviour the suite checks, as one plain sentence with its source.

Each family has a module here (``oracle/rules/<family>.py``) defining ``RULES``, a list of
``Rule``. A conformance test names the rule it checks with ``@pytest.mark.rule("ID")``; the report
renders the catalogue as its table of contents, so a rule without a test shows as unchecked.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import asdict, dataclass
from functools import cache


@dataclass(frozen=True)
class Rule:
    id: str  # e.g. "LEAF-001"
    family: str  # e.g. "leaf rules"
    sentence: str  # one sentence a user can read
    source: str  # a torch doc URL or a seed ("seed 002")

    def to_dict(self) -> dict:
        return asdict(self)


@cache
def catalogue() -> dict[str, Rule]:
    """All rules by ID, in family-module order then declaration order."""
    rules: dict[str, Rule] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        for rule in importlib.import_module(f"{__name__}.{info.name}").RULES:
            if rule.id in rules:
                raise ValueError(f"duplicate rule id {rule.id}")
            rules[rule.id] = rule
    return rules


def get(rule_id: str) -> Rule:
    try:
        return catalogue()[rule_id]
    except KeyError:
        raise KeyError(f"rule {rule_id!r} is not in the catalogue (oracle/rules/)") from None


def families() -> list[str]:
    seen: dict[str, None] = {}
    for rule in catalogue().values():
        seen.setdefault(rule.family)
    return list(seen)
