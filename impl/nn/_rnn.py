"""Recurrent layers as ops: the cells and layer scans of ATen's RNN.cpp (CPU), and the oneDNN LSTM
layer (``mkldnn_rnn_layer``) torch's CPU LSTM runs on float32 without projections.

The cells are composed of the ops RNN.cpp composes, so values, grad_fn names and graphs are
torch's: gates ``linear(h, w_hh, b_hh) + linear(x, w_ih, b_ih)`` (the input's part computed once
for the whole sequence and unbound per step), chunked by UnsafeSplitBackward0 in the order
i, f, g, o (LSTM) or r, z, n (GRU, with ``n = tanh(x_n + r * (h @ w_hn.T + b_hn))``), the step
outputs stacked (StackBackward0), two directions concatenated (CatBackward0). The oneDNN layer is
one node (MkldnnRnnLayerBackward0) over (input, w_ih, w_hh, b_ih, b_hh, hx, cx); its gradient is
``mkldnn_rnn_layer_differentiable_backward``'s, composed of ops, so create_graph builds on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from impl import _creation, dtypes
from impl import _grad_mode as grad_mode
from impl._graph import input_meta
from impl._ops import unary_math
from impl._ops.indexing import cat
from impl._ops.stacking import _MultiViewNode, stack
from impl._ops.table import D, OpDef, apply
from impl._tensor import Tensor
from impl._warn import warn_once
from impl.nn import functional as F

UnsafeSplitBackward0 = type("UnsafeSplitBackward0", (_MultiViewNode,), {})


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 1) -> tuple:
    """``chunks`` equal pieces of ``input`` along ``dim``, untracked as views (torch's
    unsafe_chunk: in-place ops on them are allowed), one UnsafeSplitBackward0 over them."""
    size = input.shape[dim] // chunks
    index = (slice(None),) * dim
    outs = [Tensor._from_array(input._data[(*index, slice(k * size, (k + 1) * size))].copy())
            for k in range(chunks)]
    if grad_mode.is_recording() and input.requires_grad:
        node = UnsafeSplitBackward0(dim, False)
        node._next = (input._edge(),)
        node._input_meta = [input_meta(t) for t in outs]
        for i, t in enumerate(outs):
            t._grad_fn_, t._output_nr = node, i
    return tuple(outs)


# -- cells (RNN.cpp's SimpleCell, LSTMCell, GRUCell; ``pre`` is the input's part precomputed) --
Params = tuple  # (w_ih, w_hh, b_ih, b_hh, w_hr): biases and w_hr may be None


def _linear_ih(x: Tensor, p: Params) -> Tensor:
    return F.linear(x, p[0], p[2])


def _linear_hh(h: Tensor, p: Params) -> Tensor:
    return F.linear(h, p[1], p[3])


def simple_cell(nonlinearity: Callable[[Tensor], Tensor]) -> Callable:
    def cell(x: Tensor, h: Tensor, p: Params, pre: bool = False) -> Tensor:
        return nonlinearity(_linear_hh(h, p) + (x if pre else _linear_ih(x, p)))

    return cell


tanh_cell = simple_cell(unary_math.tanh)
relu_cell = simple_cell(unary_math.relu)


def lstm_cell(x: Tensor, hidden: tuple, p: Params, pre: bool = False) -> tuple:
    hx, cx = hidden
    gates = _linear_hh(hx, p) + (x if pre else _linear_ih(x, p))
    i, f, g, o = unsafe_chunk(gates, 4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = (f * cx) + (i * g)
    hy = o * cy.tanh()
    if p[4] is not None:
        hy = hy.matmul(p[4].t())
    return hy, cy


def gru_cell(x: Tensor, h: Tensor, p: Params, pre: bool = False) -> Tensor:
    xr, xz, xn = unsafe_chunk(x if pre else _linear_ih(x, p), 3, 1)
    hr, hz, hn = unsafe_chunk(_linear_hh(h, p), 3, 1)
    r = (hr + xr).sigmoid()
    z = (hz + xz).sigmoid()
    n = (xn + hn * r).tanh()
    return ((h - n) * z) + n


# -- layers (FullLayer, FullBidirectionalLayer) and the stack of them --------------------------
def _as_output(hidden: Any) -> Tensor:
    return hidden[0] if isinstance(hidden, tuple) else hidden


def _scan(cell: Callable, steps: Any, hidden: Any, p: Params) -> tuple[list, Any]:
    outputs = []
    for x in steps:
        hidden = cell(x, hidden, p, True)
        outputs.append(_as_output(hidden))
    return outputs, hidden


def _full_layer(cell: Callable, input: Tensor, hidden: Any, p: Params) -> tuple[Tensor, Any]:
    outputs, hidden = _scan(cell, _linear_ih(input, p).unbind(0), hidden, p)
    return stack(outputs, 0), hidden


def _bidirectional_layer(cell: Callable, input: Tensor, hidden: tuple, p: tuple) -> tuple[Tensor, tuple]:
    fw, fw_hidden = _full_layer(cell, input, hidden[0], p[0])
    outputs, rev_hidden = _scan(cell, _linear_ih(input, p[1]).unbind(0)[::-1], hidden[1], p[1])
    rev = stack(outputs[::-1], 0)
    return cat([fw, rev], fw.dim() - 1), (fw_hidden, rev_hidden)


# -- packed layers (PackedLayer, ReversedPackedLayer): the batch shrinks as sequences end ------
def _hidden_slice(hidden: Any, start: int, end: int) -> Any:
    if isinstance(hidden, tuple):
        return tuple(h.narrow(0, start, end - start) for h in hidden)
    return hidden.narrow(0, start, end - start)


def _hidden_concat(hiddens: list) -> Any:
    if isinstance(hiddens[0], tuple):
        return tuple(cat(list(parts), 0) for parts in zip(*hiddens, strict=True))
    return cat(hiddens, 0)


def _packed_layer(cell: Callable, data: Tensor, batch_sizes: list, hidden: Any, p: Params) -> tuple:
    """Forward in time; a sequence's final hidden state is set aside when it ends (the batch
    shrinks), and the set-aside states concatenated back in batch order."""
    steps = _linear_ih(data, p)
    outputs, finished, offset, last = [], [], 0, batch_sizes[0]
    for batch in batch_sizes:
        step = steps.narrow(0, offset, batch)
        offset += batch
        if batch < last:
            finished.append(_hidden_slice(hidden, batch, last))
            hidden = _hidden_slice(hidden, 0, batch)
        last = batch
        hidden = cell(step, hidden, p, True)
        outputs.append(_as_output(hidden))
    finished.append(hidden)
    return cat(outputs, 0), _hidden_concat(finished[::-1])


def _reversed_packed_layer(cell: Callable, data: Tensor, batch_sizes: list, hidden0: Any, p: Params) -> tuple:
    """Backward in time: starts with the longest sequences' initial states, each sequence's
    initial state joining as the batch grows."""
    steps = _linear_ih(data, p)
    outputs, offset, last = [], data.shape[0], batch_sizes[-1]
    hidden = _hidden_slice(hidden0, 0, last)
    for batch in reversed(batch_sizes):
        if batch > last:
            hidden = _hidden_concat([hidden, _hidden_slice(hidden0, last, batch)])
        step = steps.narrow(0, offset - batch, batch)
        offset -= batch
        last = batch
        hidden = cell(step, hidden, p, True)
        outputs.append(_as_output(hidden))
    return cat(outputs[::-1], 0), hidden


def _dropout(x: Tensor, p: float, train: bool, last: bool) -> Tensor:
    """at::dropout between layers (ATen's _dropout_impl on CPU): ``x * noise``, the noise a
    bernoulli_(1 - p) draw divided by 1 - p (zeros when p is 1), on torch's random stream."""
    if p == 0 or not train or last or x.numel() == 0:
        return x
    with grad_mode.no_grad():
        if p == 1:
            noise = _creation.zeros((), dtype=x.dtype)
        else:
            noise = _creation.empty_like(x).bernoulli_(1 - p).div_(1 - p)
    return x * noise


def layer_params(weights: list, has_biases: bool, has_projections: bool = False) -> list[Params]:
    """RNN.cpp's gather_params: the flat weight list as one (w_ih, w_hh, b_ih, b_hh, w_hr) per
    layer and direction."""
    per = 2 + 2 * has_biases + has_projections
    out = []
    for k in range(0, len(weights), per):
        w = weights[k:k + per]
        b = (w[2], w[3]) if has_biases else (None, None)
        out.append((w[0], w[1], *b, w[-1] if has_projections else None))
    return out


def _packed_bidirectional(cell: Callable, data: Tensor, batch_sizes: list, hidden: tuple, p: tuple) -> tuple:
    fw, fw_hidden = _packed_layer(cell, data, batch_sizes, hidden[0], p[0])
    rev, rev_hidden = _reversed_packed_layer(cell, data, batch_sizes, hidden[1], p[1])
    return cat([fw, rev], -1), (fw_hidden, rev_hidden)


def stack_layers(
    cell: Callable, input: Tensor, hiddens: list, params: list[Params], num_layers: int, dropout: float,
    train: bool, bidirectional: bool, batch_sizes: list | None = None,
) -> tuple[Tensor, list]:
    """apply_layer_stack: each layer (both directions) on the last one's output, dropout between;
    packed layers on a PackedSequence's data when ``batch_sizes`` is given."""
    if bidirectional and len(hiddens) % 2:
        raise RuntimeError("Odd number of params or hiddens given to a bidirectional RNN")
    if len(hiddens) != num_layers * (2 if bidirectional else 1):
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    finals: list = []
    for layer in range(num_layers):
        if bidirectional:
            pair = (hiddens[2 * layer], hiddens[2 * layer + 1])
            p = (params[2 * layer], params[2 * layer + 1])
            if batch_sizes is None:
                input, h = _bidirectional_layer(cell, input, pair, p)
            else:
                input, h = _packed_bidirectional(cell, input, batch_sizes, pair, p)
            finals += list(h)
        else:
            if batch_sizes is None:
                input, h = _full_layer(cell, input, hiddens[layer], params[layer])
            else:
                input, h = _packed_layer(cell, input, batch_sizes, hiddens[layer], params[layer])
            finals.append(h)
        input = _dropout(input, dropout, train, layer == num_layers - 1)
    return input, finals


def rnn(
    cell: Callable, input: Tensor, hx: Tensor, weights: list, has_biases: bool, num_layers: int,
    dropout: float, train: bool, bidirectional: bool, batch_first: bool, batch_sizes: list | None = None,
) -> tuple[Tensor, Tensor]:
    """at::rnn_tanh / rnn_relu / gru: the output (transposed back in place if batch_first) and the
    final hidden states stacked; with ``batch_sizes``, their packed overload on a PackedSequence's data."""
    x = input.transpose(0, 1) if batch_first and batch_sizes is None else input
    params = layer_params(weights, has_biases)
    hiddens = list(hx.unbind(0))
    output, finals = stack_layers(cell, x, hiddens, params, num_layers, dropout, train, bidirectional,
                                  batch_sizes)
    if batch_first and batch_sizes is None:
        output.transpose_(0, 1)
    return output, stack(finals, 0)


def lstm(
    input: Tensor, hx: tuple, weights: list, has_biases: bool, num_layers: int, dropout: float,
    train: bool, bidirectional: bool, batch_first: bool, batch_sizes: list | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """at::lstm on CPU: the oneDNN layers for float32 without projections, else the LSTMCell scan.
    Packed input (``batch_sizes`` given) takes the oneDNN layers only when every step has the
    whole batch (its data viewed as ``T x B x *``), else the packed LSTMCell scan."""
    if len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    has_projections = hx[0].shape[2] != hx[1].shape[2]
    mkldnn = input.dtype == dtypes.float32 and input.numel() != 0
    if batch_sizes is not None:
        batch_first = False
        if mkldnn and not has_projections and min(batch_sizes) == batch_sizes[0]:
            steps = input.view(len(batch_sizes), batch_sizes[0], input.shape[-1])
            out, h, c = _lstm_mkldnn(steps, hx, weights, has_biases, num_layers, dropout, train,
                                     bidirectional, False)
            return out.view(-1, out.shape[-1]), h, c
    elif mkldnn:
        if not has_projections:
            return _lstm_mkldnn(input, hx, weights, has_biases, num_layers, dropout, train, bidirectional,
                                batch_first)
        warn_once("lstm_projections_onednn",
                  "LSTM with projections is not supported with oneDNN. Using default implementation.")
    x = input.transpose(0, 1) if batch_first else input
    params = layer_params(weights, has_biases, has_projections)
    hiddens = list(zip(hx[0].unbind(0), hx[1].unbind(0), strict=True))
    output, finals = stack_layers(lstm_cell, x, hiddens, params, num_layers, dropout, train, bidirectional,
                                  batch_sizes)
    if batch_first:
        output = output.transpose(0, 1)
    return output, stack([h for h, _ in finals], 0), stack([c for _, c in finals], 0)


# -- the oneDNN LSTM layer -------------------------------------------------------------------
def _sigmoid(xp: Any, a: Any) -> Any:
    return 1 / (1 + xp.exp(-a))


def _mkldnn_layer_fwd(
    xp: Any, x: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, hx: Any, cx: Any, reverse: bool,
    has_biases: bool,
) -> tuple:
    """One LSTM layer over the whole sequence (backwards in time if ``reverse``): output, hy, cy."""
    h, c = hx, cx
    out = xp.empty((x.shape[0], x.shape[1], h.shape[-1]), dtype=x.dtype)
    bias = (b_ih + b_hh) if has_biases else 0
    for t in (range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])):
        gates = x[t] @ w_ih.T + h @ w_hh.T + bias
        i, f, g, o = xp.split(gates, 4, axis=1)
        c = _sigmoid(xp, f) * c + _sigmoid(xp, i) * xp.tanh(g)
        h = _sigmoid(xp, o) * xp.tanh(c)
        out[t] = h
    return out, h.astype(x.dtype, copy=False), c.astype(x.dtype, copy=False)


def _mkldnn_layer_grads(grads: tuple, c: Any) -> tuple:
    """mkldnn_rnn_layer_differentiable_backward: the gates recomputed step by step, then the
    gradients back through time (input, w_ih, w_hh, bias (both biases), hx, cx)."""
    g_out, g_hy, g_cy = grads
    x, w_ih, w_hh, hx, cx = c.input, c.weight0, c.weight1, c.hx_, c.cx_
    b_ih, b_hh = (c.weight2, c.weight3) if c.has_biases else (None, None)
    steps = x.shape[0]
    order = range(steps - 1, -1, -1) if c.reverse else range(steps)
    gates, states = {}, {}
    h, cc = hx, cx
    for t in order:
        chunks = unsafe_chunk(F.linear(x[t], w_ih, b_ih) + F.linear(h, w_hh, b_hh), 4, 1)
        i, f, g, o = chunks[0].sigmoid(), chunks[1].sigmoid(), chunks[2].tanh(), chunks[3].sigmoid()
        states[t] = (h, cc)
        cc = f * cc + i * g
        h = o * cc.tanh()
        gates[t] = (i, f, g, o, cc)
    g_out = g_out if g_out is not None else _creation.zeros_like(c.result0)
    g_h = g_hy if g_hy is not None else _creation.zeros_like(hx)
    g_c = g_cy if g_cy is not None else _creation.zeros_like(cx)
    dx: list = [None] * steps
    dw_ih = dw_hh = db = None
    for t in reversed(list(order)):
        i, f, g, o, cy = gates[t]
        h_prev, c_prev = states[t]
        new_g_h = g_out[t] + g_h
        tanh_cy = cy.tanh()
        d1 = g_c + new_g_h * o * (1 - tanh_cy * tanh_cy)
        da = cat([d1 * g * i * (1 - i), d1 * c_prev * f * (1 - f), d1 * i * (1 - g * g),
                  new_g_h * tanh_cy * o * (1 - o)], 1)
        dx[t] = da.matmul(w_ih).unsqueeze(0)
        step = (da.transpose(0, 1).matmul(x[t]), da.transpose(0, 1).matmul(h_prev), da.sum(0))
        dw_ih, dw_hh, db = step if dw_ih is None else (dw_ih + step[0], dw_hh + step[1], db + step[2])
        g_h, g_c = da.matmul(w_hh), d1 * f
    return cat(dx, 0), dw_ih, dw_hh, db, db, g_h, g_c


def _layer_grad(k: int) -> Callable:
    def formula(grads: tuple, c: Any) -> Any:
        node = c._node
        cached = node.__dict__.get("_rnn_grads")
        if cached is None or cached[0] is not grads:
            cached = (grads, _mkldnn_layer_grads(grads, c))
            node.__dict__["_rnn_grads"] = cached
        return cached[1][k]

    return formula


_LAYER_USES = "input weight0 weight1 weight2 weight3 hx_ cx_ result0 reverse has_biases"
MKLDNN_RNN_LAYER = OpDef(
    "MkldnnRnnLayerBackward0",
    _mkldnn_layer_fwd,
    ("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_"),
    {name: D(_LAYER_USES, _layer_grad(k))
     for k, name in enumerate(("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_"))},
    outputs=("result0", "result1", "result2"),
    differentiable_outputs=3,
)


def _lstm_mkldnn(
    input: Tensor, hx: tuple, weights: list, has_biases: bool, num_layers: int, dropout: float,
    train: bool, bidirectional: bool, batch_first: bool,
) -> tuple[Tensor, Tensor, Tensor]:
    """mkldnn_rnn: a MkldnnRnnLayerBackward0 per layer and direction (zeros in place of absent
    biases), the directions concatenated, dropout between layers, hy and cy stacked."""
    x = (input.transpose(0, 1) if batch_first else input).contiguous()
    h0, c0 = hx[0].contiguous(), hx[1].contiguous()
    directions = 2 if bidirectional else 1
    params = layer_params(weights, has_biases)
    hy, cy = [], []
    for layer in range(num_layers):
        outputs = []
        for d in range(directions):
            k = layer * directions + d
            w_ih, w_hh, b_ih, b_hh, _ = params[k]
            if not has_biases:
                b_ih, b_hh = _creation.zeros_like(w_ih), _creation.zeros_like(w_hh)
            out, h, c = apply(MKLDNN_RNN_LAYER, x, w_ih, w_hh, b_ih, b_hh, h0[k], c0[k], reverse=d > 0,
                              has_biases=has_biases)
            outputs.append(out)
            hy.append(h)
            cy.append(c)
        x = outputs[0] if directions == 1 else cat(outputs, -1)
        x = _dropout(x, dropout, train, layer == num_layers - 1)
    return (x.transpose(0, 1) if batch_first else x), stack(hy, 0), stack(cy, 0)
