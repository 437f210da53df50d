"""torch.nn.modules: the Module base class and the layers built on it."""

from impl.nn.modules.activation import LeakyReLU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh, Threshold
from impl.nn.modules.activation_more import (
    ELU,
    GELU,
    Hardtanh,
    LogSigmoid,
    Mish,
    ReLU6,
    SiLU,
    Softplus,
    Softsign,
)
from impl.nn.modules.container import ModuleDict, ModuleList, Sequential
from impl.nn.modules.conv import Conv2d
from impl.nn.modules.dropout import (
    AlphaDropout,
    Dropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    FeatureAlphaDropout,
    Flatten,
    Unflatten,
)
from impl.nn.modules.lazy import LazyConv2d, LazyLinear
from impl.nn.modules.linear import Identity, Linear
from impl.nn.modules.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
)
from impl.nn.modules.module import Module
from impl.nn.modules.normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from impl.nn.modules.pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
)
from impl.nn.modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from impl.nn.modules.sparse import Embedding

__all__ = [
    "Module",
    "Linear",
    "LazyLinear",
    "LazyConv2d",
    "Identity",
    "Conv2d",
    "ReLU",
    "LeakyReLU",
    "Threshold",
    "Sigmoid",
    "Tanh",
    "Softmax",
    "LogSoftmax",
    "GELU",
    "SiLU",
    "Mish",
    "ELU",
    "Softplus",
    "Hardtanh",
    "ReLU6",
    "LogSigmoid",
    "Softsign",
    "Embedding",
    "RNNBase",
    "RNN",
    "LSTM",
    "GRU",
    "RNNCellBase",
    "RNNCell",
    "LSTMCell",
    "GRUCell",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "AlphaDropout",
    "FeatureAlphaDropout",
    "Flatten",
    "Unflatten",
    "MaxPool1d",
    "MaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveMaxPool2d",
    "BatchNorm1d",
    "BatchNorm2d",
    "LayerNorm",
    "GroupNorm",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "MSELoss",
    "HuberLoss",
    "L1Loss",
    "NLLLoss",
    "CrossEntropyLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
]
