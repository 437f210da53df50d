"""W1 and W2 on HIPS ``autograd`` (the numpy peer of impl), from the same numbers as
``benchmarks.workloads``: the same chain of ops, the same MLP, loss and SGD update."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchmarks import workloads
from benchmarks.engines import Engine


def chain(engine: Engine, n: int) -> Callable[[], Any]:
    """W1: d/dx of sum(chain(x)) with ``autograd.grad``."""
    from autograd import grad

    anp = engine.module
    start = workloads.chain_input()

    def total(x: Any) -> Any:
        h = x
        for i in range(n):
            step = i % 3
            if step == 0:
                h = h * workloads.CHAIN_SCALE
            else:
                h = h + workloads.CHAIN_SHIFT if step == 1 else anp.sin(h)
        return anp.sum(h)

    gradient = grad(total)
    return lambda: gradient(start)


def mlp_step(engine: Engine, sizes: tuple[int, ...], batch: int) -> Callable[[], Any]:
    """W2: forward, mean cross-entropy (log-sum-exp), gradient of all parameters, SGD update."""
    from autograd import value_and_grad

    anp = engine.module
    params = workloads.mlp_parameters(sizes)
    inputs, labels = workloads.classification_data((batch, sizes[0]), sizes[-1])
    rows = anp.arange(batch)

    def loss(params: list[Any]) -> Any:
        h = inputs
        for i in range(0, len(params), 2):
            h = anp.dot(h, params[i].T) + params[i + 1]
            if i + 2 < len(params):
                h = anp.maximum(h, 0.0)
        top = anp.max(h, axis=1, keepdims=True)  # log-sum-exp, stabilised (autograd.scipy needs scipy)
        log_normaliser = top[:, 0] + anp.log(anp.sum(anp.exp(h - top), axis=1))
        return anp.mean(log_normaliser - h[rows, labels])

    loss_and_grads = value_and_grad(loss)

    def step() -> Any:
        value, grads = loss_and_grads(params)
        for param, g in zip(params, grads, strict=True):
            param -= workloads.LEARNING_RATE * g
        return value

    return step
