"""Corners of the dropout layers, Unflatten and Parameter's printed form that the generated programs
(MOD-012/013) do not reach, each compared with torch: every dtype's masks and scales on the seeded
stream, errors and their messages, warnings, identity in eval mode, printed forms."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import impl

FUNCTIONS = ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")
NATIVES = ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout")


def _outcome(lib, call):
    """What ``call(lib)`` gives, seeded (a tensor as dtype, values and grad_fn name; an error as its type
    and message) and the warnings it gives."""
    lib.manual_seed(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            y = call(lib)
            if isinstance(y, lib.Tensor):
                node = type(y.grad_fn).__name__ if y.grad_fn is not None else None
                y = (str(y.dtype), y.detach().double().numpy().tolist(), node)
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            y = (type(e).__name__, str(e).split("\n")[0])
    return y, [(w.category.__name__, str(w.message)) for w in caught]


def assert_like_torch(call) -> None:
    assert _outcome(impl, call) == _outcome(torch, call)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4), (2, 2, 2, 3), (1, 2, 2, 2, 2), (5,)])
@pytest.mark.parametrize("p", [0.3, 1.0])
def test_seeded_masks_and_scales_like_torch(dtype: str, shape: tuple, p: float) -> None:
    def call(lib):
        lib.manual_seed(7)
        x = ((lib.arange(int(np.prod(shape))) - 3) * 0.37).to(getattr(lib, dtype)).reshape(shape)
        x.requires_grad_()
        outs = []
        for name in FUNCTIONS:
            for inplace in (False, True):
                src = x.clone() if inplace else x
                try:
                    outs.append(getattr(lib.nn.functional, name)(src, p, True, inplace))
                except RuntimeError as e:
                    outs.append(str(e))
        for name in NATIVES:
            try:
                outs.append(getattr(lib, name)(x, p, True))
                outs.append(getattr(lib, name + "_")(x.detach().clone(), p, True))
            except RuntimeError as e:
                outs.append(str(e))
        return [o if isinstance(o, str) else (o.detach().double().tolist(), type(o.grad_fn).__name__)
                for o in outs] + [lib.rand(2).tolist()]

    assert_like_torch(call)


@pytest.mark.parametrize("call", [
    lambda t: t.dropout(t.ones(2, 3), 1.5, True),
    lambda t: t.dropout(t.ones(2, 3), -0.5, False),
    lambda t: t.feature_dropout(t.ones(3), 0.5, True),
    lambda t: t.feature_dropout(t.ones(3), 0.5, False),
    lambda t: t.feature_alpha_dropout_(t.ones(3), 1.0, True),
    lambda t: t.dropout(t.ones(2), "a", True),
    lambda t: t.dropout(3, 0.5, True),
    lambda t: t.nn.functional.dropout(t.ones(2), 1.5),
    lambda t: t.nn.functional.dropout1d(t.ones(2), 0.5),
    lambda t: t.nn.functional.dropout1d(t.ones(2, 2, 2, 2), 0.5, False),
    lambda t: t.nn.functional.dropout2d(t.ones(2, 3), 0.5),
    lambda t: t.nn.functional.dropout2d(t.ones(2, 3, 2), 0.5),
    lambda t: t.nn.functional.dropout3d(t.ones(2, 3, 2), 0.5),
    lambda t: t.nn.functional.alpha_dropout(t.ones(2, 3), 0.5),  # training defaults to False
    lambda t: t.nn.Dropout2d(1.5),
    lambda t: t.nn.AlphaDropout(0.5, inplace=True)(t.ones(2, 3)),
    lambda t: t.alpha_dropout(t.ones(0, 3), 0.5, True),
    lambda t: t.nn.Unflatten(1, 3),
    lambda t: t.nn.Unflatten(1, (1.5, 2)),
    lambda t: t.nn.Unflatten(1, [3, 1])(t.ones(2, 3)),
    lambda t: t.nn.Unflatten(-1, (2, -1))(t.ones(2, 3, 4)),
    lambda t: t.nn.Unflatten(1, (2, 2))(t.ones(2, 3)),
    lambda t: t.nn.Flatten(0, -1)(t.tensor(2.0)),
    lambda t: t.nn.Flatten(2, 1)(t.ones(2, 3, 4)),
    lambda t: t.nn.Flatten(1, 2)(t.ones(2, 3, 4, 5)),
    lambda t: t.nn.Flatten()(t.ones(3)),
], ids=lambda f: "")
def test_errors_warnings_and_results_like_torch(call) -> None:
    assert_like_torch(call)


@pytest.mark.filterwarnings("ignore:dropout2d")
def test_eval_mode_and_p0_return_the_input_itself() -> None:
    for lib in (torch, impl):
        x = lib.ones(2, 3, 2)
        assert lib.nn.functional.dropout(x, 0.5, False) is x
        assert lib.dropout(x, 0.0, True) is x
        assert lib.nn.functional.dropout2d(x, 0.5, False) is x
        for cls in ("Dropout", "AlphaDropout", "FeatureAlphaDropout"):
            assert getattr(lib.nn, cls)(0.5).eval()(x) is x


def test_printed_forms_like_torch() -> None:
    def forms(lib):
        nn = lib.nn
        model = nn.Sequential(nn.Unflatten(1, (2, 3)), nn.Dropout2d(0.25, inplace=True), nn.Flatten(1, 2),
                              nn.AlphaDropout(), nn.FeatureAlphaDropout(0.1), nn.Dropout1d(),
                              nn.Dropout3d(1.0), nn.Unflatten(-1, [3, 2]))
        p = nn.Parameter(lib.tensor([1.0, 2.0]), requires_grad=False)
        q = nn.Parameter(lib.tensor(3.0))
        return [repr(model), str(p), repr(p), f"{p}", str(q), f"{q}", str([q])]

    assert forms(impl) == forms(torch)
    for lib in (torch, impl):
        with pytest.raises(TypeError, match="unsupported format string passed to Parameter.__format__"):
            f"{lib.nn.Parameter(lib.tensor(2.0)):.2f}"
