"""Rules of the family "argument spellings": the keywords torch's argument parser takes besides a
parameter's own name, and ``out=`` (conformance/test_api.py)."""

from oracle.rules import Rule

FAMILY = "argument spellings"

RULES = [
    Rule(
        "API-001",
        FAMILY,
        "A function or method torch parses in C takes NumPy's spellings of its parameters, axis for dim, "
        "keepdims for keepdim, x, a or x1 for input and x2 for other, with the same result as the "
        "parameter's own name; a spelling of a parameter already given (by position or by name) raises "
        "torch's 'got an unexpected keyword argument' TypeError.",
        "https://github.com/pytorch/pytorch/blob/main/torch/csrc/utils/python_arg_parser.cpp",
    ),
    Rule(
        "API-002",
        FAMILY,
        "A function called with out=r writes its result into r and returns r: r is resized to the "
        "result's shape (silently when empty, else with torch's 'An output with one or more elements was "
        "resized' UserWarning), its version bumps, the result is cast to r's dtype where torch's canCast "
        "allows (else torch's 'result type ... can't be cast' RuntimeError), and with an argument that "
        "requires grad (grad mode on) the call raises torch's 'functions with out=... arguments don't "
        "support automatic differentiation' RuntimeError; each function follows its kernel's rule: out's "
        "dtype must be the result's where the kernel says so (with that kernel's error), a reduction may "
        "compute in out's dtype, a factory makes its values in out's dtype, one returning two tensors takes "
        "a tuple of two (each checked and resized, returned as torch.return_types.<op>_out), an op "
        "without a derivative takes inputs that require grad, and one torch's autograd has no formula for "
        "(softmax, log_softmax, floor_divide, heaviside, diag) records on r a NotImplemented node instead "
        "of refusing; an r that is a view is resized contiguous from its offset in its base's storage, "
        "which the base keeps reading; arange and linspace keep an r of as many elements in its shape; an "
        "out of another type (a number, a string, a list or a tuple where "
        "one tensor goes, a tensor where a tuple goes) raises torch's parser TypeError (the list of the "
        "function's signatures where it has several), except that add, sub, mul, div and floor_divide take "
        "a number as a 0-d tensor of its type.",
        "https://pytorch.org/docs/stable/generated/torch.add.html",
    ),
    Rule(
        "API-003",
        FAMILY,
        "torch.set_default_dtype takes a floating dtype (float32, float64, float16, bfloat16) and "
        "refuses any other with torch's 'only floating-point types are supported as the default type' "
        "TypeError; the default dtype is then the dtype of Python floats in tensor() (lists mixing ints "
        "and floats included), arange, linspace and logspace of floats, full with a float fill, zeros, "
        "ones and eye, and of integer tensors divided or scaled by a float, while *_like keeps its "
        "input's; torch.set_default_device and 'with torch.device(d)' (nested, the innermost block "
        "winning) set the device get_default_device reports and the factory functions use.",
        "https://pytorch.org/docs/stable/generated/torch.set_default_dtype.html",
    ),
    Rule(
        "API-004",
        FAMILY,
        "An int argument (a dim, a size, k, chunks, a diagonal) given a value of another type (a float, "
        "a bool, a float tensor, a list where one int goes) raises torch's Python argument parser "
        "TypeError, by position ('cumsum(): argument 'dim' (position 2) must be int, not float', a "
        "method's positions counted after self) or by keyword (no position), a list of ints by its first "
        "element ('must be tuple of ints, but found element of type float at pos 0') or by a later one "
        "('failed to unpack the object at pos 2'), and where several of torch's signatures could take "
        "the call the list of them ('received an invalid combination of arguments'); a NumPy integer and "
        "a 0-d integer tensor are taken as ints.",
        "https://github.com/pytorch/pytorch/blob/main/torch/csrc/utils/python_arg_parser.cpp",
    ),
    Rule(
        "API-005",
        FAMILY,
        "A function or Tensor method torch parses in C refuses a call none of its signatures takes before "
        "anything runs, with its parser's TypeError: an argument of another type where a tensor, a number, "
        "an int or a bool goes (by position 'add(): argument 'other' (position 2) must be Tensor, not "
        "str', by keyword without the position), a required argument missing ('missing 1 required "
        "positional arguments: \"other\"'), more positional arguments than it takes ('takes 1 positional "
        "argument but 3 were given', 'takes from 2 to 1 positional arguments' where a keyword-only "
        "argument is required), a keyword it lacks ('got an unexpected keyword argument'); where several "
        "signatures could take the call, the list of them ('received an invalid combination of "
        "arguments', a misfit marked where a signature has as many entries as the call has arguments), "
        "and where one is listed beside a hidden deprecated one (add, sub, addcmul, addcdiv), that one "
        "with the call's misfits marked or its unrecognized keywords named, while a call the hidden one "
        "takes (add(x, 2, y), x.addcmul_(0.5, a, b)) runs as the listed one with torch's once-per-process "
        "'This overload of add is deprecated' UserWarning; add, sub, mul, div and their aliases take a "
        "Python number for a tensor.",
        "https://github.com/pytorch/pytorch/blob/main/torch/csrc/utils/python_arg_parser.cpp",
    ),
    Rule(
        "API-006",
        FAMILY,
        "torch.set_deterministic_debug_mode takes 'default', 'warn', 'error' or 0, 1, 2 (else torch's "
        "'invalid value of debug_mode' RuntimeError) and sets determinism as use_deterministic_algorithms "
        "does (off, on warning only, on); are_deterministic_algorithms_enabled, "
        "is_deterministic_algorithms_warn_only_enabled and get_deterministic_debug_mode report it, and "
        "while it is on, empty, empty_like and new_empty fill their memory with NaN (floating dtypes) or "
        "the dtype's largest value (integers; True for bool).",
        "https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html",
    ),
    Rule(
        "API-007",
        FAMILY,
        "torch.backends reports a CPU build of torch: cudnn, mps and opt_einsum not available (cudnn's "
        "version None), cuda and mps not built, mkldnn, openmp and mkl available; "
        "set_float32_matmul_precision takes 'highest', 'high' or 'medium', which "
        "get_float32_matmul_precision then returns, ignores another string with torch's 'is not one of "
        "'highest', 'high', or 'medium'' UserWarning and refuses a number with torch's 'expects a str' "
        "RuntimeError; float32 products keep their float32 values whatever the precision on CPU.",
        "https://pytorch.org/docs/stable/generated/torch.set_float32_matmul_precision.html",
    ),
    Rule(
        "API-008",
        FAMILY,
        "Inside torch.autocast('cpu') (torch.amp.autocast, or torch.cpu.amp.autocast with torch's "
        "FutureWarning), bfloat16 by default or float16, the ops of torch's CPU lower-precision list "
        "(mm, matmul, linear, addmm, bmm, baddbmm, conv2d ...) cast their floating inputs to the autocast "
        "dtype and those of its float32 list (mse_loss, l1_loss, prod ...) to float32, each cast a "
        "ToCopyBackward0 node (a float32 leaf weight cast once per block), while other ops keep their "
        "inputs' dtype; gradients flow back in the leaves' dtypes; is_autocast_enabled and "
        "get_autocast_dtype report the block's state, a nested block with enabled=False turns it off, "
        "leaving restores the state before; autocast('cuda') without CUDA and a dtype other than "
        "bfloat16 or float16 on CPU are disabled with torch's UserWarnings.",
        "https://pytorch.org/docs/stable/amp.html",
    ),
    Rule(
        "API-009",
        FAMILY,
        "torch.amp.GradScaler('cpu') multiplies a loss by its scale, unscale_ and step divide the "
        "gradients by it, step skips the optimizer's step when a gradient holds an inf or a NaN, and "
        "update then multiplies the scale by backoff_factor, else by growth_factor after growth_interval "
        "steps in a row (get_scale and state_dict show it).",
        "https://pytorch.org/docs/stable/amp.html#gradient-scaling",
    ),
]
