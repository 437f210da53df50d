"""The workloads, written once against the torch API and run unchanged on impl and on torch.

Each builder does its setup (parameters, data) outside the timed region and returns the callable
that is timed. Parameters and data come from one seeded numpy generator, so every engine (HIPS
autograd included, see ``benchmarks.autograd_peer``) starts from the same numbers.

- W1 ``chain``: engine overhead, a chain of ``n`` small elementwise ops on a 16-element leaf, then
  backward (per-node cost of the engine, no arithmetic to hide it).
- W2 ``mlp_step``: one training step of an MLP (forward, cross-entropy, backward, SGD step).
- W3 ``cnn_step``: one training step of a small CNN (Conv2d, ReLU, Linear).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.engines import Engine, standin

CHAIN_SIZE = 16
CHAIN_SCALE, CHAIN_SHIFT = 1.0001, 0.001
MLP_CPU = {"sizes": (784, 512, 512, 10), "batch": 256}
MLP_GPU = {"sizes": (784, 4096, 4096, 10), "batch": 4096}
if standin():  # GPU benchmarks on CPU (benchmarks/gpu_check.sh's stand-in mode): CPU sizes
    MLP_GPU = MLP_CPU
CNN = {"batch": 32, "channels": (1, 8, 16), "image": 28, "classes": 10}
LEARNING_RATE = 0.01
SEED = 0


def chain_input() -> np.ndarray:
    return np.random.default_rng(SEED).standard_normal(CHAIN_SIZE).astype(np.float32)


def chain(engine: Engine, n: int) -> Callable[[], Any]:
    """W1: ``n`` elementwise ops (cycling multiply by a scalar, add a scalar, sin) then
    ``.sum().backward()``; returns the leaf's gradient."""
    T, device = engine.module, engine.device
    start = chain_input()

    def run() -> Any:
        x = T.tensor(start, device=device, requires_grad=True)
        h = x
        for i in range(n):
            step = i % 3
            h = h * CHAIN_SCALE if step == 0 else h + CHAIN_SHIFT if step == 1 else h.sin()
        h.sum().backward()
        engine.sync()
        return x.grad

    return run


def uniform_init(rng: np.random.Generator, shape: tuple[int, ...], fan_in: int) -> np.ndarray:
    """torch's default Linear/Conv init distribution, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), float32."""
    bound = 1.0 / np.sqrt(fan_in)
    return rng.uniform(-bound, bound, shape).astype(np.float32)


def mlp_parameters(sizes: tuple[int, ...]) -> list[np.ndarray]:
    """[w1, b1, w2, b2, ...] of an MLP with layer widths ``sizes`` (weights out x in)."""
    rng = np.random.default_rng(SEED)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=False):
        params += [uniform_init(rng, (fan_out, fan_in), fan_in), uniform_init(rng, (fan_out,), fan_in)]
    return params


def classification_data(shape: tuple[int, ...], classes: int) -> tuple[np.ndarray, np.ndarray]:
    """A batch of float32 inputs and int64 labels."""
    rng = np.random.default_rng(SEED + 1)
    return rng.standard_normal(shape).astype(np.float32), rng.integers(0, classes, shape[0]).astype(np.int64)


def _seed_parameters(T: Any, model: Any) -> None:
    """Replace every parameter of ``model``'s layers by the seeded numpy init (same on all engines)."""
    rng = np.random.default_rng(SEED)
    for layer in model:
        weight = getattr(layer, "weight", None)
        if weight is None:
            continue
        fan_in = int(np.prod(tuple(weight.shape)[1:]))
        for name, param in list(layer.named_parameters(recurse=False)):
            setattr(layer, name, T.nn.Parameter(T.tensor(uniform_init(rng, tuple(param.shape), fan_in))))


def _training_step(engine: Engine, model: Any, inputs: np.ndarray, labels: np.ndarray,
                   optimize: bool = True) -> Callable[[], Any]:
    """forward, cross-entropy, backward, SGD step on ``model`` (moved to the engine's device);
    without ``optimize``, forward and backward only (the gradients are then dropped)."""
    T, device = engine.module, engine.device
    _seed_parameters(T, model)
    model = model.to(device)
    optimizer = T.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    x = T.tensor(inputs, device=device)
    y = T.tensor(labels, device=device)
    cross_entropy = T.nn.functional.cross_entropy

    def step() -> Any:
        if optimize:
            optimizer.zero_grad()
        loss = cross_entropy(model(x), y)
        loss.backward()
        if optimize:
            optimizer.step()
        else:
            optimizer.zero_grad()  # leave no gradients behind: every call starts from the same state
        engine.sync()
        return loss

    return step


def mlp_step(engine: Engine, sizes: tuple[int, ...], batch: int, optimize: bool = True) -> Callable[[], Any]:
    """W2: Linear-ReLU-...-Linear with widths ``sizes``, on a batch of ``batch`` rows."""
    nn = engine.module.nn
    layers: list[Any] = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=False):
        layers += [nn.Linear(fan_in, fan_out), nn.ReLU()]
    inputs, labels = classification_data((batch, sizes[0]), sizes[-1])
    return _training_step(engine, nn.Sequential(*layers[:-1]), inputs, labels, optimize)


def cnn_step(engine: Engine, batch: int = CNN["batch"]) -> Callable[[], Any]:
    """W3: Conv2d(1,8,3,p=1)-ReLU-Conv2d(8,16,3,s=2,p=1)-ReLU-Flatten-Linear on 28x28 images."""
    nn = engine.module.nn
    c0, c1, c2 = CNN["channels"]
    side = CNN["image"] // 2
    model = nn.Sequential(
        nn.Conv2d(c0, c1, 3, padding=1), nn.ReLU(),
        nn.Conv2d(c1, c2, 3, stride=2, padding=1), nn.ReLU(),
        nn.Flatten(), nn.Linear(c2 * side * side, CNN["classes"]),
    )
    inputs, labels = classification_data((batch, c0, CNN["image"], CNN["image"]), CNN["classes"])
    return _training_step(engine, model, inputs, labels)
