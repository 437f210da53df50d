"""The program model: a torch program as plain data (a list of steps).

A ``Program`` is what the oracle runs on the reference and on the backend under test. Being data,
it serialises exactly (JSON), shrinks well under hypothesis, and renders as a torch script
(``oracle.render``). Tensors are named: a step that makes a tensor binds a name, later steps refer
to it by that name. Hooks are named too, so their calls can be told apart in a trace and a hook can
be removed through its handle.

Vocabulary (one dataclass per step kind, ``kind`` is the JSON discriminator):

``leaf``            make a tensor with ``torch.tensor(data, dtype=, requires_grad=)``
``op``              apply an op of ``OPS`` (a torch function or Tensor method) to tensors/scalars
``detach``          ``out = src.detach()``
``retain_grad``     ``t.retain_grad()``
``requires_grad``   ``t.requires_grad_(flag)``
``register_hook``   a hook of one of ``HOOK_KINDS`` with an ``Action`` (what the hook returns)
``remove_hook``     ``handle.remove()``
``backward``        ``t.backward(gradient=, retain_graph=, create_graph=, inputs=)``
``grad``            ``torch.autograd.grad(...)`` with all its options; results bound to names
``zero_grad``       ``t.grad = None`` or ``t.grad.zero_()``
``observe``         record value, flags, ``grad_fn`` name and ``.grad`` of a tensor
``observe_graph``   record the autograd graph behind a tensor (node names, ``next_functions``)
``module``          construct an ``nn`` module with given parameter values; parameters bound as
                    ``<module>.<param>`` tensors
``call_module``     ``out = module(*inputs, **kwargs)``
``module_hook``     a module hook of one of ``MODULE_HOOK_KINDS`` with an ``Action`` and its flags
``global_module_hook``  a global module hook (``register_module_<kind>_hook``), removed at the end
``state_dict_hook``  a state-dict hook of one of ``state_dict_hooks.KINDS`` with its action
``state_dict``      ``sd = module.state_dict(prefix=, keep_vars=)``: keys, metadata and entries recorded
``load_state_dict``  ``module.load_state_dict(sd, strict=, assign=)``: the key lists it returns recorded
``module_mode``     ``module.train()`` / ``module.eval()``
``module_zero_grad``  ``module.zero_grad(set_to_none=)``
``module_requires_grad``  ``module.requires_grad_(flag)``: (un)freeze a module's parameters
``observe_module``  record parameters, state_dict keys and training flags of a module
``optimizer``       ``torch.optim.<cls>(params, **kwargs)`` (or ``module.parameters()``);
                    ``optimizer_step``, ``optimizer_zero_grad``
``scheduler``       ``torch.optim.lr_scheduler.<cls>(optimizer, **kwargs)``; ``scheduler_step``
                    (with a metric, or an epoch); ``observe_scheduler`` records its learning rates
``assign_attr``     ``setattr(module, attr, value)``: tie a parameter, share a submodule
``observe_layout``  record ``stride()``, ``storage_offset()``, ``is_contiguous()``, ``_version``
``numpy_array``     make a numpy array; ``numpy_add`` writes into it; ``observe_array`` records it
``grad_mode``       enter ``torch.<mode>(flag)`` (no_grad, enable_grad, set_grad_enabled,
                    inference_mode); ``exit_mode`` leaves it; both record the grad mode
``decorated_op``    an op called through a function (or a generator) decorated with a grad mode
``function``        define a custom ``torch.autograd.Function`` from op lists;
                    ``apply_function`` applies it
``functional``      ``torch.autograd.functional.<api>(f, inputs, v, ...)`` of a function given as an op
                    list; every tensor of the result observed
``saved_hooks``     enter a saved-tensor hooks context (``exit_mode`` leaves it); ``observe_saved``
                    records what a grad_fn saved (``_saved_*``)
``multi_grad_hook``  ``torch.autograd.graph.register_multi_grad_hook(tensors, fn, mode=)``, ``fn`` logging
``gradcheck``       ``torch.autograd.gradcheck``/``gradgradcheck`` of a function given as an op list (a
                    custom Function applied first, maybe); what it returns recorded
``call_grad_fn``    ``out = t.grad_fn(*grads)``: call a node directly; what it returns observed
``del_attr``        ``del t.<attr>`` (one of ``DELETABLE``)
``manual_seed``     ``torch.manual_seed(seed)``: the random draws after it (dropout masks, a lazy
                    module's first weights) are the seed's
``observe_repr``    record ``repr(module)``, its printed form (``print(model)``)
``dual_level``      enter ``torch.autograd.forward_ad.dual_level()`` (``exit_mode`` leaves it);
                    ``make_dual`` makes a dual tensor, ``unpack_dual`` records its tangent
``autocast``        enter ``torch.autocast(...)`` (``exit_autocast`` leaves it); both record its state
``observe_plain``   record a result that is no tensor (a bool, a string, a dtype) as it prints
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from oracle import state_dict_hooks

DTYPES = ("float16", "bfloat16", "float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool")


@dataclass(frozen=True)
class OpSpec:
    """How an op of the op table is called: as ``torch.<name>(...)`` or as ``tensor.<name>(...)``."""

    name: str
    style: str  # "function" or "method"
    inplace: bool = False


def _table(names: str, style: str, inplace: bool = False) -> dict[str, OpSpec]:
    return {n: OpSpec(n, style, inplace) for n in names.split()}


# The op table: every op a Program may apply. Functions take their tensor arguments positionally;
# methods are called on their first argument.
OPS: dict[str, OpSpec] = {
    **_table("add sub mul div pow neg exp log sin cos tanh sigmoid relu sum mean matmul mm", "function"),
    **_table("clone abs sqrt square prod amax", "function"),
    **_table("view reshape transpose t unsqueeze squeeze expand contiguous", "method"),
    **_table("add_ sub_ mul_ div_ neg_ exp_ zero_ sigmoid_ relu_ clamp_", "method", inplace=True),
}

# -- op, tensor, grad-mode families (issue 5) ---------------------------------------------------
# More ops: torch functions, Tensor methods (incl. Python operators as their dunder methods, e.g.
# ``x.__rsub__(2.0)`` for ``2.0 - x``, and indexing as ``__getitem__``/``__setitem__``), in-place
# forms. ``max``/``min`` with a dim return (values, indices): read them with ``__getitem__``.
OPS.update(
    {
        **_table("maximum minimum where clamp softmax log_softmax var std max min", "function"),
        **_table("bmm addmm trace cat stack gather index_select masked_fill", "function"),
        **_table("from_numpy tensor flatten permute", "function"),
        **_table("cumsum cumprod flip sgn", "function"),
        **_table("sort argsort msort topk kthvalue median searchsorted bucketize", "function"),
        **_table("logsumexp nansum nanmean all any count_nonzero cummax cummin logcumsumexp", "function"),
        **_table("var_mean std_mean aminmax", "function"),
        **_table("__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__", "method"),
        **_table("__pow__ __rpow__ __matmul__ __neg__ __getitem__ narrow select to numpy", "method"),
        **_table("unfold", "method"),  # (Tensor.unfold: OPS-006, issue 22)
        **_table("fill_ copy_ masked_fill_ __setitem__", "method", inplace=True),
        **_table("tan asin acos atan sinh cosh asinh acosh atanh log1p expm1 log2 log10 exp2", "function"),
        **_table("rsqrt frac sinc logit deg2rad rad2deg nan_to_num isinf isposinf isneginf", "function"),
        **_table("signbit arcsin fix positive floor ceil round trunc sign reciprocal", "function"),
        **_table("tan_ asin_ acos_ atan_ sinh_ cosh_ asinh_ acosh_ atanh_ log1p_ expm1_", "method", True),
        **_table("log2_ log10_ exp2_ rsqrt_ frac_ sinc_ logit_ deg2rad_ rad2deg_", "method", True),
        **_table("nan_to_num_ sin_ cos_ log_ floor_ ceil_ round_ trunc_ sign_ reciprocal_", "method", True),
        **_table("atan2 arctan2 hypot fmod remainder fmax fmin copysign xlogy", "function"),
        **_table("logaddexp logaddexp2", "function"),
        **_table("__mod__ __rmod__", "method"),
        **_table("atan2_ hypot_ fmod_ remainder_ copysign_ xlogy_ __imod__", "method", inplace=True),
        **_table("tril triu roll diagonal movedim moveaxis swapaxes swapdims broadcast_to", "function"),
        **_table("flipud fliplr ravel unflatten tile", "function"),
        **_table("repeat", "method"),
        **_table("tril_ triu_", "method", inplace=True),
        **_table("diag diag_embed rot90 broadcast_tensors hstack vstack row_stack dstack", "function"),
        **_table("column_stack tensor_split hsplit vsplit dsplit split chunk unbind", "function"),
        **_table("arccos arctan arcsinh arccosh arctanh", "function"),
        **_table("arcsin_ arccos_ arctan_ arcsinh_ arccosh_ arctanh_ fix_", "method", True),
        **_table("sgn_ square_ sqrt_ tanh_ abs_ pow_", "method", True),
        **_table("lerp addcmul addcdiv float_power heaviside", "function"),
        **_table("lerp_ addcmul_ addcdiv_ float_power_ heaviside_", "method", inplace=True),
        **_table("scatter scatter_add", "function"),
        **_table("scatter_ scatter_add_", "method", inplace=True),
        **_table("index_add index_copy", "function"),
        **_table("index_add_ index_copy_", "method", inplace=True),
        **_table("index_fill masked_scatter select_scatter slice_scatter diagonal_scatter", "function"),
        **_table("index_fill_ masked_scatter_ fill_diagonal_", "method", inplace=True),
    }
)
# the norms (conformance/test_ops.py, OPS-003): torch.norm and torch.linalg's (a dotted name is an
# attribute path from torch)
OPS.update(_table("norm linalg.vector_norm linalg.matrix_norm linalg.norm", "function"))
# distances and similarities (conformance/test_ops.py, OPS-003)
OPS.update(_table("cdist cosine_similarity pairwise_distance", "function"))
# gradient clipping (conformance/test_optim.py, OPT-006): in place on the .grad of the tensors given
OPS.update(_table("nn.utils.clip_grad_norm_ nn.utils.clip_grad_value_", "function"))
# padding variable-length sequences (conformance/test_modules.py, MOD-011)
OPS.update(_table("nn.utils.rnn.pad_sequence", "function"))
# bilinear layers' functions (conformance/test_modules.py, MOD-001)
OPS.update(_table("bilinear nn.functional.bilinear", "function"))
# packing them (conformance/test_modules.py, MOD-011): a PackedSequence is read with __getitem__
OPS.update(_table("nn.utils.rnn.pack_padded_sequence nn.utils.rnn.pad_packed_sequence", "function"))
# the error function (conformance/test_ops.py; GELU's exact form computes with it)
OPS.update({**_table("erf erfc", "function"), **_table("erf_ erfc_", "method", inplace=True)})
# the gamma family, erfinv, i0 and torch.special's own functions (conformance/test_ops.py, OPS-001)
OPS.update(_table("lgamma digamma polygamma mvlgamma erfinv i0", "function"))
OPS.update(_table("special.i1 special.ndtr", "function"))
# the regularized incomplete gamma functions (conformance/test_ops.py, OPS-002)
OPS.update(_table("igamma igammac special.gammainc special.gammaincc", "function"))
OPS.update(_table("lgamma_ digamma_ polygamma_ mvlgamma_ erfinv_ i0_", "method", inplace=True))
# the dropout functions (conformance/test_modules.py, MOD-012): torch's native forms and F's
OPS.update(_table("dropout feature_dropout alpha_dropout feature_alpha_dropout", "function"))
OPS.update(_table("dropout_ feature_dropout_ alpha_dropout_ feature_alpha_dropout_", "function", True))
OPS.update(_table(" ".join(f"nn.functional.{f}" for f in (
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")), "function"))
OPS.update(_table("rrelu nn.functional.rrelu", "function"))  # (RReLU's forms, MOD-012, issue 22)
# attention (conformance/test_modules.py, MOD-015)
OPS.update(_table("nn.functional.scaled_dot_product_attention", "function"))
# one_hot and take (conformance/test_ops.py, OPS-005)
OPS.update(_table("nn.functional.one_hot take", "function"))
# the legacy typed constructors and the new_* methods (conformance/test_tensors.py, TEN-001)
OPS.update(_table("FloatTensor DoubleTensor HalfTensor BFloat16Tensor LongTensor IntTensor", "function"))
OPS.update(_table("ShortTensor CharTensor ByteTensor BoolTensor", "function"))
OPS.update(_table("new_tensor new_zeros new_ones new_full", "method"))
# a custom Function's jvp returning a view of a tangent (conformance/test_forward_ad.py, FWAD-001)
OPS.update(_table("view_as", "method"))
# Tensor methods called through the class, self first (API-005: the method parser's refusals)
OPS.update(_table("Tensor.add Tensor.mul_ Tensor.addcmul Tensor.eq Tensor.transpose", "function"))
OPS.update(_table("Tensor.tril_ Tensor.masked_fill Tensor.sub_ Tensor.clamp_min Tensor.fmod", "function"))
# the nn functions whose jvp formulas FWAD-001 checks (conformance/test_forward_ad.py)
OPS.update(_table(" ".join(f"nn.functional.{f}" for f in (
    "gelu", "softplus", "elu", "silu", "mish", "hardtanh", "logsigmoid", "leaky_relu", "layer_norm",
    "nll_loss", "cross_entropy", "mse_loss")), "function"))
OPS.update(_table("split", "method"))
# the spatial functions of issue 22, the deprecated upsample* with their warnings (MOD-020)
OPS.update(_table(" ".join(f"nn.functional.{f}" for f in (
    "fold", "unfold", "upsample", "upsample_nearest", "upsample_bilinear", "affine_grid", "grid_sample")),
    "function"))
# the in-place view methods (conformance/test_tensors.py, TEN-006)
OPS.update(_table("t_ transpose_ swapdims_ swapaxes_ squeeze_ unsqueeze_ as_strided_", "method", True))
# more functions called with out= (conformance/test_api.py, API-002)
OPS.update(_table("amin argmax bitwise_and bitwise_not clip dot eq floor_divide logical_and", "function"))
OPS.update(_table("logical_not lt masked_select mv outer", "function"))
OPS.update(_table("addmv addr addbmm inner vdot ger adjoint chain_matmul", "function"))  # (OPS-004, issue 22)
# comparisons and their operators (conformance/test_ops.py, OPS-010)
OPS.update(_table("ne le gt ge greater greater_equal less less_equal not_equal", "function"))
OPS.update(_table("__eq__ __ne__ __lt__ __le__ __gt__ __ge__", "method"))
# structure and product ops (conformance/test_ops.py, OPS-012)
OPS.update(_table("kron tensordot take_along_dim diagflat cartesian_prod trapezoid trapz", "function"))
OPS.update(_table("cumulative_trapezoid linalg.vecdot linalg.diagonal cross linalg.cross dist", "function"))
OPS.update(_table("gcd lcm bitwise_left_shift bitwise_right_shift cov corrcoef", "function"))
OPS.update(_table("vander linalg.vander linalg.multi_dot block_diag combinations", "function"))
OPS.update(_table("__lshift__ __rshift__ __rlshift__ __rrshift__", "method"))
OPS.update(_table("gcd_ lcm_ bitwise_left_shift_ bitwise_right_shift_", "method", True))
OPS.update(_table("frexp ldexp nextafter index_put put", "function"))
OPS.update(_table("ldexp_ nextafter_ index_put_ put_", "method", True))
OPS.update(_table("__ilshift__ __irshift__", "method", True))
OPS.update(_table("broadcast_shapes is_nonzero unravel_index renorm", "function"))


@dataclass(frozen=True)
class DType:
    """A torch dtype as an op argument (``torch.<name>``). JSON: ``{"torch_dtype": name}``."""

    name: str

    def __post_init__(self) -> None:
        if self.name not in DTYPES:
            raise ValueError(f"unknown dtype {self.name!r}; known: {DTYPES}")


# Grad modes a ``grad_mode`` step enters: the context managers of torch, with their flag argument.
GRAD_MODES = ("no_grad", "enable_grad", "set_grad_enabled", "inference_mode")
# numpy dtypes a ``numpy_array`` step may make.
NUMPY_DTYPES = ("float16", "float32", "float64", "int32", "int64", "bool")


# Tensor-level hooks: where ``register_hook``-style hooks attach.
#   tensor                 t.register_hook(fn(grad))
#   grad_fn                t.grad_fn.register_hook(fn(grad_inputs, grad_outputs))
#   grad_fn_pre            t.grad_fn.register_prehook(fn(grad_outputs))
#   post_accumulate_grad   t.register_post_accumulate_grad_hook(fn(tensor))
HOOK_KINDS = ("tensor", "grad_fn", "grad_fn_pre", "post_accumulate_grad")

# Module hooks:
#   forward_pre            m.register_forward_pre_hook(fn(module, args))
#   forward                m.register_forward_hook(fn(module, args, output))
#   full_backward_pre      m.register_full_backward_pre_hook(fn(module, grad_output))
#   full_backward          m.register_full_backward_hook(fn(module, grad_input, grad_output))
#   backward               m.register_backward_hook(fn(module, grad_input, grad_output)) (legacy)
MODULE_HOOK_KINDS = ("forward_pre", "forward", "full_backward_pre", "full_backward", "backward")

# What a hook does with what it received (see ``Action``).
ACTIONS = ("log", "scale", "replace", "wrong_shape", "wrong_dtype", "wrong_count")

# nn modules a Program may construct, with the parameter names they own (in registration order).
MODULES: dict[str, tuple[str, ...]] = {
    "Linear": ("weight", "bias"),
    "ReLU": (),
    "Sigmoid": (),
    "Tanh": (),
    # -- module families (module trees, layers, losses): see the section "module trees" below --
    "Conv2d": ("weight", "bias"),
    **{n: ("weight", "bias") for n in "Conv1d ConvTranspose1d ConvTranspose2d".split()},
    **{n: ("weight", "bias") for n in "Conv3d ConvTranspose3d".split()},  # MOD-006 (issue 22)
    **{n: () for n in "CosineSimilarity PairwiseDistance".split()},
    **{n: () for n in "LeakyReLU Softmax LogSoftmax Flatten Identity Dropout".split()},
    **{n: () for n in "GELU SiLU Mish ELU Softplus Hardtanh ReLU6 LogSigmoid Softsign".split()},
    "Embedding": ("weight",),
    **{n: () for n in "MaxPool1d MaxPool2d AvgPool1d AvgPool2d AdaptiveAvgPool1d AdaptiveAvgPool2d".split()},
    "AdaptiveMaxPool2d": (),
    "AdaptiveMaxPool1d": (),  # (MOD-009, issue 22)
    **{n: () for n in "MaxPool3d AvgPool3d AdaptiveAvgPool3d AdaptiveMaxPool3d".split()},  # (issue 22)
    **{n: ("weight", "bias") for n in "BatchNorm1d BatchNorm2d LayerNorm GroupNorm".split()},
    # recurrent layers: their parameters follow from their options (``recurrent_parameters``)
    **{n: () for n in "RNN LSTM GRU RNNCell LSTMCell GRUCell".split()},
    **{n: () for n in "MSELoss L1Loss CrossEntropyLoss NLLLoss BCELoss BCEWithLogitsLoss".split()},
    **{n: () for n in "Sequential ModuleList ModuleDict Residual TwoBranch Stack Router Twice".split()},
    # the dropout variants and Unflatten (MOD-012, MOD-013); the lazy layers (MOD-014) own no
    # parameters a program could set: theirs are made, from the random stream, by the first call
    **{n: () for n in "Dropout1d Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout Unflatten".split()},
    **{n: () for n in "LazyLinear LazyConv2d LazyConv1d LazyBatchNorm1d LazyBatchNorm2d".split()},
    "HuberLoss": (),  # MOD-004
    "Bilinear": ("weight", "bias"),  # MOD-001
    # MultiheadAttention (MOD-016) makes its parameters from the random stream, as torch's init
    "MultiheadAttention": (),
    # the Transformer layers (MOD-017), likewise
    "TransformerEncoderLayer": (),
    "TransformerDecoderLayer": (),
    **{n: () for n in "SmoothL1Loss KLDivLoss".split()},  # MOD-004 (issue 22)
    # the margin and embedding losses of issue 22 (MOD-019)
    **{n: () for n in "CosineEmbeddingLoss MultiMarginLoss MultiLabelMarginLoss".split()},
    **{n: () for n in "MultiLabelSoftMarginLoss TripletMarginWithDistanceLoss".split()},
    # the normalisation layers of issue 22 (MOD-010)
    "RMSNorm": ("weight",),
    "LocalResponseNorm": (),
    "CrossMapLRN2d": (),
    **{n: ("weight", "bias") for n in "InstanceNorm1d InstanceNorm2d InstanceNorm3d BatchNorm3d".split()},
    "EmbeddingBag": ("weight",),  # MOD-008 (issue 22)
    # the activation layers of issue 22 (MOD-018)
    **{n: () for n in "SELU CELU Hardswish Hardsigmoid Hardshrink Softshrink Tanhshrink".split()},
    "RReLU": (),  # MOD-012 (issue 22: its slopes from the random stream)
    # the spatial layers of issue 22 (MOD-020)
    **{n: () for n in "Fold Unfold UpsamplingNearest2d UpsamplingBilinear2d ChannelShuffle".split()},
    **{n: () for n in "ZeroPad3d ConstantPad3d ReflectionPad3d ReplicationPad3d".split()},
    **{n: () for n in "CircularPad1d CircularPad2d CircularPad3d LPPool1d LPPool2d".split()},
    **{n: () for n in "MaxUnpool1d MaxUnpool2d MaxUnpool3d".split()},
}


@dataclass(frozen=True)
class Ref:
    """A reference to a named tensor, as an op argument. JSON: ``{"ref": name}``."""

    name: str


@dataclass(frozen=True)
class Action:
    """What a hook does: ``log`` returns None; ``scale`` returns grad * value; ``replace`` returns a
    tensor full of ``value``; ``wrong_shape`` returns a tensor with one extra element;
    ``wrong_dtype`` returns the gradient cast to another floating dtype; ``wrong_count`` returns one
    value too many (a tuple gets an extra None, a tensor becomes ``(tensor, None)``), which module
    hooks reject by counting. Every hook call is logged
    in the trace whatever its action. For post-accumulate-grad hooks, ``scale`` multiplies ``.grad``
    in place and returns None (the hook may not return a tensor)."""

    kind: str = "log"
    value: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in ACTIONS:
            raise ValueError(f"unknown hook action {self.kind!r}; known: {ACTIONS}")
        if (self.kind in ("scale", "replace")) != (self.value is not None):
            need = "needs" if self.value is None else "takes no"
            raise ValueError(f"hook action {self.kind!r} {need} value")


class Step:
    """Base of all steps; ``kind`` names the step in JSON."""

    kind: ClassVar[str]

    def names_read(self) -> list[str]:
        """Tensor/hook/module names this step refers to (must be bound by earlier steps)."""
        return []

    def names_bound(self) -> list[str]:
        """Names this step binds when it succeeds."""
        return []


STEP_TYPES: dict[str, type[Step]] = {}


def _step(cls: type) -> type:
    """Register a step dataclass under its ``kind``."""
    STEP_TYPES[cls.kind] = cls
    return cls


@_step
@dataclass
class Leaf(Step):
    kind: ClassVar[str] = "leaf"
    name: str
    data: Any  # a number or nested lists of numbers
    dtype: str = "float32"
    requires_grad: bool = False

    def __post_init__(self) -> None:
        if hasattr(self.data, "tolist"):  # an array: stored as the numbers it holds, so the program is JSON
            self.data = self.data.tolist()
        if self.dtype not in DTYPES:
            raise ValueError(f"unknown dtype {self.dtype!r}; known: {DTYPES}")

    def names_bound(self) -> list[str]:
        return [self.name]


@_step
@dataclass
class Op(Step):
    kind: ClassVar[str] = "op"
    out: str
    op: str
    args: list = field(default_factory=list)  # Ref, numbers, lists of ints, index tuples (slices, ...)
    kwargs: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise ValueError(f"unknown op {self.op!r}; known: {sorted(OPS)}")
        if OPS[self.op].style == "method" and not (self.args and isinstance(self.args[0], Ref)):
            raise ValueError(f"method op {self.op!r} needs a tensor as its first argument")

    def names_read(self) -> list[str]:
        return [a.name for a in _flat([*self.args, *self.kwargs.values()]) if isinstance(a, Ref)]

    def names_bound(self) -> list[str]:
        return [self.out]


def _flat(values: list) -> list:
    """The values with index tuples opened (an indexing key may hold tensors)."""
    return [v for value in values for v in (_flat(list(value)) if isinstance(value, tuple) else [value])]


@_step
@dataclass
class Detach(Step):
    kind: ClassVar[str] = "detach"
    out: str
    src: str

    def names_read(self) -> list[str]:
        return [self.src]

    def names_bound(self) -> list[str]:
        return [self.out]


@_step
@dataclass
class RetainGrad(Step):
    kind: ClassVar[str] = "retain_grad"
    tensor: str

    def names_read(self) -> list[str]:
        return [self.tensor]


@_step
@dataclass
class RequiresGrad(Step):
    kind: ClassVar[str] = "requires_grad"
    tensor: str
    requires_grad: bool = True

    def names_read(self) -> list[str]:
        return [self.tensor]


@_step
@dataclass
class RegisterHook(Step):
    kind: ClassVar[str] = "register_hook"
    hook: str  # the hook's id (its handle's name)
    target: str  # tensor name
    on: str = "tensor"  # one of HOOK_KINDS
    action: Action = field(default_factory=Action)

    def __post_init__(self) -> None:
        if self.on not in HOOK_KINDS:
            raise ValueError(f"unknown hook kind {self.on!r}; known: {HOOK_KINDS}")

    def names_read(self) -> list[str]:
        return [self.target]

    def names_bound(self) -> list[str]:
        return [self.hook]


@_step
@dataclass
class RemoveHook(Step):
    kind: ClassVar[str] = "remove_hook"
    hook: str

    def names_read(self) -> list[str]:
        return [self.hook]


@_step
@dataclass
class Backward(Step):
    kind: ClassVar[str] = "backward"
    tensor: str
    gradient: str | None = None
    retain_graph: bool | None = None
    create_graph: bool = False
    inputs: list[str] | None = None

    def names_read(self) -> list[str]:
        return [self.tensor, *([self.gradient] if self.gradient else []), *(self.inputs or [])]


@_step
@dataclass
class Grad(Step):
    kind: ClassVar[str] = "grad"
    outs: list[str]  # names bound to the returned gradients, one per input
    outputs: list[str]
    inputs: list[str]
    grad_outputs: list[str] | None = None
    retain_graph: bool | None = None
    create_graph: bool = False
    allow_unused: bool | None = None
    materialize_grads: bool = False
    only_inputs: bool = True  # deprecated in torch: passing False warns and changes nothing
    is_grads_batched: bool = False  # grad_outputs carry a leading batch dimension

    def __post_init__(self) -> None:
        if len(self.outs) != len(self.inputs):
            raise ValueError("autograd.grad step needs one result name per input")

    def names_read(self) -> list[str]:
        return [*self.outputs, *self.inputs, *(self.grad_outputs or [])]

    def names_bound(self) -> list[str]:
        return list(self.outs)


@_step
@dataclass
class ZeroGrad(Step):
    kind: ClassVar[str] = "zero_grad"
    tensor: str
    set_to_none: bool = True

    def names_read(self) -> list[str]:
        return [self.tensor]


@_step
@dataclass
class Observe(Step):
    kind: ClassVar[str] = "observe"
    tensor: str

    def names_read(self) -> list[str]:
        return [self.tensor]


@_step
@dataclass
class ObserveGraph(Step):
    kind: ClassVar[str] = "observe_graph"
    tensor: str

    def names_read(self) -> list[str]:
        return [self.tensor]


@_step
@dataclass
class Module(Step):
    """An nn module, or a whole module tree: ``children`` holds child specs (see ``module_nodes``)
    for containers and the custom classes of ``CUSTOM_MODULES``. Every node of the tree is bound
    (the root as ``name``, a child at torch path ``a.0`` as ``name_a_0``), and every parameter as
    ``<node name>.<parameter>``."""

    kind: ClassVar[str] = "module"
    name: str
    cls: str  # one of MODULES
    args: list = field(default_factory=list)  # constructor arguments (e.g. in/out features)
    params: dict = field(default_factory=dict)  # parameter name -> data (nested lists)
    # constructor keyword arguments (bias=, reduction=; a tensor, a loss's weight=, as a Ref)
    kwargs: dict = field(default_factory=dict)
    children: Any = None  # list (Sequential, ModuleList) or dict (ModuleDict, custom) of specs

    def __post_init__(self) -> None:
        nodes = module_nodes(self)
        aliases = [n.alias for n in nodes]
        if len(set(aliases)) != len(aliases):
            raise ValueError(f"module tree {self.name}: node names collide: {aliases}")

    def spec(self) -> dict:
        """The root as a child spec: ``{"cls", "args", "kwargs", "params", "children"}``."""
        return {"cls": self.cls, "args": self.args, "kwargs": self.kwargs, "params": self.params,
                "children": self.children}

    def names_read(self) -> list[str]:
        return [v.name for node in module_nodes(self) for v in node.kwargs.values() if isinstance(v, Ref)]

    def names_bound(self) -> list[str]:
        names = []
        for node in module_nodes(self):
            names += [node.alias, *(f"{node.alias}.{p}" for p in node.param_names)]
        return names


@_step
@dataclass
class CallModule(Step):
    kind: ClassVar[str] = "call_module"
    out: str
    module: str
    inputs: list[str] = field(default_factory=list)
    kwargs: dict[str, str] = field(default_factory=dict)  # keyword -> tensor name (``m(input=x)``)

    def names_read(self) -> list[str]:
        return [self.module, *self.inputs, *self.kwargs.values()]

    def names_bound(self) -> list[str]:
        return [self.out]


@_step
@dataclass
class ModuleHook(Step):
    kind: ClassVar[str] = "module_hook"
    hook: str
    module: str
    on: str = "forward"  # one of MODULE_HOOK_KINDS
    action: Action = field(default_factory=Action)
    prepend: bool = False
    with_kwargs: bool = False
    always_call: bool = False

    def __post_init__(self) -> None:
        if self.on not in MODULE_HOOK_KINDS:
            raise ValueError(f"unknown module hook kind {self.on!r}; known: {MODULE_HOOK_KINDS}")
        check_hook_flags(self.on, self.flags(), MODULE_HOOK_FLAGS)

    def flags(self) -> dict[str, bool]:
        """The registration keyword arguments that differ from their defaults."""
        return {k: True for k in ("prepend", "with_kwargs", "always_call") if getattr(self, k)}

    def names_read(self) -> list[str]:
        return [self.module]

    def names_bound(self) -> list[str]:
        return [self.hook]


# ------------------------------------------------------------------------------------------------
# Module trees, module API observations and optimisers (the module families:
# conformance/test_module_hooks.py, test_modules.py, test_optim.py)
# ------------------------------------------------------------------------------------------------

# Registration flags each module hook kind accepts (``m.register_<kind>_hook(fn, **flags)``).
MODULE_HOOK_FLAGS: dict[str, tuple[str, ...]] = {
    "forward_pre": ("prepend", "with_kwargs"),
    "forward": ("prepend", "with_kwargs", "always_call"),
    "full_backward_pre": ("prepend",),
    "full_backward": ("prepend",),
    "backward": (),
}
# The global hooks of ``torch.nn.modules.module`` (``register_module_<kind>_hook``) and their flags.
GLOBAL_HOOK_FLAGS: dict[str, tuple[str, ...]] = {
    "forward_pre": (),
    "forward": ("with_kwargs", "always_call"),
    "full_backward_pre": (),
    "full_backward": (),
}


def check_hook_flags(on: str, flags: dict[str, bool], accepted: dict[str, tuple[str, ...]]) -> None:
    """Refuse registration flags that torch's registration function for ``on`` does not take."""
    wrong = sorted(set(flags) - set(accepted[on]))
    if wrong:
        raise ValueError(f"a {on} module hook takes no {wrong}")


# How a container or custom module holds its children: "list" (constructed from a list of
# modules), "dict" (from a dict name -> module), or the attribute names a custom class takes
# positionally in its constructor.
CHILDREN: dict[str, str | tuple[str, ...]] = {
    "Sequential": "list",
    "ModuleList": "list",
    "ModuleDict": "dict",
    "Residual": ("body",),
    "TwoBranch": ("left", "right"),
    "Stack": ("layers",),
    "Router": ("branches",),
    "Twice": ("body",),
}

# Custom nn.Module classes a module tree may use, as source text: the interpreter executes it with
# ``torch`` bound to the backend's namespace and the rendered repro contains it verbatim, so both
# sides run the very same forward.
CUSTOM_MODULES: dict[str, str] = {
    "Residual": '''
class Residual(torch.nn.Module):
    """input + body(input): a residual block."""

    def __init__(self, body):
        super().__init__()
        self.body = body

    def forward(self, input):
        return input + self.body(input)
''',
    "TwoBranch": '''
class TwoBranch(torch.nn.Module):
    """left(input) * right(input): two branches that share their input."""

    def __init__(self, left, right):
        super().__init__()
        self.left = left
        self.right = right

    def forward(self, input):
        return self.left(input) * self.right(input)
''',
    "Stack": '''
class Stack(torch.nn.Module):
    """The layers of a ModuleList applied in turn."""

    def __init__(self, layers):
        super().__init__()
        self.layers = layers

    def forward(self, input):
        for layer in self.layers:
            input = layer(input)
        return input
''',
    "Router": '''
class Router(torch.nn.Module):
    """The branches of a ModuleDict applied in turn, in key order."""

    def __init__(self, branches):
        super().__init__()
        self.branches = branches

    def forward(self, input):
        for key in self.branches:
            input = self.branches[key](input)
        return input
''',
    "Twice": '''
class Twice(torch.nn.Module):
    """body(body(input)): one module called twice per forward."""

    def __init__(self, body):
        super().__init__()
        self.body = body

    def forward(self, input):
        return self.body(self.body(input))
''',
}


@dataclass(frozen=True)
class ModuleNode:
    """One module of a tree: ``alias`` is the program name it is bound to, ``path`` its torch
    qualified name in the root ("" for the root), ``children`` the aliases of its children (a list,
    or a dict key -> alias)."""

    alias: str
    path: str
    cls: str
    args: list
    kwargs: dict
    params: dict
    children: Any

    @property
    def param_names(self) -> tuple[str, ...]:
        return parameter_names(self.cls, self.kwargs)


def recurrent_parameters(cls: str, kwargs: dict) -> tuple[str, ...]:
    """The parameters of a recurrent layer built with ``kwargs`` (num_layers, bidirectional, bias,
    proj_size), in torch's registration order: ``weight_ih_l0``, ``weight_hh_l0``, ``bias_ih_l0``,
    ``bias_hh_l0``, ``weight_hr_l0``, then ``..._l0_reverse``, then the next layer; a cell's
    ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``."""
    kinds = ["weight_ih", "weight_hh", *(["bias_ih", "bias_hh"] if kwargs.get("bias", True) else [])]
    if cls.endswith("Cell"):
        return tuple(kinds)
    kinds += ["weight_hr"] if kwargs.get("proj_size", 0) else []
    suffixes = ("", "_reverse") if kwargs.get("bidirectional") else ("",)
    return tuple(f"{k}_l{layer}{suffix}" for layer in range(kwargs.get("num_layers", 1))
                 for suffix in suffixes for k in kinds)


RECURRENT = ("GRU", "LSTMCell", "RNN", "LSTM", "RNNCell", "GRUCell")  # (the order MOD-011 tests them)


def parameter_names(cls: str, kwargs: dict) -> tuple[str, ...]:
    """The parameters a module of ``cls`` built with ``kwargs`` owns (``bias=False``: no bias)."""
    if cls in RECURRENT:
        return recurrent_parameters(cls, kwargs)
    names = MODULES[cls]
    if kwargs.get("affine") is False or kwargs.get("elementwise_affine") is False:  # norm layers
        return ()
    return tuple(n for n in names if not (n == "bias" and kwargs.get("bias") is False))


def module_nodes(step: Module) -> list[ModuleNode]:
    """Every module of ``step``'s tree, children before their parent (construction order)."""
    nodes: list[ModuleNode] = []

    def visit(spec: dict, alias: str, path: str) -> str:
        cls = spec.get("cls")
        if cls not in MODULES:
            raise ValueError(f"unknown module class {cls!r}; known: {sorted(MODULES)}")
        kwargs, params, children = spec.get("kwargs") or {}, spec.get("params") or {}, spec.get("children")
        unknown = set(params) - set(parameter_names(cls, kwargs))
        if unknown:
            raise ValueError(f"{cls} has no parameters {sorted(unknown)}")
        holds = CHILDREN.get(cls)
        if holds is None and children is not None:
            raise ValueError(f"{cls} takes no children")
        if holds == "list":
            if not isinstance(children, list):
                raise ValueError(f"{cls} needs a list of children")
            keys: list = list(range(len(children)))
            items = children
        elif holds is not None:
            if not isinstance(children, dict) or (holds != "dict" and list(children) != list(holds)):
                raise ValueError(f"{cls} needs children {'by name' if holds == 'dict' else list(holds)}")
            keys, items = list(children), list(children.values())
        else:
            keys, items = [], []
        below = [visit(child, f"{alias}_{key}", f"{path}.{key}" if path else str(key))
                 for key, child in zip(keys, items, strict=True)]
        held = below if holds == "list" else dict(zip(keys, below, strict=True)) if holds else None
        nodes.append(ModuleNode(alias, path, cls, list(spec.get("args") or []), kwargs, params, held))
        return alias

    visit(step.spec(), step.name, "")
    return nodes


@_step
@dataclass
class GlobalModuleHook(Step):
    """A global module hook (``torch.nn.modules.module.register_module_<on>_hook``): it fires for
    every module; its calls are logged with the program name of the module it received. The
    interpreter and the rendered script remove it when the program ends, so it cannot leak."""

    kind: ClassVar[str] = "global_module_hook"
    hook: str
    on: str = "forward"  # one of GLOBAL_HOOK_FLAGS
    action: Action = field(default_factory=Action)
    with_kwargs: bool = False
    always_call: bool = False

    def __post_init__(self) -> None:
        if self.on not in GLOBAL_HOOK_FLAGS:
            raise ValueError(f"unknown global module hook kind {self.on!r}; known: {list(GLOBAL_HOOK_FLAGS)}")
        check_hook_flags(self.on, self.flags(), GLOBAL_HOOK_FLAGS)

    def flags(self) -> dict[str, bool]:
        return {k: True for k in ("with_kwargs", "always_call") if getattr(self, k)}

    def names_bound(self) -> list[str]:
        return [self.hook]


@_step
@dataclass
class StateDictHook(Step):
    """A state-dict hook of kind ``on`` (``state_dict_hooks.KINDS``) on ``module`` doing ``action``
    (one of ``state_dict_hooks.ACTIONS[on]``); ``with_module`` for the private load pre-hook only."""

    kind: ClassVar[str] = "state_dict_hook"
    hook: str
    module: str
    on: str = "state_dict_post"
    action: str = "log"
    with_module: bool = False

    def __post_init__(self) -> None:
        actions = state_dict_hooks.ACTIONS.get(self.on)
        if actions is None:
            known = list(state_dict_hooks.KINDS)
            raise ValueError(f"unknown state-dict hook kind {self.on!r}; known: {known}")
        if self.action not in actions:
            raise ValueError(f"a {self.on} hook's action is one of {list(actions)}, not {self.action!r}")
        if self.with_module and self.on != "_load_state_dict_pre":
            raise ValueError("with_module is a flag of _register_load_state_dict_pre_hook only")

    def names_read(self) -> list[str]:
        return [self.module]

    def names_bound(self) -> list[str]:
        return [self.hook]


@_step
@dataclass
class StateDict(Step):
    """``name = module.state_dict(prefix=, keep_vars=)``: its keys and ``_metadata`` are recorded
    and every entry observed as a tensor (``name[key]``)."""

    kind: ClassVar[str] = "state_dict"
    name: str
    module: str
    prefix: str = ""
    keep_vars: bool = False

    def kwargs(self) -> dict:
        """The call's keyword arguments that differ from their defaults."""
        return {k: v for k, v in (("prefix", self.prefix), ("keep_vars", self.keep_vars)) if v}

    def names_read(self) -> list[str]:
        return [self.module]

    def names_bound(self) -> list[str]:
        return [self.name]


@_step
@dataclass
class LoadStateDict(Step):
    """``module.load_state_dict(source, strict=, assign=)``; the missing and unexpected keys it
    returns are recorded (with ``strict``, torch raises on either instead)."""

    kind: ClassVar[str] = "load_state_dict"
    module: str
    source: str
    strict: bool = True
    assign: bool = False

    def kwargs(self) -> dict:
        """The call's keyword arguments that differ from their defaults."""
        return {k: v for k, v in (("strict", self.strict), ("assign", self.assign)) if v != (k == "strict")}

    def names_read(self) -> list[str]:
        return [self.module, self.source]


@_step
@dataclass
class ModuleMode(Step):
    """``module.train()`` (``train`` true) or ``module.eval()``."""

    kind: ClassVar[str] = "module_mode"
    module: str
    train: bool = True

    def names_read(self) -> list[str]:
        return [self.module]


@_step
@dataclass
class ModuleZeroGrad(Step):
    """``module.zero_grad(set_to_none=...)``."""

    kind: ClassVar[str] = "module_zero_grad"
    module: str
    set_to_none: bool = True

    def names_read(self) -> list[str]:
        return [self.module]


@_step
@dataclass
class ModuleRequiresGrad(Step):
    """``module.requires_grad_(flag)``: every parameter of the module and its submodules gets
    ``requires_grad = flag`` (freezing a submodule, or unfreezing it)."""

    kind: ClassVar[str] = "module_requires_grad"
    module: str
    requires_grad: bool = True

    def names_read(self) -> list[str]:
        return [self.module]


@_step
@dataclass
class ObserveModule(Step):
    """Record a module's API view: ``named_parameters`` (name, shape, requires_grad) in order,
    ``state_dict`` keys, ``named_modules`` with their ``training`` flags."""

    kind: ClassVar[str] = "observe_module"
    module: str

    def names_read(self) -> list[str]:
        return [self.module]


OPTIMIZERS = ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "Rprop",
              "ASGD")
SCHEDULERS = ("StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LambdaLR", "OneCycleLR",
              "ReduceLROnPlateau", "MultiplicativeLR", "ConstantLR", "LinearLR", "PolynomialLR",
              "CosineAnnealingWarmRestarts", "CyclicLR", "SequentialLR", "ChainedScheduler")
# the schedulers made of other schedulers (``Scheduler.schedulers``), stepped without arguments
COMPOSITE_SCHEDULERS = ("SequentialLR", "ChainedScheduler")
# LambdaLR's lr_lambda, as the program holds it: the body of ``lambda epoch: <body>``, one of these
LR_LAMBDAS = ("0.9 ** epoch", "1 / (1 + epoch)", "max(0.1, 1 - epoch / 4)", "[1.0, 0.5, 0.25][epoch % 3]")


@_step
@dataclass
class Optimizer(Step):
    """``name = torch.optim.<cls>([params...], **kwargs)``, or with ``module``
    ``torch.optim.<cls>(module.parameters(), **kwargs)`` (``params`` then empty): the parameters as
    the module lists them (a tied or shared parameter once)."""

    kind: ClassVar[str] = "optimizer"
    name: str
    cls: str
    params: list[str] = field(default_factory=list)
    kwargs: dict = field(default_factory=dict)
    module: str | None = None

    def __post_init__(self) -> None:
        if self.cls not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {self.cls!r}; known: {OPTIMIZERS}")
        if self.module is not None and self.params:
            raise ValueError("an optimizer takes a list of parameters or a module's parameters(), not both")

    def names_read(self) -> list[str]:
        return [*self.params, *([self.module] if self.module is not None else [])]

    def names_bound(self) -> list[str]:
        return [self.name]


@_step
@dataclass
class OptimizerStep(Step):
    """``optimizer.step()``."""

    kind: ClassVar[str] = "optimizer_step"
    optimizer: str

    def names_read(self) -> list[str]:
        return [self.optimizer]


@_step
@dataclass
class OptimizerZeroGrad(Step):
    """``optimizer.zero_grad(set_to_none=...)``."""

    kind: ClassVar[str] = "optimizer_zero_grad"
    optimizer: str
    set_to_none: bool = True

    def names_read(self) -> list[str]:
        return [self.optimizer]


@_step
@dataclass
class Scheduler(Step):
    """``name = torch.optim.lr_scheduler.<cls>(optimizer, **kwargs)``; LambdaLR's (and
    MultiplicativeLR's) ``lr_lambda`` is the body of ``lambda epoch: ...``, one of ``LR_LAMBDAS``.
    A composite (``COMPOSITE_SCHEDULERS``) is given the bound ``schedulers``:
    ``SequentialLR(optimizer, schedulers=[...], **kwargs)``,
    ``ChainedScheduler([...], optimizer=optimizer)``."""

    kind: ClassVar[str] = "scheduler"
    name: str
    cls: str
    optimizer: str
    kwargs: dict = field(default_factory=dict)
    schedulers: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.cls not in SCHEDULERS:
            raise ValueError(f"unknown scheduler {self.cls!r}; known: {SCHEDULERS}")
        if self.kwargs.get("lr_lambda", LR_LAMBDAS[0]) not in LR_LAMBDAS:
            raise ValueError(f"lr_lambda is one of {LR_LAMBDAS}, not {self.kwargs['lr_lambda']!r}")
        if bool(self.schedulers) != (self.cls in COMPOSITE_SCHEDULERS):
            raise ValueError(f"schedulers are given to {COMPOSITE_SCHEDULERS} (and to them only)")

    def names_read(self) -> list[str]:
        return [self.optimizer, *self.schedulers]

    def names_bound(self) -> list[str]:
        return [self.name]


@_step
@dataclass
class SchedulerStep(Step):
    """``scheduler.step()``; ``scheduler.step(metrics)`` (ReduceLROnPlateau), ``step(epoch=...)``
    (deprecated: the closed form, where a scheduler has one)."""

    kind: ClassVar[str] = "scheduler_step"
    scheduler: str
    metrics: float | None = None
    epoch: int | None = None

    def names_read(self) -> list[str]:
        return [self.scheduler]

    def kwargs(self) -> dict[str, Any]:
        given = {"metrics": self.metrics, "epoch": self.epoch}
        return {k: v for k, v in given.items() if v is not None}


@_step
@dataclass
class ObserveScheduler(Step):
    """Record ``scheduler.get_last_lr()``, each param group's ``lr``, ``momentum`` and ``betas``
    (what schedulers set), and ``scheduler.state_dict()`` (callables by type name)."""

    kind: ClassVar[str] = "observe_scheduler"
    scheduler: str

    def names_read(self) -> list[str]:
        return [self.scheduler]


@_step
@dataclass
class AssignAttr(Step):
    """``setattr(module, attr, value)``: a bound module or parameter assigned to an attribute of a
    module, as users tie weights (``head.weight = embedding.weight``) or share a submodule (the same
    Linear at two places of a Sequential: ``setattr(seq, "2", seq_0)``). Where ``attr`` is an
    identifier, ``<module>.<attr>`` is bound to ``value`` (a tied parameter keeps one name per
    module, as in the rendered script)."""

    kind: ClassVar[str] = "assign_attr"
    module: str
    attr: str
    value: str  # a bound name: a module or a parameter

    def __post_init__(self) -> None:
        if not self.attr or "." in self.attr:
            raise ValueError(f"assign_attr sets one attribute of a module, not {self.attr!r}")

    def names_read(self) -> list[str]:
        return [self.module, self.value]

    def names_bound(self) -> list[str]:
        return [f"{self.module}.{self.attr}"] if self.attr.isidentifier() else []


# -- steps of the op, tensor, grad-mode families (issue 5) --------------------------------------
@_step
@dataclass
class ObserveLayout(Step):
    """Record ``stride()``, ``storage_offset()``, ``is_contiguous()`` and ``_version``."""

    kind: ClassVar[str] = "observe_layout"
    tensor: str

    def names_read(self) -> list[str]:
        return [self.tensor]


@_step
@dataclass
class NumpyArray(Step):
    """``name = numpy.array(data, dtype=numpy.<dtype>)``: a numpy array to share with tensors."""

    kind: ClassVar[str] = "numpy_array"
    name: str
    data: Any
    dtype: str = "float64"

    def __post_init__(self) -> None:
        if self.dtype not in NUMPY_DTYPES:
            raise ValueError(f"unknown numpy dtype {self.dtype!r}; known: {NUMPY_DTYPES}")

    def names_bound(self) -> list[str]:
        return [self.name]


@_step
@dataclass
class NumpyAdd(Step):
    """``array += value``: write into a numpy array in place (tensors sharing it see the write)."""

    kind: ClassVar[str] = "numpy_add"
    array: str
    value: float = 1.0

    def names_read(self) -> list[str]:
        return [self.array]


@_step
@dataclass
class ObserveArray(Step):
    """Record a numpy array's dtype, shape and values."""

    kind: ClassVar[str] = "observe_array"
    array: str

    def names_read(self) -> list[str]:
        return [self.array]


@_step
@dataclass
class GradMode(Step):
    """Enter a grad mode (``torch.<mode>(flag)`` as a context, left by ``exit_mode`` or at the end of
    the program) and record ``is_grad_enabled()``/``is_inference_mode_enabled()`` after entering."""

    kind: ClassVar[str] = "grad_mode"
    name: str  # the context's name, for exit_mode
    mode: str  # one of GRAD_MODES
    flag: bool | None = None  # set_grad_enabled's mode, inference_mode's mode (None: default)

    def __post_init__(self) -> None:
        if self.mode not in GRAD_MODES:
            raise ValueError(f"unknown grad mode {self.mode!r}; known: {GRAD_MODES}")
        if (self.mode == "set_grad_enabled") == (self.flag is None) and self.mode != "inference_mode":
            raise ValueError(f"grad mode {self.mode!r}: flag is required by set_grad_enabled only")

    def names_bound(self) -> list[str]:
        return [self.name]


@_step
@dataclass
class ExitMode(Step):
    """Leave a grad mode entered by a ``grad_mode`` step; record the grad mode after leaving."""

    kind: ClassVar[str] = "exit_mode"
    name: str

    def names_read(self) -> list[str]:
        return [self.name]


@_step
@dataclass
class DecoratedOp(Step):
    """``out = f(*args)`` where ``f`` applies op ``op`` and is decorated with a grad mode:
    ``@torch.<mode>(flag)`` (``@torch.<mode>`` itself with ``bare``, as no_grad, enable_grad and
    inference_mode allow). With ``generator``, ``f`` is a generator function: the grad mode is
    recorded inside it at its first resumption, then the caller's between resumptions, ``out`` is
    what its second resumption yields (the op's result), and after closing it early, the mode again."""

    kind: ClassVar[str] = "decorated_op"
    out: str
    mode: str  # one of GRAD_MODES
    op: str
    args: list = field(default_factory=list)
    flag: bool | None = None
    bare: bool = False
    generator: bool = False

    def __post_init__(self) -> None:
        GradMode("check", self.mode, self.flag)  # same mode/flag rules
        if self.op not in OPS:
            raise ValueError(f"unknown op {self.op!r}")
        if self.bare and (self.flag is not None or self.mode == "set_grad_enabled"):
            raise ValueError("a bare decorator takes no flag")

    def names_read(self) -> list[str]:
        return [a.name for a in self.args if isinstance(a, Ref)]

    def names_bound(self) -> list[str]:
        return [self.out]


# -- custom autograd.Function (issue 5) ---------------------------------------------------------
def _check_body(ops: list[dict], where: str) -> None:
    for spec in ops:
        if set(spec) - {"out", "op", "args", "kwargs"} or spec.get("op") not in OPS:
            raise ValueError(f"{where}: an op needs 'out', an 'op' of OPS, 'args' (and 'kwargs'): {spec}")


# How a Function defines its methods: static forward/backward ("static"), plain methods (torch's
# legacy style, "legacy"), its backward named vjp ("vjp"), or both backward and vjp ("both")
FUNCTION_STYLES = ("static", "legacy", "vjp", "both")


@_step
@dataclass
class Function(Step):
    """Define ``class <name>(torch.autograd.Function)``: ``forward(ctx, i0, i1, ...)`` runs the
    ``forward`` ops (dicts ``{"out", "op", "args", "kwargs"}`` over the inputs ``i<k>`` and earlier
    outs), saves ``saves`` with ``save_for_backward``, marks ``non_differentiable`` outputs and
    ``dirty`` inputs, calls ``set_materialize_grads`` and sets ``ctx._materialize_non_diff_grads``
    if asked, and returns ``outputs`` (one or a tuple; an output ``{"const": value}`` is that
    number, string or None). ``style`` (``FUNCTION_STYLES``) says how the methods are defined.
    ``backward(ctx, g0, g1, ...)`` (``once_differentiable`` if asked) records
    ``needs_input_grad`` and the gradients it receives, binds the saved tensors to their forward
    names, runs the ``backward`` ops and returns, per input, the tensor named in ``grads`` or None."""

    kind: ClassVar[str] = "function"
    name: str
    inputs: int
    forward: list
    outputs: list[str]
    backward: list
    grads: list  # per input: a name bound in backward, or None
    saves: list[str] = field(default_factory=list)
    non_differentiable: list[str] = field(default_factory=list)
    dirty: list[str] = field(default_factory=list)
    materialize_grads: bool | None = None
    once_differentiable: bool = False
    materialize_non_diff_grads: bool | None = None
    style: str = "static"
    # forward AD: ``jvp(ctx, t0, t1, ...)`` runs the ``jvp`` ops (None: the Function has no jvp)
    # over the tangents ``t<k>`` and the tensors ``saves_for_forward`` kept (bound to their forward
    # names) and returns, per output, the tensor named in ``tangents`` or None
    jvp: list | None = None
    tangents: list = field(default_factory=list)
    saves_for_forward: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.style not in FUNCTION_STYLES:
            raise ValueError(f"unknown Function style {self.style!r}; known: {FUNCTION_STYLES}")
        _check_body(self.forward, f"function {self.name} forward")
        _check_body(self.backward, f"function {self.name} backward")
        _check_body(self.jvp or [], f"function {self.name} jvp")
        if len(self.grads) != self.inputs:
            raise ValueError(f"function {self.name}: backward returns one gradient (or None) per input")

    def names_bound(self) -> list[str]:
        return [self.name]


@_step
@dataclass
class ApplyFunction(Step):
    """``outs = Function.apply(*inputs)`` (one name per output; inputs are Refs or numbers); with
    ``instance``, ``Function()(*inputs)``, the legacy call torch warns about and refuses."""

    kind: ClassVar[str] = "apply_function"
    outs: list[str]
    function: str
    inputs: list = field(default_factory=list)
    instance: bool = False

    def names_read(self) -> list[str]:
        return [self.function, *(a.name for a in self.inputs if isinstance(a, Ref))]

    def names_bound(self) -> list[str]:
        return list(self.outs)


def _encode(value: Any) -> Any:
    """Step field value -> strict-JSON value (Ref, Action and non-finite floats become tagged dicts)."""
    if isinstance(value, Ref):
        return {"ref": value.name}
    if isinstance(value, Action):
        return {"action": value.kind, "value": value.value}
    if isinstance(value, DType):
        return {"torch_dtype": value.name}
    if isinstance(value, MemoryFormat):
        return {"torch_memory_format": value.name}
    if isinstance(value, float) and not math.isfinite(value):
        return {"float": repr(value)}  # strict JSON has no NaN/Infinity
    if isinstance(value, tuple):  # an indexing key: a tuple, not a list (torch reads them apart)
        return {"tuple": [_encode(v) for v in value]}
    if isinstance(value, slice):
        return {"slice": [_encode(value.start), _encode(value.stop), _encode(value.step)]}
    if value is Ellipsis:
        return {"ellipsis": None}
    if isinstance(value, range):  # an index item torch reads as a sequence
        return {"range": [value.start, value.stop, value.step]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"ref"}:
            return Ref(value["ref"])
        if set(value) == {"float"}:
            return float(value["float"])
        if set(value) == {"torch_dtype"}:
            return DType(value["torch_dtype"])
        if set(value) == {"torch_memory_format"}:
            return MemoryFormat(value["torch_memory_format"])
        if set(value) == {"action", "value"}:
            return Action(value["action"], value["value"])
        if set(value) == {"tuple"}:
            return tuple(_decode(v) for v in value["tuple"])
        if set(value) == {"slice"}:
            return slice(*(_decode(v) for v in value["slice"]))
        if set(value) == {"ellipsis"}:
            return Ellipsis
        if set(value) == {"range"}:
            return range(*value["range"])
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def step_to_dict(step: Step) -> dict:
    """One step as a JSON-able dict with its ``kind``."""
    return {"kind": step.kind, **{f.name: _encode(getattr(step, f.name)) for f in fields(step)}}


def step_from_dict(data: dict) -> Step:
    data = dict(data)
    kind = data.pop("kind")
    if kind not in STEP_TYPES:
        raise ValueError(f"unknown step kind {kind!r}; known: {sorted(STEP_TYPES)}")
    return STEP_TYPES[kind](**{k: _decode(v) for k, v in data.items()})


@dataclass
class Program:
    """A torch program as an ordered list of steps."""

    steps: list[Step] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"steps": [step_to_dict(s) for s in self.steps]}

    @classmethod
    def from_dict(cls, data: dict) -> Program:
        return cls([step_from_dict(s) for s in data["steps"]])

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> Program:
        return cls.from_dict(json.loads(text))

    def __len__(self) -> int:
        return len(self.steps)


FUNCTIONAL_APIS = ("vjp", "jvp", "jacobian", "hessian", "vhp", "hvp")
FUNCTIONAL_KWARGS = ("create_graph", "strict", "vectorize", "strategy")  # strategy: jacobian's


@_step
@dataclass
class AutogradFunctional(Step):
    """``out = torch.autograd.functional.<api>(f, inputs[, v], **kwargs)``: ``f(i0, i1, ...)`` runs
    the ``body`` ops (as a Function's forward) and returns ``outputs`` (a tuple with
    ``tuple_outputs``, else the one tensor); ``inputs`` go as a tuple with ``tuple_inputs`` (else
    the one name alone), ``v`` (names, or None) as a tuple where what it pairs with is one (the
    outputs for vjp, the inputs otherwise). Every tensor of the result is observed as
    ``out[i][j]...``; its nesting is recorded."""

    kind: ClassVar[str] = "functional"
    out: str
    api: str
    body: list
    outputs: list[str]
    inputs: list[str]
    v: list[str] | None = None
    tuple_inputs: bool = True
    tuple_outputs: bool = True
    kwargs: dict = field(default_factory=dict)  # of FUNCTIONAL_KWARGS

    def __post_init__(self) -> None:
        if self.api not in FUNCTIONAL_APIS:
            raise ValueError(f"unknown torch.autograd.functional API {self.api!r}; known: {FUNCTIONAL_APIS}")
        _check_body(self.body, f"functional {self.out}")
        known = {f"i{k}" for k in range(len(self.inputs))}
        for spec in self.body:  # a name the function does not bind would be the script's global
            unknown = [a.name for a in spec["args"] if isinstance(a, Ref) and a.name not in known]
            if unknown:
                raise ValueError(f"functional {self.out}: {spec['out']} uses {unknown}, not bound before it")
            known.add(spec["out"])
        unbound = sorted(set(self.outputs) - known)
        if unbound:
            raise ValueError(f"functional {self.out}: outputs {unbound} are not bound")
        allowed = FUNCTIONAL_KWARGS[: 2 if self.takes_v() else 3 if self.api == "hessian" else 4]
        unknown = sorted(set(self.kwargs) - set(allowed))
        if unknown:
            raise ValueError(f"{self.api} takes no {unknown}")
        if not self.takes_v() and self.v is not None:
            raise ValueError(f"{self.api} takes no v")
        for flag, names in (("tuple_inputs", self.inputs), ("tuple_outputs", self.outputs)):
            if not getattr(self, flag) and len(names) != 1:
                raise ValueError(f"functional {self.out}: without {flag}, exactly one name")

    def takes_v(self) -> bool:
        return self.api not in ("jacobian", "hessian")

    def v_is_tuple(self) -> bool:
        """v pairs with the outputs for vjp, with the inputs otherwise."""
        return self.tuple_outputs if self.api == "vjp" else self.tuple_inputs

    def names_read(self) -> list[str]:
        return [*self.inputs, *(self.v or [])]


SAVED_HOOKS = ("saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks")
# what a saved_tensors_hooks pair does: pack returns the tensor detached and unpack what it got
# ("detach"), pack returns it doubled ("double": backward computes with the doubled values), unpack
# returns a number ("number": torch's TypeError), pack writes its input in place ("in_place")
PACKINGS = ("detach", "double", "number", "in_place")


@_step
@dataclass
class SavedHooks(Step):
    """Enter ``torch.autograd.graph.<context>`` (``SAVED_HOOKS``), left by ``exit_mode`` or at the
    end of the program: saved_tensors_hooks with logging pack/unpack hooks doing ``packing``
    (``PACKINGS``), save_on_cpu, or disable_saved_tensors_hooks with ``name`` as its message."""

    kind: ClassVar[str] = "saved_hooks"
    name: str
    context: str = "saved_tensors_hooks"
    packing: str = "detach"

    def __post_init__(self) -> None:
        if self.context not in SAVED_HOOKS:
            raise ValueError(f"unknown saved-tensor context {self.context!r}; known: {SAVED_HOOKS}")
        if self.packing not in PACKINGS:
            raise ValueError(f"unknown packing {self.packing!r}; known: {PACKINGS}")

    def names_bound(self) -> list[str]:
        return [self.name]


@_step
@dataclass
class ObserveSaved(Step):
    """What ``tensor.grad_fn`` saved: its ``_saved_*`` and ``_raw_saved_*`` names (sorted), then
    each ``_saved_<name>`` value (a tensor described, a number or tuple as is, or the error its
    access raised)."""

    kind: ClassVar[str] = "observe_saved"
    tensor: str

    def names_read(self) -> list[str]:
        return [self.tensor]


# -- torch.autograd.graph.register_multi_grad_hook, torch.autograd.gradcheck (issue 21) ----------
MULTI_GRAD_MODES = ("all", "any")


@_step
@dataclass
class MultiGradHook(Step):
    """``hook = torch.autograd.graph.register_multi_grad_hook(tensors, fn, mode=mode)`` (no
    ``mode`` passed where it is None; any other string is passed as is, which torch refuses).
    ``fn`` logs what it receives: in mode "all" the tensors' gradients (None where a backward
    computed none), in mode "any" the one gradient. ``remove_hook`` removes it."""

    kind: ClassVar[str] = "multi_grad_hook"
    hook: str
    tensors: list[str]
    mode: str | None = None

    def on(self) -> str:
        """The hook kind its calls are logged under."""
        return f"multi_grad_{self.mode or 'all'}"

    def names_read(self) -> list[str]:
        return list(self.tensors)

    def names_bound(self) -> list[str]:
        return [self.hook]


GRADCHECK_APIS = ("gradcheck", "gradgradcheck")
GRADCHECK_KWARGS = ("eps", "atol", "rtol", "raise_exception", "nondet_tol", "check_undefined_grad",
                    "check_grad_dtypes", "check_batched_grad", "fast_mode")
# forward AD's checks (conformance/test_gradcheck_api.py)
GRADCHECK_KWARGS += ("check_forward_ad", "check_backward_ad", "check_fwd_over_rev", "check_rev_over_rev")


@_step
@dataclass
class Gradcheck(Step):
    """``out = torch.autograd.<api>(f, inputs[, grad_outputs], **kwargs)`` (``GRADCHECK_APIS``,
    keyword arguments of ``GRADCHECK_KWARGS``), after ``torch.manual_seed(seed)``: gradgradcheck's
    random grad_outputs and the batched-gradient check draw from the global generator.
    ``f(i0, i1, ...)`` applies the custom Function ``function`` to its inputs first where one is
    named (its outputs bound as ``a0, a1, ...``), runs the ``body`` ops and returns ``outputs`` (a
    tuple where there are several). What it returns is recorded; what it raises and warns is the
    step's (see ``oracle.interpreter.gradcheck_scalars`` for the numbers of a fast-mode failure)."""

    kind: ClassVar[str] = "gradcheck"
    out: str
    api: str
    body: list
    outputs: list[str]
    inputs: list[str]
    grad_outputs: list[str] | None = None
    function: str | None = None
    kwargs: dict = field(default_factory=dict)
    seed: int = 0

    def __post_init__(self) -> None:
        if self.api not in GRADCHECK_APIS:
            raise ValueError(f"unknown gradcheck API {self.api!r}; known: {GRADCHECK_APIS}")
        _check_body(self.body, f"gradcheck {self.out}")
        unknown = sorted(set(self.kwargs) - set(GRADCHECK_KWARGS))
        if unknown:
            raise ValueError(f"gradcheck {self.out}: unknown keyword arguments {unknown}")
        if self.grad_outputs is not None and self.api != "gradgradcheck":
            raise ValueError("only gradgradcheck takes grad_outputs")
        if not self.outputs:
            raise ValueError(f"gradcheck {self.out}: the function returns at least one tensor")

    def names_read(self) -> list[str]:
        return [*([self.function] if self.function else []), *self.inputs, *(self.grad_outputs or [])]

    def names_bound(self) -> list[str]:
        return [self.out]
@_step
@dataclass
class CallGradFn(Step):
    """``out = tensor.grad_fn(*grads)``: a node called as a function (``grads``: Refs, None or
    numbers); the result's nesting and every tensor in it observed, as ``functional``'s."""

    kind: ClassVar[str] = "call_grad_fn"
    out: str
    tensor: str
    grads: list = field(default_factory=list)

    def names_read(self) -> list[str]:
        return [self.tensor, *(g.name for g in self.grads if isinstance(g, Ref))]

    def names_bound(self) -> list[str]:
        return [self.out]


# attributes a ``del_attr`` step deletes: torch sets .grad to None, refuses the others
DELETABLE = ("grad", "data", "_grad_fn", "_backward_hooks", "_post_accumulate_grad_hooks", "requires_grad",
             "grad_fn", "is_leaf", "_base")


@_step
@dataclass
class DelAttr(Step):
    """``del tensor.<attr>`` (``attr`` one of ``DELETABLE``)."""

    kind: ClassVar[str] = "del_attr"
    tensor: str
    attr: str

    def __post_init__(self) -> None:
        if self.attr not in DELETABLE:
            raise ValueError(f"del_attr deletes one of {DELETABLE}, not {self.attr!r}")

    def names_read(self) -> list[str]:
        return [self.tensor]


# -- defaults (conformance/test_api.py, API-003): the default dtype and device ------------------
# the factory functions and the setters of the defaults (a dtype argument is a DType)
OPS.update(_table("zeros ones full eye arange linspace logspace zeros_like ones_like full_like", "function"))
OPS.update(_table("set_default_dtype set_default_device", "function"))
# determinism (API-006): its setters, getters, and the factories of uninitialised memory it fills
OPS.update(_table("use_deterministic_algorithms set_deterministic_debug_mode get_deterministic_debug_mode "
                  "are_deterministic_algorithms_enabled is_deterministic_algorithms_warn_only_enabled "
                  "empty empty_like", "function"))
OPS.update(_table("new_empty", "method"))
DETERMINISM_SETTERS = ("use_deterministic_algorithms", "set_deterministic_debug_mode")
# the ops that change a default, which the run restores at its end (oracle/interpreter.py: run)
DEFAULT_SETTERS = (
    "set_default_dtype", "set_default_device", *DETERMINISM_SETTERS, "set_float32_matmul_precision"
)


@_step
@dataclass
class ObserveDefaults(Step):
    """Record ``torch.get_default_dtype()`` and ``torch.get_default_device()`` (each on its own)."""

    kind: ClassVar[str] = "observe_defaults"


@_step
@dataclass
class DeviceMode(Step):
    """Enter ``torch.device(device)`` as a context (the default device of the factory functions
    until ``exit_device`` or the end of the program); record the defaults after entering."""

    kind: ClassVar[str] = "device_mode"
    name: str
    device: str

    def names_bound(self) -> list[str]:
        return [self.name]


@_step
@dataclass
class ExitDevice(Step):
    """Leave a ``device_mode`` context; record the defaults after leaving."""

    kind: ClassVar[str] = "exit_device"
    name: str

    def names_read(self) -> list[str]:
        return [self.name]


# -- tutorial functions (conformance/test_ops.py: isclose in OPS-002, the others in OPS-009) -----
OPS.update(_table("isclose diff atleast_1d atleast_2d atleast_3d tril_indices triu_indices", "function"))
OPS.update(_table("einsum unique unique_consecutive nonzero argwhere bincount", "function"))
OPS.update(_table("histc", "function"))  # OPS-008
OPS.update(_table("meshgrid repeat_interleave", "function"))


@_step
@dataclass
class ManualSeed(Step):
    """``torch.manual_seed(seed)``: the draws after it on the default CPU generator (dropout masks,
    the weights a lazy module makes on its first call) are the seed's."""

    kind: ClassVar[str] = "manual_seed"
    seed: int


@_step
@dataclass
class ObserveRepr(Step):
    """Record ``repr(module)``: the module's printed form (``print(model)``), children and
    ``extra_repr`` included."""

    kind: ClassVar[str] = "observe_repr"
    module: str

    def names_read(self) -> list[str]:
        return [self.module]


@_step
@dataclass
class ObserveBackwardHooks(Step):
    """Record ``tensor._backward_hooks``: None, or its type's name and how many hooks it holds (not
    its keys: they are handle ids, numbered per process)."""

    kind: ClassVar[str] = "observe_backward_hooks"
    tensor: str

    def names_read(self) -> list[str]:
        return [self.tensor]


# -- forward-mode AD: torch.autograd.forward_ad (issue 21) ---------------------------------------
@_step
@dataclass
class DualLevel(Step):
    """Enter ``torch.autograd.forward_ad.dual_level()`` as a context (bound as ``name``), left by
    ``exit_mode`` or at the end of the program."""

    kind: ClassVar[str] = "dual_level"
    name: str

    def names_bound(self) -> list[str]:
        return [self.name]


@_step
@dataclass
class MakeDual(Step):
    """``out = torch.autograd.forward_ad.make_dual(tensor, tangent[, level=level])``."""

    kind: ClassVar[str] = "make_dual"
    out: str
    tensor: str
    tangent: str
    level: int | None = None

    def names_read(self) -> list[str]:
        return [self.tensor, self.tangent]

    def names_bound(self) -> list[str]:
        return [self.out]


@_step
@dataclass
class UnpackDual(Step):
    """``out, tangent = torch.autograd.forward_ad.unpack_dual(tensor)``: ``out`` (the primal) bound;
    recorded: the tangent's values (detached: its own graph is not compared) as ``<out>.tangent``,
    whether the primal is ``tensor`` itself and whether it is a view."""

    kind: ClassVar[str] = "unpack_dual"
    out: str
    tensor: str

    def names_read(self) -> list[str]:
        return [self.tensor]

    def names_bound(self) -> list[str]:
        return [self.out]


# -- a graph's lifetime (SAVED-002): a node keeps no reference to its own output ---------------
OPS.update(_table("detach_", "method", inplace=True))
OPS.update(_table("amin", "function"))  # (what a grad_fn saved, SAVED-002)
# torch._C's names (FN-002, SAVED-001): an UndefinedGrad() object is called through its class's
# __call__ (UndefinedGrad.__call__(u, t) is u(t))
OPS.update(_table("_C._functions.UndefinedGrad _C._functions.UndefinedGrad.__call__", "function"))
OPS.update(_table("_C._autograd._saved_tensors_hooks_is_enabled", "function"))


@_step
@dataclass
class ObserveFreed(Step):
    """With Python's cycle collector off (after one collection, so that no garbage of earlier steps
    holds them), the names ``drop`` unbound; recorded: whether the grad_fn of ``tensor`` (one of
    them) was freed then, by reference counting alone (a do-nothing post hook registered on it
    before, held by nothing else, gone): a node saving its own output with the output's history
    would be a reference cycle."""

    kind: ClassVar[str] = "observe_freed"
    tensor: str
    drop: list[str]

    def names_read(self) -> list[str]:
        return [self.tensor, *self.drop]


# -- pickling and copying a tensor (TEN-004) ------------------------------------------------------
PICKLINGS = ("pickle", "pickle0", "copy")


@_step
@dataclass
class Pickled(Step):
    """``out = pickle.loads(pickle.dumps(tensor))`` (``pickle0``: protocol 0) or, with ``copy``,
    ``out = copy.copy(tensor)``."""

    kind: ClassVar[str] = "pickled"
    out: str
    tensor: str
    how: str = "pickle"

    def __post_init__(self) -> None:
        if self.how not in PICKLINGS:
            raise ValueError(f"unknown pickling {self.how!r}; known: {PICKLINGS}")

    def names_read(self) -> list[str]:
        return [self.tensor]

    def names_bound(self) -> list[str]:
        return [self.out]
# torch.linalg's solves and decompositions and torch's older spellings (conformance/test_linalg.py,
# LINALG-001/002)
OPS.update(_table(" ".join(f"linalg.{f}" for f in (
    "inv", "inv_ex", "det", "slogdet", "solve", "solve_ex", "qr", "svd", "svdvals", "eigh", "eigvalsh",
    "pinv", "matrix_rank", "matrix_power")), "function"))
OPS.update(_table("inverse det logdet slogdet pinverse matrix_power svd qr", "function"))
OPS.update(_table("linalg.lstsq", "function"))
OPS.update(_table("linalg.matrix_exp matrix_exp", "function"))
# reductions and selection (conformance/test_ops.py: OPS-006, OPS-010, OPS-011; range: API-003)
OPS.update(_table("mode nanmedian quantile nanquantile isin histogram narrow_copy range", "function"))
OPS.update(_table("eq_ ne_ lt_ le_ gt_ ge_ greater_ less_ greater_equal_ less_equal_ not_equal_", "method",
                  True))


# -- memory formats, autocast, plain results (issue 22: the Performance Tuning Guide, AMP) -------
MEMORY_FORMATS = ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format")
OPS.update(_table("is_contiguous", "method"))
OPS.update(_table("get_float32_matmul_precision set_float32_matmul_precision", "function"))
OPS.update(_table(" ".join(f"backends.{m}.is_available" for m in (
    "cudnn", "mps", "mkldnn", "openmp", "mkl", "opt_einsum")), "function"))
OPS.update(_table("backends.cudnn.version backends.cuda.is_built backends.mps.is_built", "function"))
OPS.update(_table("is_autocast_enabled get_autocast_dtype conv2d", "function"))
OPS.update(_table("nn.functional.linear nn.functional.conv2d nn.functional.l1_loss", "function"))
OPS.update(_table("baddbmm", "function"))
OPS.update(_table("float", "method"))
# torch.amp.GradScaler and its methods (a scaler is a bound name like a tensor)
SCALER_METHODS = ("scale", "unscale_", "step", "update", "get_scale", "state_dict")
OPS.update(_table("amp.GradScaler", "function"))
OPS.update(_table(" ".join(SCALER_METHODS), "method"))
# where autocast is entered from (``torch.<spelling>``)
AUTOCASTS = ("autocast", "amp.autocast", "cpu.amp.autocast")


@dataclass(frozen=True)
class MemoryFormat:
    """A torch memory format as an op argument (``torch.<name>``). JSON: ``{"torch_memory_format": name}``."""

    name: str

    def __post_init__(self) -> None:
        if self.name not in MEMORY_FORMATS:
            raise ValueError(f"unknown memory format {self.name!r}; known: {MEMORY_FORMATS}")


@_step
@dataclass
class ObservePlain(Step):
    """Record a result that is no tensor (a bool, an int, a string, a dtype) as it prints."""

    kind: ClassVar[str] = "observe_plain"
    name: str

    def names_read(self) -> list[str]:
        return [self.name]


@_step
@dataclass
class Autocast(Step):
    """Enter ``torch.<spelling>(device_type, dtype=torch.<dtype>, enabled=)`` as a context (``spelling``
    of ``AUTOCASTS``; torch.cpu.amp.autocast takes no device type), left by ``exit_autocast`` or at
    the end of the program; record ``is_autocast_enabled`` and ``get_autocast_dtype`` of the device
    type after entering."""

    kind: ClassVar[str] = "autocast"
    name: str
    device_type: str = "cpu"
    dtype: str | None = None
    enabled: bool | None = None
    spelling: str = "autocast"

    def __post_init__(self) -> None:
        if self.spelling not in AUTOCASTS:
            raise ValueError(f"unknown autocast {self.spelling!r}; known: {AUTOCASTS}")

    def names_bound(self) -> list[str]:
        return [self.name]


@_step
@dataclass
class ExitAutocast(Step):
    """Leave an ``autocast`` context; record the autocast state of its device type after leaving."""

    kind: ClassVar[str] = "exit_autocast"
    name: str
    device_type: str = "cpu"

    def names_read(self) -> list[str]:
        return [self.name]
