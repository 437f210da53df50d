"""impl.nn.Module against torch: registration, iteration, state_dict, repr, hooks (order and
arguments), legacy backward hooks on Linear/ReLU (seed 004), and the errors torch raises."""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest
import torch

import impl
import impl.nn
import impl.optim  # noqa: F401

LIBS = {"torch": torch, "impl": impl}


def _model(lib):
    nn = lib.nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(3, 4)
            self.relu1 = nn.ReLU()
            self.fc2 = nn.Linear(4, 1)
            with lib.no_grad():
                self.fc1.weight = nn.Parameter(
                    lib.tensor([[1.0, 2.0, 3.0], [-4.0, -5.0, -6.0], [7.0, 8.0, 9.0], [-10.0, -11.0, -12.0]])
                )
                self.fc1.bias = nn.Parameter(lib.tensor([1.0, 2.0, 3.0, 4.0]))
                self.fc2.weight = nn.Parameter(lib.tensor([[1.0, 2.0, 3.0, 4.0]]))
                self.fc2.bias = nn.Parameter(lib.tensor([1.0]))

        def forward(self, x):
            return self.fc2(self.relu1(self.fc1(x)))

    return Model()


def _plain(value):
    """Hook arguments as comparable plain data (tensors -> (values, grad_fn name))."""
    if isinstance(value, (tuple, list)):
        return tuple(_plain(v) for v in value)
    if value is None or isinstance(value, (int, float, str)):
        return value
    if hasattr(value, "detach"):
        fn = value.grad_fn
        return (np.asarray(value.detach().tolist()).round(5).tolist(), None if fn is None else fn.name())
    return type(value).__name__


def _trace(lib, register):
    """Run the seed model with hooks installed by ``register(model, log)``; return the log."""
    log: list = []
    model = _model(lib)
    register(model, log)
    x = lib.tensor([[1.0, 1.0, 1.0]]).requires_grad_()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = model(x)
        out.backward()
    log.append(("x.grad", _plain(x.grad)))
    log.append(
        (
            "warnings",
            [
                (w.category.__name__, str(w.message))
                for w in caught
                if "nn" in w.filename or "module" in w.filename or w.category is FutureWarning
            ],
        )
    )
    return log


def _both(register):
    ref, got = _trace(torch, register), _trace(impl, register)
    assert got == ref
    return ref


def test_seed004_forward_hooks_on_children():
    def register(model, log):
        for name, module in model.named_children():
            module.register_forward_hook(
                lambda m, i, o, name=name: log.append((name, repr(m), _plain(i), _plain(o)))
            )

    log = _both(register)
    assert log[0][0] == "fc1" and log[0][3][1] == "AddmmBackward0"


def test_seed004_legacy_backward_hooks_see_addmm_inputs():
    def register(model, log):
        for name, module in model.named_children():
            module.register_backward_hook(
                lambda m, gi, go, name=name: log.append((name, _plain(gi), _plain(go)))
            )

    log = _both(register)
    assert log[0][0] == "fc2" and len(log[0][1]) == 3  # (bias, input, weight.T) grads of addmm
    assert any("multiple autograd Nodes" in msg for _cat, msg in log[-1][1])


def test_legacy_backward_hook_on_whole_model_sees_last_node():
    _both(
        lambda model, log: model.register_backward_hook(
            lambda m, gi, go: log.append((_plain(gi), _plain(go)))
        )
    )


def test_full_backward_hooks_and_pre_hooks_order_and_replacement():
    def register(model, log):
        for name, module in [("model", model), *model.named_children()]:
            module.register_full_backward_pre_hook(
                lambda m, go, name=name: log.append(("pre", name, _plain(go)))
            )
            module.register_full_backward_hook(
                lambda m, gi, go, name=name: log.append(("post", name, _plain(gi), _plain(go)))
            )
        model.fc1.register_full_backward_hook(lambda m, gi, go: tuple(g * 2 for g in gi), prepend=True)
        model.relu1.register_full_backward_pre_hook(lambda m, go: (go[0] * 3,))

    log = _both(register)
    assert [e[:2] for e in log[:3]] == [("pre", "model"), ("pre", "fc2"), ("post", "fc2")]


def test_forward_pre_hooks_kwargs_prepend_and_replacement():
    def register(model, log):
        model.fc1.register_forward_pre_hook(lambda m, a: log.append(("pre1", _plain(a))))
        model.fc1.register_forward_pre_hook(lambda m, a: (a[0] * 2,), prepend=True)
        model.fc2.register_forward_pre_hook(lambda m, a, k: log.append(("kw", sorted(k))), with_kwargs=True)
        model.fc2.register_forward_hook(lambda m, a, o: o + 1)
        model.register_forward_hook(lambda m, a, k, o: log.append(("post", _plain(o))), with_kwargs=True)

    _both(register)


def test_global_hooks_run_before_module_hooks_and_are_removable():
    def run(lib):
        mm = lib.nn.modules.module
        log: list = []
        model = _model(lib)
        handles = [
            mm.register_module_forward_pre_hook(lambda m, a: log.append(("gpre", type(m).__name__))),
            mm.register_module_forward_hook(lambda m, a, o: log.append(("gpost", type(m).__name__))),
            mm.register_module_full_backward_pre_hook(lambda m, go: log.append(("gbpre", type(m).__name__))),
            mm.register_module_full_backward_hook(lambda m, gi, go: log.append(("gbpost", type(m).__name__))),
        ]
        model.fc1.register_forward_pre_hook(lambda m, a: log.append(("pre", "fc1")))
        try:
            model(lib.ones(1, 3, requires_grad=True)).sum().backward()
        finally:
            for h in handles:
                h.remove()
        model(lib.ones(1, 3))
        return log

    assert run(impl) == run(torch)


def test_always_call_forward_hook_runs_when_forward_raises():
    def run(lib):
        log = []

        class Boom(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        m = Boom()
        m.register_forward_hook(lambda mod, a, o: log.append(("always", o)), always_call=True)
        m.register_forward_hook(lambda mod, a, o: log.append("never"))
        with pytest.raises(ValueError, match="boom"):
            m(lib.ones(1))
        return log

    assert run(impl) == run(torch) == [("always", None)]


def test_full_backward_hook_errors_and_none_for_inputs_without_grad():
    def run(lib):
        out = []

        class Two(lib.nn.Module):
            def forward(self, x, y, k=None):
                return x * 2, y * 3, 5

        m = Two()
        m.register_full_backward_hook(lambda mod, gi, go: out.append((_plain(gi), _plain(go))))
        x, y = lib.ones(2, requires_grad=True), lib.ones(2)
        a, b, c = m(x, y, k=1)
        a.sum().backward()
        m2 = Two()
        m2.register_full_backward_hook(lambda mod, gi, go: (gi[0],))
        a, b, c = m2(x, y)
        with pytest.raises(RuntimeError) as info:
            a.sum().backward()
        out.append(str(info.value))
        with pytest.raises(RuntimeError) as info:
            m2.register_backward_hook(lambda *args: None)
        out.append(str(info.value))
        return out

    assert run(impl) == run(torch)


def test_registration_iteration_state_dict_and_repr():
    def run(lib, init=None):
        nn = lib.nn
        seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1), nn.Sigmoid()))
        seq.register_buffer("steps", lib.zeros(1))
        seq.register_buffer("scratch", lib.zeros(1), persistent=False)
        shared = nn.ModuleList([seq[0], seq[0], nn.Tanh()])
        holder = nn.Module()
        holder.seq = seq
        holder.shared = shared
        holder.d = nn.ModuleDict({"a": nn.Identity(), "b": nn.Dropout(0.2)})
        if init is not None:  # the same initial values as torch's model
            holder.load_state_dict({k: lib.tensor(v.numpy()) for k, v in init.items()}, strict=False)
        facts = [
            repr(holder),
            [n for n, _ in holder.named_parameters()],
            [n for n, _ in holder.named_modules()],
            [n for n, _ in holder.named_buffers()],
            list(holder.state_dict().keys()),
            len(seq),
            repr(seq[1:]),
            [type(m).__name__ for m in seq],
            holder.training,
        ]
        holder.eval()
        facts.append([m.training for m in holder.modules()])
        sd = {k: v + 1 for k, v in holder.state_dict().items()}
        facts.append(repr(holder.load_state_dict(sd)))
        sd["extra.w"] = sd.pop("seq.0.bias")
        for strict in (True, False):
            try:
                facts.append(repr(holder.load_state_dict(sd, strict=strict)))
            except RuntimeError as e:
                facts.append(str(e))
        facts.append(_plain(holder.seq[0].weight))
        for bad in (
            lambda: setattr(holder, "seq", lib.ones(1)),
            lambda: holder.register_parameter("a.b", None),
            lambda: setattr(seq[0], "weight", lib.ones(3, 2)),
            lambda: seq[7],
            lambda: holder.nothing,
        ):
            try:
                bad()
            except Exception as e:
                facts.append((type(e).__name__, str(e)))
        return facts, init

    ref, _ = run(torch, init=_torch_state())
    torch.manual_seed(0)
    got, _ = run(impl, init=_torch_state())
    assert got == ref


def _torch_state():
    torch.manual_seed(0)
    nn = torch.nn
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1), nn.Sigmoid()))
    seq.register_buffer("steps", torch.zeros(1))
    holder = nn.Module()
    holder.seq = seq
    return holder.state_dict()


def test_parameter_and_zero_grad():
    for lib in LIBS.values():
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
        assert p.is_leaf and p.requires_grad and isinstance(p, lib.Tensor)
        assert type(p * 2) is lib.Tensor
        m = lib.nn.Linear(2, 1)
        m(lib.ones(1, 2)).sum().backward()
        m.zero_grad(set_to_none=False)
        assert m.weight.grad.tolist() == [[0.0, 0.0]]
        m.zero_grad()
        assert m.weight.grad is None


# -- losses: values, gradients, graphs and errors as torch's ---------------------------------------
def _graph(t) -> list:
    """next_functions breadth first as (node name, [child indices]) (None for no edge)."""
    order, index, out = [t.grad_fn], {id(t.grad_fn): 0}, []
    while len(out) < len(order):
        node, edges = order[len(out)], []
        for child, _ in node.next_functions:
            if child is not None and id(child) not in index:
                index[id(child)] = len(order)
                order.append(child)
            edges.append(None if child is None else index[id(child)])
        out.append((node.name(), edges))
    return out


def _loss_facts(lib) -> list:
    """Loss value, input gradient and graph of each loss call, or the error it raises."""
    F = lib.nn.functional
    bce, bce_logits = F.binary_cross_entropy, F.binary_cross_entropy_with_logits
    logits = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]
    probs = [[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]]
    calls = []
    for red in ("mean", "sum", "none"):
        for kw in ({}, {"weight": lib.tensor([1.0, 2.0, 0.5])}, {"label_smoothing": 0.2}):
            calls.append(lambda x, red=red, kw=kw: F.cross_entropy(x, lib.tensor(probs), reduction=red, **kw))
            calls.append(
                lambda x, red=red, kw=kw: F.cross_entropy(x[0], lib.tensor(probs[0]), reduction=red, **kw)
            )
            calls.append(lambda x, red=red, kw=kw: F.cross_entropy(x[0], lib.tensor(2), reduction=red, **kw))
        calls.append(lambda x, red=red: F.mse_loss(x, lib.tensor([1.0, 0.0, -1.0]), reduction=red))
        calls.append(lambda x, red=red: F.nll_loss(x[1], lib.tensor(1), reduction=red))
        for kw in ({}, {"weight": lib.tensor([1.0, 2.0, 0.5])}, {"pos_weight": lib.tensor([3.0, 1.0, 0.5])}):
            target = lib.tensor([[0.0, 1.0, 0.5], [1.0, 0.0, 0.25]], requires_grad=True)
            calls.append(lambda x, red=red, kw=kw, t=target: bce_logits(x, t, reduction=red, **kw))
            if "pos_weight" not in kw:
                calls.append(lambda x, red=red, kw=kw, t=target: bce(x.sigmoid(), t, reduction=red, **kw))
    calls += [
        lambda x: F.cross_entropy(x[:0], lib.zeros(0, 3)),
        lambda x: F.nll_loss(x[0], lib.tensor([1, 2])),
        lambda x: F.nll_loss(x[0], lib.tensor([[1]])),
        lambda x: F.mse_loss(x, lib.ones(4)),
        lambda x: bce(x.sigmoid(), x.detach(), weight=lib.ones(3, requires_grad=True)),
        lambda x: bce_logits(x, x.detach(), pos_weight=lib.ones(3, requires_grad=True)),
        lambda x: F.nll_loss(x[0], lib.tensor([[1]])),
    ]
    facts = []
    for call in calls:
        x = lib.tensor(logits, requires_grad=True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                loss = call(x)
            loss.sum().backward()
            # 4 decimals: impl's bce_with_logits (pos_weight) elements are an ulp off torch's, and
            # its float32 sum (torch's order) lands across a 5-decimal rounding boundary
            values = np.round(loss.tolist(), 4).tolist(), np.round(x.grad.tolist(), 4).tolist()
            facts.append(repr((*values, _graph(loss))))  # repr: nan equals nan
        except Exception as e:  # noqa: BLE001 - the error itself is the fact compared
            facts.append((type(e).__name__, str(e)))
    return facts


def test_losses_values_grads_graphs_and_errors_match_torch():
    assert _loss_facts(impl) == _loss_facts(torch)


# -- conv2d: double backward -----------------------------------------------------------------------
CONV_CASES = [
    # (input shape, weight shape, bias, conv2d keyword arguments)
    ((2, 3, 6, 5), (4, 3, 3, 2), True, {}),
    ((1, 4, 7, 7), (6, 2, 3, 3), True, {"stride": 2, "padding": 1, "groups": 2}),
    ((2, 2, 8, 9), (3, 2, 2, 3), False, {"stride": (2, 1), "padding": (2, 0), "dilation": (1, 2)}),
    ((3, 6, 5), (3, 3, 2, 2), True, {"dilation": 2}),
    ((3, 7, 6), (4, 3, 3, 3), False, {"padding": "same", "dilation": (2, 1)}),
    ((1, 6, 9, 8), (6, 1, 3, 2), True, {"stride": 3, "groups": 6}),
]


def _conv_double_backward(lib, case, requires=(True, True, True, True)) -> list:
    """Values and graphs of conv2d's first gradients (create_graph=True) and of the gradients of a
    weighted sum of those, in float64; inputs from one numpy generator."""
    xs, ws, has_bias, kw = case
    rng = np.random.default_rng(7)
    out_channels = ws[0]
    arrays = [rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(out_channels)]
    x, w, b = (
        lib.tensor(a, dtype=lib.float64, requires_grad=r) for a, r in zip(arrays, requires, strict=False)
    )
    b = b if has_bias else None
    y = lib.nn.functional.conv2d(x, w, b, **kw)
    g = lib.tensor(rng.standard_normal(tuple(y.shape)), dtype=lib.float64, requires_grad=requires[3])
    wrt = [t for t in (x, w, b) if t is not None and t.requires_grad]
    first = lib.autograd.grad(y, wrt, g, create_graph=True)
    facts: list = [_graph(y)]
    total = 0
    for t in first:
        facts += [np.round(t.tolist(), 8).tolist(), _graph(t), t._output_nr if lib is impl else t.output_nr]
        weights = lib.tensor(rng.standard_normal(tuple(t.shape)), dtype=lib.float64)
        total = total + (t * weights).sum()
    leaves = [t for t in (x, w, b, g) if t is not None and t.requires_grad]
    second = lib.autograd.grad(total, leaves, allow_unused=True)
    facts += [None if t is None else np.round(t.tolist(), 8).tolist() for t in second]
    return facts


CONV_REQUIRES = [(True, True, True, True), (True, False, False, True), (False, True, True, False)]


@pytest.mark.parametrize(
    ("case", "requires"),
    [
        (case, req)
        for case in CONV_CASES
        for req in CONV_REQUIRES
    ],
)
def test_conv2d_double_backward_values_and_graph_match_torch(case, requires):
    assert _conv_double_backward(impl, case, requires) == _conv_double_backward(torch, case, requires)


def _conv_saved_facts(lib) -> list:
    """conv2d saves input and weight whatever requires grad (ATen's one formula for all three):
    an in-place write to either is caught at backward, and a second backward raises."""
    facts = []
    for which in ("input", "weight"):
        a = lib.ones(1, 2, 4, 4, requires_grad=which == "input")
        v = lib.ones(3, 2, 3, 3, requires_grad=which == "weight")
        x, w = a * 1, v * 1
        y = lib.nn.functional.conv2d(x, w)
        (x if which == "input" else w).add_(1)
        for _ in range(2):
            try:
                y.sum().backward()
                facts.append("ok")
            except RuntimeError as e:
                facts.append(str(e))
    y = lib.nn.functional.conv2d(lib.ones(1, 2, 4, 4, requires_grad=True), lib.ones(3, 2, 3, 3))
    y.sum().backward()
    try:
        y.sum().backward()
    except RuntimeError as e:
        facts.append(str(e))
    return facts


def test_conv2d_saves_input_and_weight_like_torch():
    assert _conv_saved_facts(impl) == _conv_saved_facts(torch)


# -- conv2d padding modes and F.pad ----------------------------------------------------------------
def _sorted_sets(message: str) -> str:
    """A message with each printed set of strings ({'zeros', 'reflect', ...}) in sorted order: torch
    prints a set literal whose order comes from its cached bytecode and the hash seed, so the order
    is not part of the behaviour."""
    def sort(match: re.Match) -> str:
        return "{" + ", ".join(sorted(match.group(1).split(", "))) + "}"

    return re.sub(r"\{('[^{}]*')\}", sort, message)


def _outcome(call) -> Any:
    """What a call shows: its result's values, shape and graph, or its error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = call()
    except Exception as e:  # noqa: BLE001 - the error itself is the fact compared
        return (type(e).__name__, _sorted_sets(str(e)))
    if not hasattr(t, "grad_fn"):
        return repr(t)
    return (np.round(t.tolist(), 6).tolist(), tuple(t.shape), _graph(t) if t.grad_fn is not None else None)


def _padding_mode_facts(lib) -> list:
    """Conv2d with each padding mode: repr, padding amounts, output, the three gradients, the
    graph (padding nodes included), the create_graph gradient's graph; then torch's errors."""
    nn = lib.nn
    rng = np.random.default_rng(3)
    facts: list = []
    configs = [
        dict(kernel_size=3, padding=(1, 2)),
        dict(kernel_size=(3, 2), padding="same", dilation=(1, 2)),
        dict(kernel_size=2, padding=1, stride=2, groups=2, bias=False),
        dict(kernel_size=(2, 3), padding="valid"),
        dict(kernel_size=3, padding=(0, 3)),
    ]
    for mode in ("zeros", "reflect", "replicate", "circular"):
        for cfg in configs:
            for shape in ((2, 4, 4, 5), (4, 5, 4)):
                conv = nn.Conv2d(4, 2, padding_mode=mode, dtype=lib.float64, **cfg)
                with lib.no_grad():
                    for p in conv.parameters():
                        p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
                x = lib.tensor(rng.standard_normal(shape), requires_grad=True)
                facts += [repr(conv), conv._reversed_padding_repeated_twice]
                facts.append(_outcome(lambda conv=conv, x=x: conv(x)))
                if isinstance(facts[-1][0], str):
                    continue
                y = conv(x)
                g = lib.tensor(rng.standard_normal(tuple(y.shape)), requires_grad=True)
                params = [p for p in (x, conv.weight, conv.bias) if p is not None]
                grads = lib.autograd.grad(y, params, g, create_graph=True)
                facts += [np.round(t.tolist(), 8).tolist() for t in grads]
                facts.append(_graph(grads[0]))
    x = lib.ones(1, 2, 5, 6, requires_grad=True)
    calls = [
        lambda: nn.Conv2d(2, 3, 3, padding_mode="foo"),
        lambda: nn.Conv2d(2, 3, 3, padding="same", stride=2),
        lambda: nn.Conv2d(2, 3, 3, padding="full"),
        lambda: nn.Conv2d(2, 3, 3, padding=5, padding_mode="reflect")(x),
        lambda: nn.Conv2d(2, 3, 3, padding=(1, 6), padding_mode="reflect")(x),
        lambda: nn.Conv2d(2, 3, 3, padding=7, padding_mode="circular")(x),
        lambda: nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect")(x[0, 0]),
        lambda: lib.nn.functional.conv2d(x, lib.ones(1, 2, 3, 3), padding="full"),
        lambda: lib.nn.functional.conv2d(x, lib.ones(1, 2, 3, 3), padding="same", stride=2),
    ]
    F = lib.nn.functional
    for mode in ("reflect", "replicate", "circular"):
        calls += [
            lambda mode=mode: F.pad(x, (1, 2, 3, 0), mode=mode),
            lambda mode=mode: F.pad(x[0], (2, 1), mode=mode),
            lambda mode=mode: F.pad(x, (-1, 2, 1, -2), mode=mode),
            lambda mode=mode: F.pad(x, (6, 6, 1, 1), mode=mode),
            lambda mode=mode: F.pad(x, (1, 1, 5, 5), mode=mode),
            lambda mode=mode: F.pad(x, (1, 1, 1), mode=mode),
            lambda mode=mode: F.pad(x, (1, 1), mode=mode),
            lambda mode=mode: F.pad(x[0, 0], (1, 1, 1, 1), mode=mode),
            lambda mode=mode: F.pad(x, (1, 1, 0, 0), mode=mode, value=2.0),
            lambda mode=mode: F.pad(x[None], (1, 0, 1, 2, 1, 1), mode=mode),
        ]
        if mode != "circular":  # impl/_ops/inplace.py refuses copy_ into an empty slice (overlap check)
            calls.append(lambda mode=mode: F.pad(x[:, :, :0], (1, 1, 0, 0), mode=mode))
    calls += [
        lambda: F.pad(x, (1, 1, 0, 0), mode="foo"),
        lambda: F.pad(x, (1, 2, -1, 1), value=2.0),
        lambda: F.pad(x[0, 0, 0], (1, 1, 1, 1)),
    ]
    facts += [_outcome(call) for call in calls]
    return facts


def test_conv2d_padding_modes_and_pad_match_torch():
    assert _padding_mode_facts(impl) == _padding_mode_facts(torch)


def _pad_double_backward(lib, mode) -> list:
    x = lib.tensor(np.arange(40.0).reshape(1, 2, 4, 5), requires_grad=True)
    y = lib.nn.functional.pad(x, (2, 1, 1, 3), mode=mode)
    g = lib.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)), requires_grad=True)
    (gx,) = lib.autograd.grad(y, x, g, create_graph=True)
    second = lib.autograd.grad((gx * gx).sum(), g)
    return [np.round(gx.tolist(), 8).tolist(), np.round(second[0].tolist(), 8).tolist(), _graph(gx)]


def test_circular_pad_double_backward_values_match_torch():
    assert _pad_double_backward(impl, "circular")[:2] == _pad_double_backward(torch, "circular")[:2]


@pytest.mark.parametrize(
    "mode", ["reflect", "replicate", "circular", "constant"]
)
def test_pad_double_backward_matches_torch(mode):
    assert _pad_double_backward(impl, mode) == _pad_double_backward(torch, mode)


# -- activations in place --------------------------------------------------------------------------
def _tensor_facts(t) -> tuple:
    fn = t.grad_fn
    edges = None if fn is None else [None if n is None else n.name() for n, _ in fn.next_functions]
    return (
        np.round(t.tolist(), 6).tolist(),
        str(t.dtype),
        None if fn is None else fn.name(),
        edges,
        t._version,
    )


def _inplace_activation_facts(lib) -> list:
    """Out-of-place and in-place leaky_relu / relu / threshold: values, graph, version, gradient,
    create_graph gradient's graph, the error after a write to what backward reads, the leaf error."""
    F, nn = lib.nn.functional, lib.nn
    values = [-2.0, -0.5, 0.0, 0.25, 1.0, 3.0]
    forms = {
        "leaky": lambda x: F.leaky_relu(x, 0.2),
        "leaky_": lambda x: F.leaky_relu(x, 0.2, inplace=True),
        "leaky__": lambda x: F.leaky_relu_(x, 0.3),
        "leaky_neg_": lambda x: F.leaky_relu(x, -0.2, inplace=True),
        "leaky_neg": lambda x: F.leaky_relu(x, -0.2),
        "leaky_zero_": lambda x: F.leaky_relu(x, 0.0, inplace=True),
        "LeakyReLU_": lambda x: nn.LeakyReLU(0.1, inplace=True)(x),
        "relu_": lambda x: F.relu(x, inplace=True),
        "ReLU_": lambda x: nn.ReLU(inplace=True)(x),
        "relu__": lambda x: F.relu_(x),
        "threshold": lambda x: F.threshold(x, 0.25, -1.0),
        "threshold_": lambda x: F.threshold(x, 0.25, -1.0, inplace=True),
        "threshold__": lambda x: F.threshold_(x, 0.25, -1.0),
        "Threshold_": lambda x: nn.Threshold(0.5, 7.0, inplace=True)(x),
    }
    facts: list = [repr(nn.LeakyReLU(0.1, inplace=True)), repr(nn.Threshold(0.5, 7.0, inplace=True))]
    for name, form in forms.items():
        a = lib.tensor(values, dtype=lib.float64, requires_grad=True)
        g = lib.tensor(np.linspace(1, 2, len(values)), dtype=lib.float64, requires_grad=True)
        x = a * 1
        y = form(x)
        facts += [name, y is x, _tensor_facts(y)]
        facts.append(_outcome(lambda y=y, a=a, g=g: lib.autograd.grad(y, a, g, create_graph=True)[0]))
        facts.append(_outcome(lambda a=a, form=form: form(a)))
        b = a * 1
        view = b[1:4]
        form(view)
        facts += [_tensor_facts(b), _tensor_facts(view)]
    with lib.no_grad():
        facts.append(_tensor_facts(F.leaky_relu(lib.tensor(values, requires_grad=True), 0.5, inplace=True)))
    facts += [_outcome(lambda i=i: F.leaky_relu(lib.tensor([-1, 2]), 0.2, inplace=i)) for i in (False, True)]
    return facts


def test_inplace_activations_match_torch():
    assert _inplace_activation_facts(impl) == _inplace_activation_facts(torch)


def _written_after_facts(lib, slope: float | None) -> list:
    """Backward after a write to the result of an in-place activation (threshold_ saved a clone)."""
    F = lib.nn.functional
    a = lib.tensor([-2.0, 0.5, 3.0], dtype=lib.float64, requires_grad=True)
    x = a * 1
    y = F.threshold(x, 0.25, -1.0, inplace=True) if slope is None else F.leaky_relu(x, slope, inplace=True)
    x.mul_(2)
    return [_outcome(lambda: lib.autograd.grad(y.sum(), a)[0])]


@pytest.mark.parametrize(
    "slope",
    [None, 0.2, 0.0, -0.2],
)
def test_write_after_inplace_activation_matches_torch(slope):
    assert _written_after_facts(impl, slope) == _written_after_facts(torch, slope)


# -- layer audit: Linear, Sigmoid, Tanh, Softmax, LogSoftmax, Dropout, Flatten, Identity -----------
def _warned(call) -> tuple:
    """A call's outcome plus the warnings it raised (category and message)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = _outcome(call)
    return outcome, [(w.category.__name__, str(w.message)) for w in caught]


def _layer_facts(lib) -> list:
    nn = lib.nn
    rng = np.random.default_rng(11)
    facts: list = []
    for bias in (True, False):
        linear = nn.Linear(3, 2, bias=bias, dtype=lib.float64)
        with lib.no_grad():
            for p in linear.parameters():
                p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
        facts.append(repr(linear))
        for shape in ((3,), (4, 3), (2, 4, 3), (2, 1, 2, 3)):
            x = lib.tensor(rng.standard_normal(shape), requires_grad=True)
            y = linear(x)
            facts += [_outcome(lambda y=y: y), y.is_contiguous()]
            grads = lib.autograd.grad(y.sum(), [x, *linear.parameters()])
            facts += [np.round(g.tolist(), 8).tolist() for g in grads]
        facts.append(_outcome(lambda linear=linear: linear(lib.ones(2, 4, dtype=lib.float64))))
        facts.append(_outcome(lambda linear=linear: linear(lib.tensor(1.0, dtype=lib.float64))))
    x = lib.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    for layer in (
        nn.Sigmoid(),
        nn.Tanh(),
        nn.Identity(3, k=1),
        nn.Flatten(),
        nn.Flatten(0, 1),
        nn.Flatten(-2),
    ):
        facts += [repr(layer), _outcome(lambda layer=layer: layer(x))]
    facts.append(nn.Identity()(x) is x)
    facts.append(_outcome(lambda: nn.Flatten(2, 0)(x)))
    facts.append(_outcome(lambda: nn.Flatten(1, 5)(x)))
    facts.append(_outcome(lambda: nn.Flatten(0)(lib.tensor(1.0))))
    for cls in (nn.Softmax, nn.LogSoftmax):
        for dim in (None, 0, 1, -1):
            layer = cls(dim) if dim is not None else cls()
            facts.append(repr(layer))
            for shape in ((), (4,), (2, 3), (2, 3, 4), (1, 2, 3, 2)):
                t = lib.tensor(rng.standard_normal(shape), requires_grad=True)
                facts.append(_warned(lambda layer=layer, t=t: layer(t)))
        facts.append(_outcome(lambda cls=cls: cls(dim=3)(x)))
    F = lib.nn.functional
    facts.append(_warned(lambda: F.softmax(x)))
    facts.append(_warned(lambda: F.log_softmax(x, dtype=lib.float32)))
    for p in (0.0, 0.3, 1.0):
        for inplace in (False, True):
            layer = nn.Dropout(p, inplace=inplace)
            facts.append(repr(layer))
            for training in (True, False):
                layer.train(training)
                a = lib.ones(50, dtype=lib.float64, requires_grad=True)
                t = a * 1
                y = layer(t)
                values = np.asarray(y.tolist())
                kept = values != 0
                facts += [y is t, t._version, y.grad_fn.name(), sorted(set(np.round(values, 8).tolist()))]
                (grad,) = lib.autograd.grad(y.sum(), a)
                facts.append(bool((np.asarray(grad.tolist()) == np.where(kept, values, 0)).all()))
    for p in (-0.1, 1.5):
        facts.append(_outcome(lambda p=p: nn.Dropout(p)))
        facts.append(_outcome(lambda p=p: F.dropout(x, p)))
    facts.append(_outcome(lambda: F.dropout(x, 0.5, training=False)))
    facts.append(F.dropout(x, 0.5, training=False) is x)
    facts.append(_outcome(lambda: F.dropout(lib.ones(3, requires_grad=True), 0.5, inplace=True)))
    return facts


def test_layers_match_torch():
    assert _layer_facts(impl) == _layer_facts(torch)


def test_flatten_module_on_scalar_raises_as_torch():
    assert _outcome(lambda: impl.nn.Flatten()(impl.tensor(1.0))) == _outcome(
        lambda: torch.nn.Flatten()(torch.tensor(1.0))
    )


def test_linear_on_empty_batch_is_contiguous_as_torch():
    def facts(lib):
        y = lib.nn.Linear(3, 2)(lib.ones(0, 3))
        return tuple(y.shape), y.stride(), y.is_contiguous()

    assert facts(impl) == facts(torch)


# -- in-place writes into the views a full backward hook makes --------------------------------------
def _hooked_inplace_facts(lib) -> list:
    """A full backward hook passes a module's tensors through BackwardHookFunction, whose outputs
    are views made in a custom Function: an in-place ReLU / LeakyReLU inside a hooked module or
    right after one, or any in-place write into a hooked output, raises; so does reading such a
    view after a no_grad write (the version error names the node)."""
    nn = lib.nn
    facts: list = []
    x = lib.tensor([[-1.0, 0.5, 2.0], [3.0, -0.25, 0.0]], requires_grad=True)
    for make in (lambda: nn.ReLU(inplace=True), lambda: nn.LeakyReLU(0.1, inplace=True)):
        act = make()
        act.register_full_backward_hook(lambda m, gi, go: None)
        facts.append(_outcome(lambda act=act: act(x * 1)))
        facts.append(_outcome(lambda act=act: act(lib.ones(2, 3, requires_grad=True))))
        facts.append(_outcome(lambda act=act: act(lib.ones(2, 3))))
        seq = nn.Sequential(nn.Linear(3, 3), make())
        seq[0].register_full_backward_hook(lambda m, gi, go: None)
        facts.append(_outcome(lambda seq=seq: seq(x)))
        outer = nn.Sequential(nn.Identity(), make())
        outer.register_full_backward_hook(lambda m, gi, go: None)
        facts.append(_outcome(lambda outer=outer: outer(x * 1)))
    linear = nn.Identity()
    linear.register_full_backward_hook(lambda m, gi, go: None)

    def written_under_no_grad():
        y = linear(x * 2)
        z = y.sin()
        with lib.no_grad():
            y.mul_(2)
        return lib.autograd.grad(z.sum(), x)[0]

    class AddInPlace(nn.Module):
        def forward(self, a, b):
            return a.mul_(2) + b

    two = AddInPlace()
    two.register_full_backward_hook(lambda m, gi, go: None)
    facts.append(_outcome(lambda: linear(x * 2).mul_(2)))
    facts.append(_outcome(written_under_no_grad))
    facts.append(_outcome(lambda: two(x * 1, x * 1)))  # two differentiable outputs: multi-view error
    facts.append(_outcome(lambda: two(x * 1, lib.ones(2, 3))))
    return facts


def test_inplace_writes_into_hooked_module_views_raise_as_torch():
    facts = _hooked_inplace_facts(impl)
    assert sum(isinstance(f, tuple) and f[0] == "RuntimeError" for f in facts) >= 8
    assert facts == _hooked_inplace_facts(torch)


def _pad_error_facts(lib) -> list:
    """Non-constant padding checks the padding length against the input's dims first, as constant
    padding does (a Conv2d with padding_mode='reflect' on a 1-d input), before its own checks."""
    facts = []
    for mode in ("reflect", "replicate", "circular"):
        conv = lib.nn.Conv2d(1, 1, 3, padding=2, padding_mode=mode)
        shapes = ((4,), (4, 4), (1, 2, 2))  # the weights are random: compare only output shapes
        facts += [_outcome(lambda conv=conv, s=s: lib.tensor(conv(lib.ones(s)).shape)) for s in shapes]
        for shape in ((4,), (1, 4), (1, 1, 4)):
            for n in (2, 4, 6):
                facts.append(_outcome(lambda mode=mode, shape=shape, n=n: lib.nn.functional.pad(
                    lib.ones(shape), (1,) * n, mode=mode)))
    return facts


def test_pad_errors_match_torch():
    assert _pad_error_facts(impl) == _pad_error_facts(torch)


def _custom_function_view_facts(lib) -> list:
    """BackwardHookFunction's rule holds for any custom Function with one output: a view made in
    forward, or an input returned as-is, refuses in-place writes and a read after its base's."""

    class View(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view(-1)

        @staticmethod
        def backward(ctx, g):
            return g.view(2, 3)

    class Same(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class Two(lib.autograd.Function):  # two differentiable outputs: torch's multi-view rules
        @staticmethod
        def forward(ctx, x):
            return x, x.view(-1)

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 + g2.view(2, 3)

    a = lib.ones(2, 3, requires_grad=True)
    facts: list = [_outcome(lambda: Two.apply(a * 1)[1].mul_(2))]
    for fn in (View, Same, Two):

        def rebased(fn=fn):
            b = a * 1
            y = fn.apply(b)[0] if fn is Two else fn.apply(b)
            with lib.no_grad():
                b.mul_(2)
            return y.grad_fn

        first = (lambda t: t[0]) if fn is Two else (lambda t: t)
        facts += [
            _outcome(lambda fn=fn, first=first: first(fn.apply(a)).mul_(2)),
            _outcome(lambda fn=fn, first=first: first(fn.apply(a * 1)).mul_(2)),
            first(fn.apply(a * 1))._is_view(),
            _outcome(rebased),
            _outcome(lambda fn=fn, first=first: first(fn.apply(lib.ones(2, 3))).mul_(2)),
        ]
    return facts


def test_custom_function_views_refuse_inplace_writes_as_torch():
    assert _custom_function_view_facts(impl) == _custom_function_view_facts(torch)
