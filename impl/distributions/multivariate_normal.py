"""torch.distributions.MultivariateNormal: loc and one of covariance_matrix, precision_matrix or
scale_tril (kept as its unbroadcast Cholesky factor); rsample is loc + scale_tril @ a standard normal
draw, log_prob solves with the factor (torch's batched Mahalanobis distance)."""

from __future__ import annotations

import math
from typing import Any

from impl._size import Size
from impl._tensor import Tensor
from impl.distributions import constraints
from impl.distributions.distribution import Distribution
from impl.distributions.utils import EMPTY, _standard_normal, lazy_property, torch
from impl.linalg import cholesky, solve_triangular

__all__ = ["MultivariateNormal"]

_MATRICES = ("covariance_matrix", "precision_matrix", "scale_tril")


def _broadcast_shapes(*shapes: tuple) -> Size:
    """torch.broadcast_shapes of two batch shapes, with its error."""
    out = list(shapes[0])
    for index, shape in enumerate(shapes[1:], 1):
        out = [1] * (len(shape) - len(out)) + out
        for i, s in enumerate(shape, len(out) - len(shape)):
            if out[i] == 1:
                out[i] = s
            elif s not in (1, out[i]):
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {s} at {i - len(out)}! Mismatching "
                    f"argument at index {index} had {shape}; but expected shape should be "
                    f"broadcastable to {out}"
                )
    return Size(out)


def _batch_mv(bmat: Tensor, bvec: Tensor) -> Tensor:
    return torch.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL: Tensor, bx: Tensor) -> Tensor:
    """The squared Mahalanobis distance x^T (L L^T)^-1 x, batched as torch's: x's batch dims that
    L's broadcast over are moved into one solve's right-hand sides."""
    n = bx.size(-1)
    bx_batch_shape = bx.shape[:-1]
    bL_batch_dims = bL.dim() - 2
    outer = len(bx_batch_shape) - bL_batch_dims
    old_batch_dims, new_batch_dims = outer + bL_batch_dims, outer + 2 * bL_batch_dims
    new_shape = tuple(bx.shape[:outer])
    for sL, sx in zip(bL.shape[:-2], bx.shape[outer:-1], strict=True):
        new_shape += (sx // sL, sL)
    bx = bx.reshape(new_shape + (n,))
    permutation = [*range(outer), *range(outer, new_batch_dims, 2), *range(outer + 1, new_batch_dims, 2),
                   new_batch_dims]
    bx = bx.permute(permutation)
    flat_L = bL.reshape(-1, n, n)
    flat_x = bx.reshape(-1, flat_L.size(0), n)
    M = solve_triangular(flat_L, flat_x.permute(1, 2, 0), upper=False).pow(2).sum(-2).t()
    inverse = list(range(outer))
    for i in range(bL_batch_dims):
        inverse += [outer + i, old_batch_dims + i]
    return M.reshape(bx.shape[:-1]).permute(inverse).reshape(bx_batch_shape)


def _precision_to_scale_tril(P: Tensor) -> Tensor:
    """The lower Cholesky factor of P^-1, from the factor of P with its rows and columns reversed."""
    Lf = cholesky(torch.flip(P, (-2, -1)))
    L_inv = torch.transpose(torch.flip(Lf, (-2, -1)), -2, -1)
    Id = torch.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return solve_triangular(L_inv, Id, upper=False)


class MultivariateNormal(Distribution):
    """The multivariate normal distribution of mean ``loc`` and a covariance given one of three ways."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: Tensor,
        covariance_matrix: Tensor | None = None,
        precision_matrix: Tensor | None = None,
        scale_tril: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = {"covariance_matrix": covariance_matrix, "precision_matrix": precision_matrix,
                 "scale_tril": scale_tril}
        given = {k: v for k, v in given.items() if v is not None}
        if len(given) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."
            )
        ((name, matrix),) = given.items()
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(
                f"{what} must be at least two-dimensional, with optional leading batch dimensions"
            )
        batch_shape = _broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        batch = Size(batch_shape)
        matrix_shape = batch + self.event_shape + self.event_shape
        params = {k: self.__dict__[k].expand(matrix_shape) for k in _MATRICES if k in self.__dict__}
        params["loc"] = self.loc.expand(batch + self.event_shape)
        params["_unbroadcasted_scale_tril"] = self._unbroadcasted_scale_tril
        return self._expanded(MultivariateNormal, batch, params, _instance)

    def _matrix_shape(self) -> Size:
        return Size(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return torch.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        return torch.cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self) -> Tensor:
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
