"""What the tests share and are not tests themselves: fake engines (``engines``), the cupy stand-in
and its import shim, the torch/impl parity runner, the forked pytest runner, the headless browser,
and data files."""

from pathlib import Path

HELPERS = Path(__file__).resolve().parent
ROOT = HELPERS.parent.parent  # the repository root
