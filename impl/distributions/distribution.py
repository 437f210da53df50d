"""torch.distributions.Distribution: the base of every distribution (shapes, argument and sample
validation with torch's ValueErrors, sample through rsample without grad, the printed form)."""

from __future__ import annotations

import warnings
from typing import Any

from impl import _grad_mode
from impl._size import Size
from impl._tensor import Tensor
from impl.distributions import constraints
from impl.distributions.utils import EMPTY, NUMBERS, broadcast_all, lazy_property

__all__ = ["Distribution"]


def _all_true(valid: Any) -> bool:
    return bool(valid.all())


class Distribution:
    """A probability distribution over events of ``event_shape``, batched over ``batch_shape``."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions built without validate_args."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = EMPTY, event_shape: Any = EMPTY,
                 validate_args: bool | None = None) -> None:
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self) -> None:
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(
                f"{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = {{}}` "
                "or initialize the distribution with `validate_args=False` to turn off validation.",
                stacklevel=3,
            )
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                continue  # a parameter derived on demand (logits of a probs-built Bernoulli)
            value = getattr(self, param)
            if not _all_true(constraint.check(value)):
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                    f"but found invalid values:\n{value}"
                )

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        raise NotImplementedError

    @property
    def support(self) -> constraints.Constraint | None:
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        with _grad_mode.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        raise NotImplementedError

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def _extended_shape(self, sample_shape: Any = EMPTY) -> Size:
        """sample_shape + batch_shape + event_shape."""
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value: Any) -> None:
        """torch's checks of a value to score: a Tensor, its event dims, broadcastable, in the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = len(value.size()) - len(self._event_shape)
        if value.size()[start:] != self._event_shape:
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.size()} vs {self._event_shape}."
            )
        actual, expected = value.size(), Size(self._batch_shape + self._event_shape)
        for i, j in zip(reversed(actual), reversed(expected), strict=False):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: {actual} vs {expected}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable sample validation. Please "
                "initialize the distribution with `validate_args=False` to turn off validation.",
                stacklevel=3,
            )
            return
        if not _all_true(support.check(value)):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) of the distribution {self!r}, "
                f"but found invalid values:\n{value}"
            )

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom __init__ "
                "method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def _init_params(self, names: tuple[str, ...], values: tuple, validate_args: bool | None) -> None:
        """Parameters (tensors or numbers) broadcast together and set under ``names``; the batch
        shape is theirs, or empty when all are numbers."""
        tensors = broadcast_all(*values)
        for name, tensor in zip(names, tensors, strict=True):
            setattr(self, name, tensor)
        scalar = all(isinstance(v, NUMBERS) for v in values)
        Distribution.__init__(self, EMPTY if scalar else tensors[0].size(), validate_args=validate_args)

    def _expand_params(self, cls: type, names: tuple[str, ...], batch_shape: Any, _instance: Any) -> Any:
        """expand() of a distribution whose parameters ``names`` each have its batch shape."""
        params = {name: getattr(self, name).expand(batch_shape) for name in names}
        return self._expanded(cls, batch_shape, params, _instance)

    def _expanded(self, cls: type, batch_shape: Any, params: dict[str, Any], _instance: Any = None,
                  event_shape: Any = None) -> Any:
        """A new ``cls`` (or ``_instance``) over ``batch_shape`` holding ``params`` (already expanded),
        unvalidated, validating later samples as this one does."""
        new = self._get_checked_instance(cls, _instance)
        new.__dict__.update(params)
        shape = Size(batch_shape)
        Distribution.__init__(new, shape, self._event_shape if event_shape is None else event_shape,
                              validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self) -> str:
        shown = []
        for p in self.arg_constraints:
            if p in self.__dict__:
                v = self.__dict__[p]
                shown.append(f"{p}: {v if v.numel() == 1 else v.size()}")
        return f"{type(self).__name__}({', '.join(shown)})"
