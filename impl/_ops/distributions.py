"""Sampling ops on torch's CPU random stream (impl._random): ``torch.normal`` in its four overloads,
``torch.bernoulli`` and ``Tensor.bernoulli_`` (a float or a tensor of probabilities),
``Tensor.normal_``, ``torch.poisson``. Each computes as ATen's CPU templates do (normal of a tensor
mean: ``normal_(0, std)`` then ``add_(mean)``; of a tensor std: ``normal_(0, 1)``, ``mul_(std)``,
``add_(mean)``), and its node gives zero gradients, as derivatives.yaml's ``zeros_like(grad)``."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from impl import _api as api
from impl import _creation, _random, dtypes
from impl._ops.elementwise import _no_derivative, zero_grad
from impl._ops.gamma import _digamma
from impl._ops.inplace import apply_inplace, check_inplace
from impl._ops.table import NOT_IMPLEMENTED, D, OpDef, apply, broadcast_mismatch
from impl._signatures import CREATE, OVERLOADS, Out, invalid_call
from impl._tensor import Tensor
from impl._xp import to_numpy

_GEN = "torch.Generator generator = None"
OVERLOADS["normal"] = (
    f"(Tensor mean, Tensor std, *, {_GEN}, Tensor out = None)",
    f"(Tensor mean, float std = 1, *, {_GEN}, Tensor out = None)",
    f"(float mean, Tensor std, *, {_GEN}, Tensor out = None)",
    f"(float mean, float std, tuple of ints size, *, {_GEN}, Tensor out = None, "
    "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
    "bool pin_memory = False, bool requires_grad = False)",
)
OVERLOADS["bernoulli"] = (
    f"(Tensor input, *, {_GEN}, Tensor out = None)",
    f"(Tensor input, float p, *, {_GEN})",
)
OVERLOADS["bernoulli_"] = (f"(Tensor p, *, {_GEN})", f"(float p = 0.5, *, {_GEN})")
P_OUT_OF_RANGE = (
    "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  "
    "If so, please report an enhancement request to PyTorch.)"
)


def _stream(generator: Any) -> _random.Generator:
    return generator if generator is not None else _random.default_generator


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _standard(shape: tuple, dt: np.dtype, std: float, generator: Any) -> np.ndarray:
    """``empty(shape, dt).normal_(0, std)``: torch's normal kernel, refused for a dtype that is not
    floating."""
    if not dtypes.from_numpy_dtype(dt).is_floating_point:
        raise dtypes.kernel_missing("normal_kernel_cpu", dt)
    return _random.normal(shape, dt, 0.0, std, gen=_stream(generator))


def _in(dt: np.dtype, a: Any, b: Any, op: Any) -> np.ndarray:
    """``a.<op>_(b)`` into ``a``'s dtype: computed in the common type, then cast (an in-place op's
    TensorIterator)."""
    common = np.promote_types(np.asarray(a).dtype, np.asarray(b).dtype)
    return op(np.asarray(a, common), np.asarray(b, common)).astype(dt)


def _normal_tensor_float(xp: Any, mean: Any, std: float, generator: Any) -> Any:
    draws = _standard(mean.shape, mean.dtype, std, generator)
    return xp.asarray(_in(mean.dtype, draws, to_numpy(mean), np.add))


def _normal_float_tensor(xp: Any, std: Any, mean: float, generator: Any) -> Any:
    draws = _standard(std.shape, std.dtype, 1.0, generator)
    scaled = _in(std.dtype, draws, to_numpy(std), np.multiply)
    return xp.asarray(_in(std.dtype, scaled, np.asarray(mean, std.dtype), np.add))


def _normal_tensor_tensor(xp: Any, mean: Any, std: Any, generator: Any) -> Any:
    shape = np.broadcast_shapes(mean.shape, std.shape)
    draws = _standard(shape, mean.dtype, 1.0, generator)
    scaled = _in(mean.dtype, draws, to_numpy(std), np.multiply)
    return xp.asarray(_in(mean.dtype, scaled, to_numpy(mean), np.add))


NORMAL_TENSOR_FLOAT = OpDef("NormalBackward1", _normal_tensor_float, ("mean",), {"mean": D("", zero_grad)})
NORMAL_FLOAT_TENSOR = OpDef("NormalBackward2", _normal_float_tensor, ("std",), {"std": D("", zero_grad)})
NORMAL_TENSOR_TENSOR = OpDef(
    "NormalBackward3",
    _normal_tensor_tensor,
    ("mean", "std"),
    {"mean": D("", zero_grad), "std": D("", zero_grad)},
)


def _check_std(std: Any) -> None:
    if isinstance(std, Tensor):
        if std.numel() and not bool((to_numpy(std._data) >= 0).all()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def _normal_out(args: tuple, kwargs: dict) -> Out:
    """normal's out=: a factory's with a size, else the draws cast into out."""
    if len(args) > 2 or kwargs.get("size") is not None:
        return CREATE.named("aten::normal")
    return Out("upcast_floating", "\"normal_kernel_cpu\" not implemented for '{out}'", NotImplementedError)


@api.function("normal", out=Out(pick=_normal_out))
def normal(
    mean: Any, std: Any = 1.0, size: Any = None, *, generator: Any = None, dtype: Any = None,
    layout: Any = None, device: Any = None, pin_memory: bool = False, requires_grad: bool = False,
) -> Tensor:
    """torch.normal: a tensor mean and/or std (one draw per element), or floats and a size."""
    mean_tensor, std_tensor = isinstance(mean, Tensor), isinstance(std, Tensor)
    factory = size is not None or dtype is not None or device is not None or requires_grad
    if factory:
        if not (_is_number(mean) and _is_number(std) and size is not None):
            raise invalid_call(normal, locals())
        _check_std(std)
        out = _creation.empty(size, dtype=dtype, device=device)
        return normal_(out, mean, std, generator=generator).requires_grad_(requires_grad)
    if mean_tensor and std_tensor:
        _check_std(std)
        mismatch = broadcast_mismatch([tuple(mean.shape), tuple(std.shape)])
        if mismatch:
            raise RuntimeError(mismatch)
        return apply(NORMAL_TENSOR_TENSOR, mean, std, generator=generator)
    if mean_tensor and _is_number(std):
        _check_std(std)
        return apply(NORMAL_TENSOR_FLOAT, mean, std=float(std), generator=generator)
    if std_tensor and _is_number(mean):
        _check_std(std)
        return apply(NORMAL_FLOAT_TENSOR, std, mean=float(mean), generator=generator)
    raise invalid_call(normal, locals())


def _normal_inplace(xp: Any, a: Any, mean: float, std: float, generator: Any) -> Any:
    return xp.asarray(_random.normal(a.shape, a.dtype, mean, std, gen=_stream(generator)))


NORMAL_ = OpDef("NormalBackward0", _normal_inplace, derivatives={"self": D("", zero_grad)})


@api.method("normal_")
def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    """``Tensor.normal_``: torch's normal kernel in place (NormalBackward0 on a graph)."""
    _check_std(std)
    if not self.dtype.is_floating_point:
        raise dtypes.kernel_missing("normal_kernel_cpu", self.dtype)
    return apply_inplace(NORMAL_, self, mean=float(mean), std=float(std), generator=generator)


def _bernoulli_draws(p: np.ndarray, dt: np.dtype, generator: Any) -> np.ndarray:
    """torch's tensor-p bernoulli kernel: one uniform per element in order (a double one for double
    probabilities, a float one otherwise), ``u < p``."""
    if not dtypes.from_numpy_dtype(p.dtype).is_floating_point:
        raise dtypes.kernel_missing("bernoulli_tensor_cpu_p_", p.dtype)
    if p.size and not bool(((p >= 0) & (p <= 1)).all()):
        raise RuntimeError(P_OUT_OF_RANGE)
    # (ascontiguousarray makes a 0-d array 1-d: the draws take the shape of p)
    return _random.bernoulli(np.ascontiguousarray(p).reshape(p.shape), dt, gen=_stream(generator))


def _bernoulli_scalar(shape: tuple, dt: np.dtype, p: float, generator: Any) -> np.ndarray:
    """torch's float-p bernoulli on this CPU: a double uniform per element, ``u < p``."""
    return (_stream(generator).uniform(int(np.prod(shape)), True) < p).reshape(shape).astype(dt)


def _bernoulli_fwd(xp: Any, p: Any, generator: Any) -> Any:
    return xp.asarray(_bernoulli_draws(to_numpy(p), p.dtype, generator))


def _bernoulli_p_fwd(xp: Any, a: Any, p: float, generator: Any) -> Any:
    return xp.asarray(_bernoulli_scalar(a.shape, a.dtype, p, generator))


def _bernoulli_tensor_fwd(xp: Any, a: Any, p: Any, generator: Any) -> Any:
    probabilities = np.broadcast_to(to_numpy(p), a.shape)
    return xp.asarray(_bernoulli_draws(probabilities, a.dtype, generator))


BERNOULLI = OpDef("BernoulliBackward0", _bernoulli_fwd, derivatives={"self": D("", zero_grad)})
BERNOULLI_TENSOR_ = OpDef(
    "BernoulliBackward1", _bernoulli_tensor_fwd, ("self", "p"),
    {"self": D("", zero_grad), "p": D("", zero_grad)},
)
BERNOULLI_FLOAT_ = OpDef("BernoulliBackward2", _bernoulli_p_fwd, derivatives={"self": D("", zero_grad)})
BERNOULLI_P = OpDef(  # torch has no derivative for bernoulli.p
    "NotImplemented",
    _bernoulli_p_fwd,
    derivatives={"self": D("", _no_derivative("bernoulli"))},
    qualified_name=NOT_IMPLEMENTED,
)


def _check_p(p: float) -> None:
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")


@api.variants("bernoulli", out=Out("any", warn=False))  # drawn into out, of any dtype
def bernoulli(input: Tensor, p: Any = None, *, generator: Any = None) -> Tensor:
    """torch.bernoulli: one draw per element with the probabilities ``input`` holds, or ``p``."""
    if not isinstance(input, Tensor) or not (p is None or _is_number(p)):
        raise invalid_call(bernoulli, locals())
    if p is None:
        return apply(BERNOULLI, input, generator=generator)
    _check_p(p)
    return apply(BERNOULLI_P, input, p=float(p), generator=generator)


@api.method("bernoulli_")
def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """``Tensor.bernoulli_(p)``: a float p, or a tensor of probabilities expanded to self."""
    if isinstance(p, Tensor):
        check_inplace(self)
        if p.dim() > self.dim() or broadcast_mismatch([tuple(p.shape), tuple(self.shape)]):
            raise RuntimeError(_expand_error(p, tuple(self.shape)))
        return apply_inplace(BERNOULLI_TENSOR_, self, p, generator=generator)
    if not _is_number(p):
        raise invalid_call(_bernoulli_p, {"p": p, "generator": generator}, "bernoulli_")
    _check_p(p)
    return apply_inplace(BERNOULLI_FLOAT_, self, p=float(p), generator=generator)


def _bernoulli_p(p: Any = 0.5, *, generator: Any = None) -> None:
    """The parameters of ``bernoulli_`` after self, as torch's method parser words its error."""


def _expand_error(p: Tensor, shape: tuple) -> str:
    legacy = f"{dtypes.legacy_name(p.dtype)}{{[{', '.join(map(str, p.shape))}]}}"
    size = f"[{', '.join(map(str, shape))}]"
    if p.dim() > len(shape):
        return (
            f"expand({legacy}, size={size}): the number of sizes provided ({len(shape)}) must be greater or "
            f"equal to the number of dimensions in the tensor ({p.dim()})"
        )
    for i in range(1, p.dim() + 1):
        if p.shape[-i] not in (1, shape[-i]):
            return (
                f"The expanded size of the tensor ({shape[-i]}) must match the existing size ({p.shape[-i]}) "
                f"at non-singleton dimension {len(shape) - i}.  Target sizes: {size}.  Tensor sizes: "
                f"[{', '.join(map(str, p.shape))}]"
            )
    raise AssertionError("p expands to self")


def _poisson_one(rate: float, g: _random.Generator) -> int:
    """ATen's sample_poisson: Hoermann's transformed rejection from a rate of 10 on, else the
    product of uniforms (Knuth); double uniforms from the stream."""
    if not rate >= 0:
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    if rate == 0:
        return 0
    if rate < 10:
        limit, count, product = math.exp(-rate), 0, 1.0
        while True:
            product *= float(g.uniform(1, True)[0])
            if product <= limit:
                return count
            count += 1
    slam, loglam = math.sqrt(rate), math.log(rate)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)
    while True:
        u = float(g.uniform(1, True)[0]) - 0.5
        v = float(g.uniform(1, True)[0])
        us = 0.5 - abs(u)
        k = math.floor((2 * a / us + b) * u + rate + 0.43)
        if us >= 0.07 and v <= vr:
            return k
        if k < 0 or (us < 0.013 and v > us):
            continue
        bound = -rate + k * loglam - math.lgamma(k + 1)
        if math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b) <= bound:
            return k


def _poisson_fwd(xp: Any, rates: Any, generator: Any) -> Any:
    if not dtypes.from_numpy_dtype(rates.dtype).is_floating_point:
        raise dtypes.kernel_missing("poisson_cpu", rates.dtype)
    g = _stream(generator)
    flat = np.ascontiguousarray(to_numpy(rates)).astype(np.float64).reshape(-1)
    drawn = np.array([_poisson_one(rate, g) for rate in flat.tolist()], dtype=np.float64)
    return xp.asarray(drawn.astype(rates.dtype).reshape(rates.shape))


POISSON = OpDef("PoissonBackward0", _poisson_fwd, derivatives={"self": D("", zero_grad)})


@api.function("poisson")
def poisson(input: Tensor, generator: Any = None) -> Tensor:
    """torch.poisson: one draw per element with the rate ``input`` holds (ATen's sample_poisson)."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"poisson(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    return apply(POISSON, input, generator=generator)


# -- torch._standard_gamma (Gamma, Chi2, StudentT's draws) ----------------------------------------
_THIRD_F = float(np.float32(1 / 3))  # 1.0f / 3.0f
_SQUEEZE = float(np.float32(0.0331))  # 0.0331f


def _gamma_one(alpha: float, single: bool, g: _random.Generator) -> float:
    """ATen's sample_gamma (Marsaglia and Tsang, alpha below 1 boosted by a uniform's power) in
    double with float constants, alpha's own arithmetic in float32 for ``single``; the stream's
    double uniforms and (cached Box-Muller) double normals."""
    f32 = np.float32 if single else float
    scale = 1.0
    if alpha < 1:
        if alpha == 0:
            return 0.0
        scale *= (1 - float(g.uniform(1, True)[0])) ** float(f32(1.0) / f32(alpha))
        alpha = float(f32(alpha) + f32(1.0))
    d = float(f32(alpha) - f32(_THIRD_F))
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = g.normal_one(True)
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1 - float(g.uniform(1, True)[0])
        xx = x * x
        if u < 1.0 - _SQUEEZE * xx * xx or math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def _standard_gamma_fwd(xp: Any, alpha: Any, generator: Any) -> Any:
    if alpha.dtype not in (np.float32, np.float64):
        raise dtypes.kernel_missing("gamma_cpu", alpha.dtype)
    g, single = _stream(generator), alpha.dtype == np.float32
    flat = np.ascontiguousarray(to_numpy(alpha)).reshape(-1).tolist()
    drawn = np.array([_gamma_one(a, single, g) for a in flat], dtype=np.float64).astype(alpha.dtype)
    drawn = np.maximum(drawn, np.finfo(alpha.dtype).tiny)  # std::max(numeric_limits::min(), sample)
    return xp.asarray(drawn.reshape(alpha.shape))


def _gamma_grad_one(alpha: float, x: float) -> float:
    """Distributions.h's standard_gamma_grad_one: d sample / d alpha at a fixed cdf (a Taylor series
    for x < 0.8, Rice's saddle point expansion for alpha > 8, else a bivariate rational fit)."""
    if x < 0.8:
        numer, denom = 1.0, alpha
        series1, series2 = numer / denom, numer / (denom * denom)
        for i in range(1, 6):
            numer *= -x / i
            denom += 1
            series1 += numer / denom
            series2 += numer / (denom * denom)
        pow_x_alpha = x**alpha
        pdf = x ** (alpha - 1) * math.exp(-x)
        cdf = pow_x_alpha * series1
        psi = float(_digamma(np, np.float64(alpha)))
        cdf_alpha = (math.log(x) - psi) * cdf - pow_x_alpha * series2
        result = -cdf_alpha / pdf if pdf else math.nan
        return 0.0 if math.isnan(result) else result
    if alpha > 8:
        if 0.9 * alpha <= x <= 1.1 * alpha:
            numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
            numer_2 = (1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha
                       + alpha * (107 + 3600 * x))
            return numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha))
        denom = math.sqrt(8 * alpha)
        term2 = denom / (alpha - x)
        term3 = (x - alpha - alpha * math.log(x / alpha)) ** -1.5
        term23 = term2 - term3 if x < alpha else term2 + term3
        far = math.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x))
        term1 = math.log(x / alpha) * term23 - far
        stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
        return -stirling * x * term1 / denom
    u, v = math.log(x / alpha), math.log(alpha)
    coef = [a + u * (b + u * c) for a, b, c in zip(*_GAMMA_GRAD_UV, strict=True)]
    p = coef[0] + v * (coef[1] + v * (coef[2] + v * coef[3]))
    q = coef[4] + v * (coef[5] + v * (coef[6] + v * coef[7]))
    return math.exp(p / q)


def _not_differentiable(name: str) -> Any:
    def formula(g: Any, c: Any) -> Any:
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")

    return formula


_GAMMA_GRAD_UV = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084),
    (0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
     -0.00058392623),
    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
     -1.5247877e-07),
)


def _standard_gamma_grad_fwd(xp: Any, alpha: Any, x: Any) -> Any:
    if alpha.dtype not in (np.float32, np.float64):
        raise dtypes.kernel_missing("_standard_gamma_grad_cpu", alpha.dtype)
    a, b = np.broadcast_arrays(to_numpy(alpha), to_numpy(x))
    out = [_gamma_grad_one(float(p), float(q)) for p, q in zip(a.reshape(-1).tolist(), b.reshape(-1).tolist(),
                                                                strict=True)]
    return xp.asarray(np.array(out, dtype=np.float64).astype(alpha.dtype).reshape(a.shape))


STANDARD_GAMMA_GRAD = OpDef(
    "StandardGammaGradBackward0",
    _standard_gamma_grad_fwd,
    ("self", "output"),
    derivatives={"self": D("", _not_differentiable("_standard_gamma_grad")),
                 "output": D("", _not_differentiable("_standard_gamma_grad"))},
)
STANDARD_GAMMA = OpDef(
    "StandardGammaBackward0",
    _standard_gamma_fwd,
    derivatives={"self": D("self result", lambda g, c: g * apply(STANDARD_GAMMA_GRAD, c.self, c.result))},
)


@api.function("_standard_gamma")
def _standard_gamma(input: Tensor, generator: Any = None) -> Tensor:
    """One Gamma(input, 1) draw per element (ATen's CPU _standard_gamma)."""
    if not isinstance(input, Tensor):
        raise invalid_call(_standard_gamma, locals())
    return apply(STANDARD_GAMMA, input, generator=generator)


@api.function("_standard_gamma_grad")
def _standard_gamma_grad(input: Tensor, output: Tensor) -> Tensor:
    """The reparameterised gradient of a standard Gamma draw ``output`` for its concentration."""
    return apply(STANDARD_GAMMA_GRAD, input, output)


# -- torch._sample_dirichlet and _dirichlet_grad (Dirichlet, Beta) -------------------------------
def _sample_dirichlet_fwd(xp: Any, alpha: Any, generator: Any) -> Any:
    """ATen's CPU dirichlet: a double Gamma draw per element (alpha as a double), each lane divided
    by its sum, clamped to [smallest normal, the float below 1] of the dtype."""
    if alpha.dtype not in (np.float32, np.float64):
        raise dtypes.kernel_missing("dirichlet", alpha.dtype)
    g = _stream(generator)
    flat = np.ascontiguousarray(to_numpy(alpha)).reshape(-1).tolist()
    gammas = np.array([_gamma_one(float(a), False, g) for a in flat], dtype=np.float64).reshape(alpha.shape)
    gammas = np.maximum(gammas, np.finfo(np.float64).tiny)
    ratio = (gammas / gammas.sum(-1, keepdims=True)).astype(alpha.dtype)
    below_one = np.nextafter(alpha.dtype.type(1), alpha.dtype.type(0))
    return xp.asarray(np.minimum(below_one, np.maximum(np.finfo(alpha.dtype).tiny, ratio)))


SAMPLE_DIRICHLET = OpDef("SampleDirichletBackward0", _sample_dirichlet_fwd,
                         derivatives={"self": D("", _not_differentiable("_sample_dirichlet"))})


@api.function("_sample_dirichlet")
def _sample_dirichlet(input: Tensor, generator: Any = None) -> Tensor:
    """One Dirichlet draw per lane of the last dim (ATen's CPU _sample_dirichlet)."""
    if not isinstance(input, Tensor):
        raise invalid_call(_sample_dirichlet, locals())
    return apply(SAMPLE_DIRICHLET, input, generator=generator)


def _psi(x: float) -> float:
    return float(_digamma(np, np.float64(x)))


def _beta_grad_alpha_small(x: float, alpha: float, beta: float) -> float:
    factor = _psi(alpha) - _psi(alpha + beta) - math.log(x)
    numer = 1.0
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer *= (i - beta) * x / i
        denom = alpha + i
        series += numer / denom * (factor + 1 / denom)
    result = x * (1 - x) ** -beta * series
    return 0.0 if math.isnan(result) else result


def _beta_grad_beta_small(x: float, alpha: float, beta: float) -> float:
    factor = _psi(alpha + beta) - _psi(beta)
    numer, betas, dbetas, series = 1.0, 1.0, 0.0, factor / alpha
    for i in range(1, 9):
        numer *= -x / i
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series += numer / (alpha + i) * (dbetas + factor * betas)
    result = -((1 - x) ** (1 - beta)) * series
    return 0.0 if math.isnan(result) else result


def _beta_grad_alpha_mid(x: float, alpha: float, beta: float) -> float:
    total = alpha + beta
    mean = alpha / total
    std = math.sqrt(alpha * beta / (total + 1)) / total
    b2 = beta * beta
    if mean - 0.1 * std <= x <= mean + 0.1 * std:  # the singularity at x = mean avoided
        poly = 47 * x * b2 * b2 + alpha * (
            (43 + 20 * (16 + 27 * beta) * x) * b2 * beta + alpha * (
                3 * (59 + 180 * beta - 90 * x) * b2 + alpha * (
                    (453 + 1620 * beta * (1 - x) - 455 * x) * beta
                    + alpha * (8 * (1 - x) * (135 * beta - 11)))))
        prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
        prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
        return prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / math.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) * (1 + 1 / (12 * beta) + 1 / (288 * b2))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * b2
    axbx = alpha * (x - 1) + beta * x
    term1 = term1_num / (math.sqrt(2 * alpha / beta) * total**1.5 * axbx * axbx)
    term2 = 0.5 * math.log(alpha / (total * x))
    term3 = math.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4 = (beta * math.log(beta / (total * (1 - x))) + alpha * math.log(alpha / (total * x))) ** -1.5
    return stirling * prefactor * (term1 + term2 * (term3 + (term4 if x < mean else -term4)))


# Distributions.h's rational correction: c[numerator/denominator][power of u][power of a][power of b]
_DIRICHLET_C = (
    (((1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
      (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
      (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013)),
     ((0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
      (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
      (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05)),
     ((-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
      (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
      (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05))),
    (((1, -0.02924021934, -0.04438342661, 0.007285809825),
      (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
      (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149)),
     ((0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
      (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
      (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05)),
     ((0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
      (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
      (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06))),
)


def _dirichlet_grad_one(x: float, alpha: float, total: float) -> float:
    """Distributions.h's dirichlet_grad_one: -(d cdf / d alpha) / pdf / (1 - x) of a Beta(alpha,
    total - alpha) draw x: Taylor series near 0 and 1, Rice's expansion for large parameters, else
    a rational correction to an analytic approximation."""
    beta = total - alpha
    boundary = total * x * (1 - x)
    if x <= 0.5 and boundary < 2.5:
        return _beta_grad_alpha_small(x, alpha, beta)
    if x >= 0.5 and boundary < 0.75:
        return -_beta_grad_beta_small(1 - x, beta, alpha)
    if alpha > 6 and beta > 6:
        return _beta_grad_alpha_mid(x, alpha, beta)
    u = math.log(x)
    a = math.log(alpha) - u
    b = math.log(total) - a
    p = q = 0.0
    for i, pu in enumerate((1, u, u * u)):
        for j, pa in enumerate((1, a, a * a)):
            cp, cq = _DIRICHLET_C[0][i][j], _DIRICHLET_C[1][i][j]
            p += pu * pa * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
            q += pu * pa * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
    return p / q * (x * (_psi(total) - _psi(alpha)) / beta)


def _dirichlet_grad_fwd(xp: Any, x: Any, alpha: Any, total: Any) -> Any:
    if x.dtype not in (np.float32, np.float64):
        raise dtypes.kernel_missing("_dirichlet_grad_cpu", x.dtype)
    arrays = np.broadcast_arrays(to_numpy(x), to_numpy(alpha), to_numpy(total))
    lanes = zip(*(a.reshape(-1).tolist() for a in arrays), strict=True)
    out = np.array([_dirichlet_grad_one(*lane) for lane in lanes], dtype=np.float64)
    return xp.asarray(out.astype(x.dtype).reshape(arrays[0].shape))


_DIRICHLET_GRAD_INPUTS = ("self", "alpha", "total")
DIRICHLET_GRAD = OpDef(
    "DirichletGradBackward0", _dirichlet_grad_fwd, _DIRICHLET_GRAD_INPUTS,
    derivatives={k: D("", _not_differentiable("_dirichlet_grad")) for k in _DIRICHLET_GRAD_INPUTS},
)


@api.function("_dirichlet_grad")
def _dirichlet_grad(x: Tensor, alpha: Tensor, total: Tensor) -> Tensor:
    """Dirichlet's reparameterised gradient for ``alpha`` at draws ``x`` (lanes summing to ``total``)."""
    return apply(DIRICHLET_GRAD, x, alpha, total)
