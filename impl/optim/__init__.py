"""torch.optim for impl: Optimizer, SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam,
RAdam, and the learning-rate schedulers of ``lr_scheduler``."""

from impl.optim import lr_scheduler
from impl.optim.adam import Adam, AdamW
from impl.optim.adam_variants import Adamax, NAdam, RAdam
from impl.optim.adaptive import Adadelta, Adagrad, RMSprop
from impl.optim.optimizer import Optimizer
from impl.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "lr_scheduler"]
