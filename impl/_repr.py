"""torch's tensor printing: precision 4, int/fixed/scientific mode chosen from the values,
a column width shared by all elements, 80-column lines, summarisation over 1000 elements,
and the ``dtype=``/``grad_fn=``/``requires_grad=`` suffixes."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from impl import dtypes
from impl._xp import to_numpy

PRECISION = 4
LINEWIDTH = 80
THRESHOLD = 1000
EDGEITEMS = 3


class _Formatter:
    """Decides how every element of one tensor is written (mode and common width)."""

    def __init__(self, values: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if finite.size == 0:
            return
        absv = np.abs(finite)
        lo, hi = float(absv.min()), float(absv.max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        wide = hi / lo > 1000.0 or hi > 1.0e8
        if self.int_mode:
            self.sci_mode = wide
            fmt = (lambda v: f"{v:.{PRECISION}e}") if wide else (lambda v: f"{v:.0f}" + " ")
        else:
            self.sci_mode = wide or lo < 1.0e-4
            fmt = (lambda v: f"{v:.{PRECISION}e}") if self.sci_mode else (lambda v: f"{v:.{PRECISION}f}")
        for v in finite.tolist():
            self.max_width = max(self.max_width, len(fmt(v)))

    def format(self, value: Any) -> str:
        if self.floating:
            if self.sci_mode:
                text = f"{value:{self.max_width}.{PRECISION}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{PRECISION}f}"
        else:
            text = str(value)
        return " " * (self.max_width - len(text)) + text


def _summarized(a: np.ndarray) -> np.ndarray:
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * EDGEITEMS:
        parts = [a[:EDGEITEMS], a[-EDGEITEMS:]]
    else:
        parts = [a]
    return np.concatenate([np.stack([_summarized(x) for x in p]) if p.ndim > 1 else p for p in parts])


def _vector(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    per_line = max(1, math.floor((LINEWIDTH - indent) / (fmt.max_width + 2)))
    if summarize and a.shape[0] > 2 * EDGEITEMS:
        data = (
            [fmt.format(v) for v in a[:EDGEITEMS].tolist()]
            + [" ..."]
            + [fmt.format(v) for v in a[-EDGEITEMS:].tolist()]
        )
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _body(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt)
    if summarize and a.shape[0] > 2 * EDGEITEMS:
        rows = (
            [_body(a[i], indent + 1, summarize, fmt) for i in range(EDGEITEMS)]
            + ["..."]
            + [_body(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0] - EDGEITEMS, a.shape[0])]
        )
    else:
        rows = [_body(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def tensor_body(t: Any, indent: int) -> str:
    a = to_numpy(t._data)
    if a.size == 0:
        return "[]"
    if a.dtype.itemsize == 2 and t.dtype.is_floating_point:  # float16 / bfloat16 print via float32
        a = a.astype(np.float32)
    summarize = a.size > THRESHOLD
    fmt = _Formatter(_summarized(a) if summarize else a, t.dtype.is_floating_point)
    return _body(a, indent, summarize, fmt)


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            parts.append(", " + s)
            last += len(s) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t: Any, tangent: Any = None) -> str:
    """torch's repr of ``t`` (a dual tensor of forward AD: with its ``tangent``)."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default = t.dtype in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_)
    if t.numel() == 0:
        if t.dim() != 1:
            suffixes.append("size=" + str(tuple(t.shape)))
        if t.dtype is not dtypes.get_default_dtype():
            suffixes.append(f"dtype={t.dtype}")
        body = "[]"
    else:
        if not default:
            suffixes.append(f"dtype={t.dtype}")
        body = tensor_body(t, indent)
    fn = t.grad_fn
    if fn is not None:
        suffixes.append(f"grad_fn=<{type(fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    if tangent is not None:  # (a 0-d tangent prints as its number, as torch's does)
        suffixes.append(f"tangent={tangent.item() if tangent.dim() == 0 else tangent}")
    return _add_suffixes(prefix + body, suffixes, indent)
