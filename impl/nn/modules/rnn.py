"""RNN, LSTM, GRU and their cells, as torch.nn.modules.rnn builds, checks, initialises and prints
them; the computation is impl.nn._rnn's (ATen's RNN.cpp)."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from impl import _creation
from impl._tensor import Tensor
from impl.nn import _rnn, init
from impl.nn.modules.module import Module
from impl.nn.parameter import Parameter
from impl.nn.utils.rnn import PackedSequence

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _check_type(name: str, value: Any, kind: type) -> None:
    if not isinstance(value, kind):
        raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")


class RNNBase(Module):
    """The parameters of every layer and direction (``weight_ih_l0``, ``weight_hh_l0_reverse``,
    ...), registered in torch's order and drawn from uniform(-1/sqrt(hidden_size), ...) in it."""

    def __init__(
        self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
        batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
        device: Any = None, dtype: Any = None,
    ) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an element "
                "being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                stacklevel=3,
            )
        _check_type("bias", bias, bool)
        _check_type("batch_first", batch_first, bool)
        _check_type("input_size", input_size, int)
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        _check_type("hidden_size", hidden_size, int)
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = {"weight_ih": (gate_size, layer_input_size),
                          "weight_hh": (gate_size, real_hidden_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = []
                for name, shape in shapes.items():
                    names.append(f"{name}_l{layer}{suffix}")
                    setattr(self, names[-1], Parameter(_creation.empty(shape, device=device, dtype=dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Nothing to do on CPU (torch's is for cuDNN)."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input: Tensor, batch_sizes: Any = None) -> None:
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype}). Convert "
                f"input: input.to({weight_dtype}), or convert model: model.to({input.dtype})"
            )
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                "input.size(-1) must be equal to input_size. "
                f"Expected {self.input_size}, got {input.size(-1)}"
            )

    def _mini_batch(self, input: Tensor, batch_sizes: Any) -> int:
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return input.size(0) if self.batch_first else input.size(1)

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Any = None) -> tuple[int, int, int]:
        mini_batch = self._mini_batch(input, batch_sizes)
        directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * directions, mini_batch, size)

    def check_hidden_size(
        self, hx: Tensor, expected_hidden_size: tuple, msg: str = "Expected hidden size {}, got {}"
    ) -> None:
        if hx.size() != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes: Any = None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        """The hidden state's batch reordered by ``permutation`` (a PackedSequence's sorting)."""
        if permutation is None:
            return hx
        if isinstance(hx, tuple):
            return tuple(h.index_select(1, permutation) for h in hx)
        return hx.index_select(1, permutation)

    def _packed_zeros(self, data: Tensor, batch_sizes: Tensor, size: int) -> Tensor:
        shape = (self.num_layers * (2 if self.bidirectional else 1), int(batch_sizes[0]), size)
        return _creation.zeros(shape, dtype=data.dtype, device=data.device)

    def _batched(self, name: str, input: Tensor) -> tuple[Tensor, bool, int]:
        """The input with a batch dim (unbatched 2-D input unsqueezed), whether it had one, the dim."""
        if input.dim() not in (2, 3):
            tensor = " tensor" if name == "RNN" else ""
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tensor} instead")
        batch_dim = 0 if self.batch_first else 1
        return (input if input.dim() == 3 else input.unsqueeze(batch_dim)), input.dim() == 3, batch_dim

    def _zeros(self, input: Tensor, size: int) -> Tensor:
        batch = input.size(0) if self.batch_first else input.size(1)
        directions = 2 if self.bidirectional else 1
        shape = (self.num_layers * directions, batch, size)
        return _creation.zeros(shape, dtype=input.dtype, device=input.device)

    def _one_hidden(self, name: str, cell: Any, input: Tensor, hx: Tensor | None) -> tuple[Tensor, Tensor]:
        """RNN's and GRU's forward: one hidden state (zeros unless given)."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            hx = self._packed_zeros(data, batch_sizes, self.hidden_size) if hx is None else \
                self.permute_hidden(hx, sorted_indices)
            self.check_forward_args(data, hx, batch_sizes)
            output, hidden = _rnn.rnn(cell, data, hx, self._flat_weights, self.bias, self.num_layers,
                                      self.dropout, self.training, self.bidirectional, False,
                                      batch_sizes.tolist())
            packed = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            return packed, self.permute_hidden(hidden, unsorted_indices)
        input, batched, batch_dim = self._batched(name, input)
        if hx is not None:
            want = 3 if batched else 2
            if hx.dim() != want:
                kind = "batched 3-D" if batched else "unbatched 2-D"
                raise RuntimeError(
                    f"For {kind} input, hx should also be {want}-D but got {hx.dim()}-D tensor"
                )
            hx = hx if batched else hx.unsqueeze(1)
        else:
            hx = self._zeros(input, self.hidden_size)
        self.check_forward_args(input, hx)
        output, hidden = _rnn.rnn(cell, input, hx, self._flat_weights, self.bias, self.num_layers,
                                  self.dropout, self.training, self.bidirectional, self.batch_first)
        if not batched:
            output, hidden = output.squeeze(batch_dim), hidden.squeeze(1)
        return output, hidden

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t @ W_ih.T + b_ih + h_{t-1} @ W_hh.T + b_hh)`` (or relu)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        cell = _rnn.tanh_cell if self.mode == "RNN_TANH" else _rnn.relu_cell
        return self._one_hidden("RNN", cell, input, hx)


class GRU(RNNBase):
    """Gated recurrent unit layers (gates r, z, n)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        return self._one_hidden("GRU", _rnn.gru_cell, input, hx)


class LSTM(RNNBase):
    """Long short-term memory layers (gates i, f, g, o), with projections if proj_size > 0."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Any = None) -> tuple[int, int, int]:
        mini_batch = self._mini_batch(input, batch_sizes)
        return (self.num_layers * (2 if self.bidirectional else 1), mini_batch, self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden: Any, batch_sizes: Any = None) -> None:  # type: ignore[override]
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def forward(self, input: Tensor, hx: tuple | None = None) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        if isinstance(input, PackedSequence):  # (torch checks no shapes here: at::lstm does)
            data, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is None:
                real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
                hx = (self._packed_zeros(data, batch_sizes, real_hidden_size),
                      self._packed_zeros(data, batch_sizes, self.hidden_size))
            else:
                hx = self.permute_hidden(tuple(hx), sorted_indices)
            output, h, c = _rnn.lstm(data, hx, self._flat_weights, self.bias, self.num_layers, self.dropout,
                                     self.training, self.bidirectional, False, batch_sizes.tolist())
            packed = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            return packed, self.permute_hidden((h, c), unsorted_indices)
        input, batched, batch_dim = self._batched("LSTM", input)
        if hx is None:
            real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
            hx = (self._zeros(input, real_hidden_size), self._zeros(input, self.hidden_size))
        else:
            want = 3 if batched else 2
            if hx[0].dim() != want or hx[1].dim() != want:
                kind = "batched 3-D" if batched else "unbatched 2-D"
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                   f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            if not batched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_forward_args(input, hx)
        output, h, c = _rnn.lstm(input, hx, self._flat_weights, self.bias, self.num_layers, self.dropout,
                                 self.training, self.bidirectional, self.batch_first)
        if not batched:
            output, h, c = output.squeeze(batch_dim), h.squeeze(1), c.squeeze(1)
        return output, (h, c)


class RNNCellBase(Module):
    """weight_ih, weight_hh (and bias_ih, bias_hh) of ``num_chunks`` gates."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gates = num_chunks * hidden_size
        self.weight_ih = Parameter(_creation.empty((gates, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(_creation.empty((gates, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_creation.empty(gates, device=device, dtype=dtype))
            self.bias_hh = Parameter(_creation.empty(gates, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    reset_parameters = RNNBase.reset_parameters

    def _params(self) -> tuple:
        return (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, None)

    def _check(self, input: Tensor, hx: Tensor, label: int) -> None:
        """RNN.cpp's check_rnn_cell_forward_input / _hidden."""
        if input.shape[1] != self.weight_ih.shape[1]:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.shape[1]} expected {self.weight_ih.shape[1]}"
            )
        if input.shape[0] != hx.shape[0]:
            raise RuntimeError(
                f"Input batch size {input.shape[0]} doesn't match hidden{label} batch size {hx.shape[0]}"
            )
        if hx.shape[1] != self.weight_hh.shape[1]:
            raise RuntimeError(
                f"hidden{label} has inconsistent hidden_size: got {hx.shape[1]}, "
                f"expected {self.weight_hh.shape[1]}"
            )

    def _one_hidden(self, name: str, cell: Any, input: Tensor, hx: Tensor | None) -> Tensor:
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        batched = input.dim() == 2
        input = input if batched else input.unsqueeze(0)
        if hx is None:
            hx = _creation.zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
        elif not batched:
            hx = hx.unsqueeze(0)
        self._check(input, hx, 0)
        out = cell(input, hx, self._params())
        return out if batched else out.squeeze(0)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN (tanh or relu)."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
        device: Any = None, dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        cell = {"tanh": _rnn.tanh_cell, "relu": _rnn.relu_cell}.get(self.nonlinearity)
        out = self._one_hidden("RNNCell", cell or (lambda x, h, p: x), input, hx)
        if cell is None:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return out


class GRUCell(RNNCellBase):
    """One step of a GRU."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._one_hidden("GRUCell", _rnn.gru_cell, input, hx)


class LSTMCell(RNNCellBase):
    """One step of an LSTM: returns (h_1, c_1)."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple | None = None) -> tuple[Tensor, Tensor]:
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(
                        f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead"
                    )
        batched = input.dim() == 2
        input = input if batched else input.unsqueeze(0)
        if hx is None:
            zeros = _creation.zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
            hx = (zeros, zeros)
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        self._check(input, hx[0], 0)
        self._check(input, hx[1], 1)
        h, c = _rnn.lstm_cell(input, hx, self._params())
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))
