"""autograd.backward / autograd.grad argument handling on impl against torch: batched gradients
(is_grads_batched), the deprecated only_inputs, non-tensor outputs and inputs, dict inputs, and
which retain_grad hooks run when ``inputs`` leaves the root out."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch

import impl


def _outcome(call: Any) -> Any:
    """A call's result (values and grad_fn names of the tensors in it) or its error, and the
    warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = call()
        except Exception as e:  # noqa: BLE001 - the error itself is the fact compared
            result = (type(e).__name__, str(e))
        else:
            result = _show(result)
    return result, [(w.category.__name__, str(w.message)) for w in caught]


def _show(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _show(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_show(v) for v in value]
    if hasattr(value, "grad_fn"):
        fn = value.grad_fn
        return np.round(value.tolist(), 6).tolist(), str(value.dtype), None if fn is None else fn.name()
    return value


def _grad_facts(lib: Any) -> list:
    ag = lib.autograd
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = lib.ones(2, requires_grad=True)
    n = lib.ones(2)
    calls = [
        lambda: ag.grad(x * x, x, lib.eye(3), is_grads_batched=True),
        lambda: ag.grad((x * x).sum(), x, lib.tensor([1.0, 2.0]), is_grads_batched=True),
        lambda: ag.grad(x * x, [x, w], lib.eye(3)[:2], is_grads_batched=True, allow_unused=True),
        lambda: ag.grad(x * x, [x, w], lib.eye(3), is_grads_batched=True, materialize_grads=True),
        lambda: ag.grad([x * x, x * 2], x, [lib.eye(3), lib.ones(3, 3)], is_grads_batched=True),
        lambda: ag.grad(x * x, x, lib.eye(3, dtype=lib.float64), is_grads_batched=True),
        lambda: ag.grad((x * x).sum(), x, None, is_grads_batched=True),
        lambda: ag.grad(x * x, x, lib.ones(2, 2), is_grads_batched=True),
        lambda: ag.grad([x * x, x * 2], x, [lib.eye(3), lib.ones(2, 3)], is_grads_batched=True),
        lambda: ag.grad([x * 2, n * 1], [x], [lib.ones(3, 3), None], is_grads_batched=True),
        lambda: ag.grad(x * 2, [x], lib.ones(0, 3), is_grads_batched=True),
        lambda: ag.grad((x * x).sum(), x, only_inputs=False),
        lambda: ag.grad((x * x).sum(), [None]),
        lambda: ag.grad((x * x).sum(), [n, None]),
        lambda: ag.grad((x * x).sum(), [None, n]),
        lambda: ag.grad((n * n).sum(), [None]),
        lambda: ag.grad((x * x).sum(), [3]),
        lambda: ag.grad([None], [x]),
        lambda: ag.grad(None, x),
        lambda: ag.grad(x * 2, {"a": x}, lib.ones(3)),
        lambda: ag.grad(x * 2, {"a": x}, lib.ones(2, 3), is_grads_batched=True),
        lambda: ag.grad(x.sum(), []),
        lambda: ag.backward([None]),
        lambda: ag.backward([(x * x).sum(), 3]),
        lambda: ag.backward((x * x).sum(), inputs=[None]),
        lambda: ag.backward((n * n).sum(), inputs=[None]),
        lambda: ag.backward((x * x).sum(), inputs={"a": x}),
        lambda: ag.backward((x * x).sum(), grad_variables=lib.tensor(1.0)),
        lambda: ag.backward((x * x).sum(), lib.tensor(1.0), grad_variables=lib.tensor(1.0)),
    ]
    facts = [_outcome(call) for call in calls]
    z = x * x
    ag.grad(z, [x], [lib.ones(2, 3)], is_grads_batched=True)
    facts.append(_outcome(lambda: ag.grad(z, [x], [lib.ones(3)])))  # the batched run freed it
    return facts


def test_grad_and_backward_arguments_match_torch() -> None:
    facts = _grad_facts(impl)
    assert sum(isinstance(f[0], tuple) and f[0][0].endswith("Error") for f in facts) >= 15
    assert facts == _grad_facts(torch)


def _retain_grad_facts(lib: Any) -> list:
    """A retain_grad hook on the root runs (with the root gradient) when backward(inputs=) or
    grad() leaves the root out, if the root is the only one; not under several roots, nor on an
    inner tensor the pass never reaches."""
    x1 = lib.ones(2, requires_grad=True)
    x2 = lib.ones(2, requires_grad=True)
    facts = []

    def kept(make: Any, run: Any) -> Any:
        tensors = make()
        for t in tensors:
            t.retain_grad()
        run(*tensors)
        return [_show(t.grad) for t in tensors]

    facts.append(kept(lambda: [x2 * 2], lambda t: t.backward(lib.full((2,), 5.0), inputs=[x1])))
    facts.append(kept(lambda: [x2 * 2], lambda t: (t * 3).backward(lib.ones(2), inputs=[x1])))
    facts.append(kept(lambda: [x2 * 2], lambda t: t.backward(lib.ones(2) * 7, inputs=[x2])))
    grad_of = lib.autograd.grad
    facts.append(kept(lambda: [x2 * 2], lambda t: grad_of(t, [x1], lib.ones(2) * 3, allow_unused=True)))
    facts.append(
        kept(
            lambda: [x2 * 2, x2 * 3],
            lambda a, b: lib.autograd.backward([a, b], [lib.ones(2), lib.ones(2) * 4], inputs=[x1]),
        )
    )
    t = x2 * 2
    t.retain_grad()
    t.register_hook(lambda g: g * 10)
    t.backward(lib.ones(2), inputs=[x1])
    t.backward(lib.ones(2), inputs=[x1])
    facts.append(_show(t.grad))
    return facts


def test_retain_grad_of_a_left_out_root_matches_torch() -> None:
    assert _retain_grad_facts(impl) == _retain_grad_facts(torch)
