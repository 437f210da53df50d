"""torch.optim for impl: Optimizer, SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam,
RAdam, Rprop, ASGD, LBFGS and the learning-rate schedulers of ``lr_scheduler``."""

from impl.optim import lr_scheduler
from impl.optim.adam import Adam, AdamW
from impl.optim.adam_variants import Adamax, NAdam, RAdam
from impl.optim.adaptive import Adadelta, Adagrad, RMSprop
from impl.optim.lbfgs import LBFGS
from impl.optim.optimizer import Optimizer
from impl.optim.sgd import SGD
from impl.optim.sign_and_average import ASGD, Rprop

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "Rprop", "ASGD", "LBFGS",
           "lr_scheduler"]
