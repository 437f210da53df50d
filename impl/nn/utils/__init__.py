"""torch.nn.utils' subset impl has: gradient clipping, parameters as one vector, and rnn's
padding and packing of sequences."""

from impl.nn.utils import rnn as rnn
from impl.nn.utils.clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_
from impl.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "parameters_to_vector",
    "vector_to_parameters",
]
