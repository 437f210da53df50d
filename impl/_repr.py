"""torch's tensor printing under its print options (``torch.set_printoptions``: precision 4,
threshold 1000, edgeitems 3, linewidth 80 and sci_mode chosen from the values by default):
int/fixed/scientific mode, a column width shared by all elements, lines broken at the line
width, summarisation past the threshold, and the ``dtype=``/``grad_fn=``/``requires_grad=``
suffixes."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes
from impl._xp import to_numpy


@dataclasses.dataclass
class PrinterOptions:
    """torch._tensor_str.PRINT_OPTS."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = PrinterOptions()
_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


@api.function("set_printoptions")
def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """torch.set_printoptions: a profile ('default', 'short', 'full'; another name changes
    nothing), then each option given; sci_mode is always set (None: chosen from the values)."""
    if profile in _PROFILES:
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth) = _PROFILES[
            profile
        ]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """torch._tensor_str.get_printoptions: the options as keyword arguments of set_printoptions."""
    return dataclasses.asdict(PRINT_OPTS)


class _Formatter:
    """Decides how every element of one tensor is written (mode and common width)."""

    max_width: int

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
        chosen = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        self.sci_mode = chosen if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode
        precision = PRINT_OPTS.precision
        if self.sci_mode:
            fmt = lambda v: f"{v:.{precision}e}"  # noqa: E731
        elif self.int_mode:
            fmt = lambda v: f"{v:.0f}" + " "  # noqa: E731
        else:
            fmt = lambda v: f"{v:.{precision}f}"  # noqa: E731
        for v in finite.tolist():
            self.max_width = max(self.max_width, len(fmt(v)))

    def format(self, value: Any) -> str:
        if self.floating:
            if self.sci_mode:
                text = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{PRINT_OPTS.precision}f}"
        else:
            text = str(value)
        return " " * (self.max_width - len(text)) + text


class _ComplexFormatter:
    """torch's pair of formatters of a complex tensor, one for the real parts and one for the
    imaginary parts: ``1.5000-2.0000j``, an element as wide as both and the ``j``."""

    def __init__(self, values: np.ndarray) -> None:
        self.real, self.imag = _Formatter(values.real, True), _Formatter(values.imag, True)
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, value: complex) -> str:
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return self.real.format(value.real) + ("" if imag[0] in "+-" else "+") + imag


def _summarized(a: np.ndarray) -> np.ndarray:
    """torch's get_summarized_data: the edge items of every dim (with edgeitems 0, a vector
    whole, as torch's ``self[-0:]`` takes it, and nothing of a matrix)."""
    edge = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate([a[:edge], a[-edge:]]) if a.shape[0] > 2 * edge else a
    if not edge:
        return a[tuple(slice(0, 0) for _ in a.shape)]
    n = a.shape[0]
    rows = [*range(edge), *range(n - edge, n)] if n > 2 * edge else range(n)
    return np.stack([_summarized(a[i]) for i in rows])


def _vector(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (fmt.max_width + 2)))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * edge:
        head, tail = a[:edge].tolist(), a[-edge:].tolist()
        data = [fmt.format(v) for v in head] + [" ..."] + [fmt.format(v) for v in tail]
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _body(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt)
    edge = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * edge:
        rows = (
            [_body(a[i], indent + 1, summarize, fmt) for i in range(edge)]
            + ["..."]
            + [_body(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0] - edge, a.shape[0])]
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
    summarize = a.size > PRINT_OPTS.threshold
    shown = _summarized(a) if summarize else a
    fmt = _ComplexFormatter(shown) if a.dtype.kind == "c" else _Formatter(shown, t.dtype.is_floating_point)
    return _body(a, indent, summarize, fmt)


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > PRINT_OPTS.linewidth:
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
    default = t.dtype in (dtypes.get_default_dtype(), dtypes.default_complex(), dtypes.int64, dtypes.bool_)
    if t.numel() == 0:
        if t.dim() != 1:
            suffixes.append("size=" + str(tuple(t.shape)))
        if t.dtype is not dtypes.get_default_dtype():
            suffixes.append(f"dtype={t.dtype}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(tuple(t.shape)))
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
