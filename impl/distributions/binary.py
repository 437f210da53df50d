"""What the distributions of a success probability (Bernoulli, Geometric, NegativeBinomial) share: ``probs``
or ``logits`` given, the other derived on demand."""

from __future__ import annotations

from typing import Any

from impl._tensor import Tensor
from impl.distributions.utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["BinaryProbs", "one_given"]


def one_given(probs: Any, logits: Any) -> None:
    """torch's error unless exactly one of ``probs`` and ``logits`` is given."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class BinaryProbs:
    """A mixin: ``probs`` and ``logits`` (sigmoid and logit of each other), one given."""

    def _expanded_probs(self, batch_shape: Any) -> dict[str, Any]:
        """The given parameter(s) expanded to ``batch_shape``, under their names."""
        return {k: self.__dict__[k].expand(batch_shape) for k in ("probs", "logits") if k in self.__dict__}

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)
