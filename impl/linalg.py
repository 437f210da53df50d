"""torch.linalg's subset impl has: the norms (impl/_ops/norms.py)."""

from __future__ import annotations

from impl._ops.norms import linalg_norm as norm
from impl._ops.norms import matrix_norm, vector_norm

__all__ = ["matrix_norm", "norm", "vector_norm"]
