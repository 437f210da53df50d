"""torch.optim for impl: Optimizer, SGD, Adam, AdamW."""

from impl.optim.adam import Adam, AdamW
from impl.optim.optimizer import Optimizer
from impl.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
