"""Rules of the module families: "module hooks" (conformance/test_module_hooks.py), "modules and
losses" (conformance/test_modules.py) and "optimisers" (conformance/test_optim.py)."""

from oracle.rules import Rule

HOOKS = "module hooks"
MODULES = "modules and losses"
OPTIM = "optimisers"
_MODULE = "https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module"
_GLOBAL = "https://pytorch.org/docs/stable/generated/torch.nn.modules.module"
_NN = "https://pytorch.org/docs/stable/generated/torch.nn"
_OPTIM = "https://pytorch.org/docs/stable/generated/torch.optim"

RULES = [
    Rule(
        "MHOOK-001",
        HOOKS,
        "Forward pre-hooks run before each call of a module with its positional inputs and forward "
        "hooks after it with inputs and output, in registration order (prepend=True puts a hook "
        "first); a returned value replaces the inputs or the output.",
        f"{_MODULE}.register_forward_hook",
    ),
    Rule(
        "MHOOK-002",
        HOOKS,
        "With with_kwargs=True, forward pre-hooks and forward hooks also receive the keyword "
        "arguments of the call, and a pre-hook returns (args, kwargs) to replace them.",
        f"{_MODULE}.register_forward_pre_hook",
    ),
    Rule(
        "MHOOK-003",
        HOOKS,
        "A forward hook registered with always_call=True runs even when the forward raises (with "
        "output None), and the forward's error still propagates.",
        f"{_MODULE}.register_forward_hook",
    ),
    Rule(
        "MHOOK-004",
        HOOKS,
        "Full backward pre-hooks receive the gradients of a module's outputs and full backward hooks "
        "the gradients of its inputs and outputs (None for an input that does not require grad); "
        "what they return replaces grad_output or grad_input.",
        f"{_MODULE}.register_full_backward_hook",
    ),
    Rule(
        "MHOOK-005",
        HOOKS,
        "A full backward (pre-)hook returning the wrong number of gradients, or a gradient of the "
        "wrong shape, makes backward raise torch's RuntimeError.",
        f"{_MODULE}.register_full_backward_pre_hook",
    ),
    Rule(
        "MHOOK-006",
        HOOKS,
        "The legacy register_backward_hook receives the gradients of the last autograd node of the "
        "module's forward (for Linear: bias, input and weight gradients) and warns with a "
        "FutureWarning when the forward has several nodes.",
        "seed 004",
    ),
    Rule(
        "MHOOK-007",
        HOOKS,
        "Global module hooks (register_module_forward_pre_hook, _forward_hook, _full_backward_hook, "
        "_full_backward_pre_hook) fire for every module, before the module's own hooks of the same "
        "kind, until removed.",
        f"{_GLOBAL}.register_module_forward_hook.html",
    ),
    Rule(
        "MHOOK-008",
        HOOKS,
        "Module hooks of every kind on the nodes of a nested module tree fire once per call of their "
        "module (twice for a module called twice), from the outer module in, and backward hooks "
        "from the output back; a removed hook no longer fires.",
        f"{_MODULE}.register_full_backward_hook",
    ),
    Rule(
        "MHOOK-009",
        HOOKS,
        "State-dict hooks run as torch runs them: state_dict pre-hooks before a module saves, its "
        "post-hooks after its children with the whole dict (a public post-hook must return None, a "
        "legacy _register_state_dict_hook's returned dict replaces the root's result only); load "
        "pre-hooks (with or without the module) before a module loads, on the dict its children's "
        "dicts are then cut from, post-hooks after its children with the missing and unexpected "
        "keys they may edit in place (returning a value raises); strict and assign as torch's.",
        f"{_MODULE}.register_load_state_dict_post_hook",
    ),
    Rule(
        "MOD-001",
        MODULES,
        "Nested Sequential, ModuleList, ModuleDict and custom modules over Linear (1-d, 2-d and N-d "
        "inputs), Conv2d and activation layers compute torch's outputs, grad_fn names and parameter "
        "gradients, called once or several times; nn.Bilinear, torch.bilinear and F.bilinear give "
        "torch's outputs, TrilinearBackward0 graphs, gradients, printed form and errors.",
        f"{_NN}.Sequential.html",
    ),
    Rule(
        "MOD-002",
        MODULES,
        "named_parameters() lists parameters depth first in registration order, state_dict() has "
        "the same keys, and train()/eval() set the training flag of every submodule.",
        f"{_MODULE}.named_parameters",
    ),
    Rule(
        "MOD-003",
        MODULES,
        "Module.zero_grad() sets every parameter's .grad to None (or to zeros with "
        "set_to_none=False), so that gradients no longer accumulate across backward calls.",
        "seed 001",
    ),
    Rule(
        "MOD-004",
        MODULES,
        "MSELoss, HuberLoss (its delta too), L1Loss, CrossEntropyLoss (class indices or probabilities), "
        "NLLLoss, BCELoss, "
        "BCEWithLogitsLoss, SmoothL1Loss (beta) and KLDivLoss (log_target) give torch's values and "
        "gradients with every reduction.",
        f"{_NN}.CrossEntropyLoss.html",
    ),
    Rule(
        "MOD-005",
        MODULES,
        "Dropout is the identity in eval mode; in train mode p=0 keeps and p=1 zeroes every element.",
        f"{_NN}.Dropout.html",
    ),
    Rule(
        "MOD-006",
        MODULES,
        "Conv2d with any stride, padding (ints, pairs, 'valid', 'same'), dilation, groups, bias and "
        "padding_mode (zeros, reflect, replicate, circular), followed or not by an in-place ReLU or "
        "LeakyReLU, gives torch's outputs, graph and gradients, batched or not; so do Conv1d, Conv3d, "
        "ConvTranspose1d, ConvTranspose2d and ConvTranspose3d (output_padding), printed as torch's.",
        f"{_NN}.Conv2d.html",
    ),
    Rule(
        "MOD-007",
        MODULES,
        "GELU (approximate 'none' through erf, or 'tanh'), SiLU, Mish, ELU (alpha), Softplus (beta, "
        "threshold), Hardtanh (min_val, max_val), ReLU6, LogSigmoid and Softsign, in place where "
        "torch allows it, give torch's values at zeros, bounds, thresholds and infinities, grad_fn "
        "names, gradients and second-order gradients (GeluBackwardBackward0 ...).",
        f"{_NN}.GELU.html",
    ),
    Rule(
        "MOD-008",
        MODULES,
        "Embedding (padding_idx, negative too, scale_grad_by_freq, max_norm with norm_type, which "
        "renormalises the looked-up rows of the weight in place) gives torch's rows, weight, "
        "EmbeddingBackward0 and its gradient (none at padding_idx, divided by the index counts), "
        "and the second-order graph of EmbeddingDenseBackwardBackward0; EmbeddingBag (mode sum, mean "
        "or max, padding_idx, max_norm, include_last_offset, per_sample_weights) on offsets or a 2-D "
        "input gives torch's bags, EmbeddingBagBackward0 and gradients.",
        f"{_NN}.Embedding.html",
    ),
    Rule(
        "MOD-009",
        MODULES,
        "MaxPool1d/2d/3d (stride, padding, dilation, ceil_mode), AvgPool1d/2d/3d (count_include_pad, "
        "divisor_override) and AdaptiveAvgPool1d/2d/3d and AdaptiveMaxPool1d/2d/3d give torch's values "
        "(the first of tied maxima), MaxPool2DWithIndicesBackward0/3D, AvgPool2DBackward0/3D and the "
        "adaptive pools' nodes, and their gradients.",
        f"{_NN}.MaxPool2d.html",
    ),
    Rule(
        "MOD-010",
        MODULES,
        "BatchNorm1d/2d/3d normalise by the batch's statistics in training and update running_mean, the "
        "unbiased running_var (momentum, or a cumulative average with momentum=None) and "
        "num_batches_tracked, and by the running statistics in eval mode; LayerNorm and GroupNorm "
        "normalise per sample; all with torch's values, Native*NormBackward0 nodes and gradients. "
        "InstanceNorm1d/2d/3d (affine, track_running_stats, momentum; batched or not) normalise each "
        "sample's channels through batch norm of a per-sample view (running statistics the mean of "
        "the samples' updates), RMSNorm (eps, elementwise_affine) by rsqrt(mean(x^2) + eps) as "
        "ATen's composite, LocalResponseNorm (size, alpha, beta, k; 3-D to 5-D input) as torch's "
        "composition of pad and avg_pool2d/3d and CrossMapLRN2d as torch's legacy Function "
        "(CrossMapLRN2dBackward), with torch's values, graphs and gradients.",
        f"{_NN}.BatchNorm2d.html",
    ),
    Rule(
        "MOD-011",
        MODULES,
        "RNN (tanh, relu), LSTM (proj_size) and GRU with num_layers, bias, batch_first, dropout and "
        "bidirectional, and RNNCell, LSTMCell and GRUCell, on batched or unbatched inputs with or "
        "without h0/c0, give torch's outputs and final states, graphs (UnsafeSplitBackward0, "
        "MkldnnRnnLayerBackward0 ...), gradients, parameter names and printed forms; "
        "nn.utils.rnn.pad_sequence (batch_first, padding_value, padding_side) gives torch's padded "
        "tensor, CopySlices graph, gradients and errors; RNN, LSTM and GRU on a PackedSequence "
        "(pack_padded_sequence with batch_first and enforce_sorted, h0/c0 permuted to the sorted "
        "order and h_n/c_n back) give torch's packed output, each sequence's final states, graphs and "
        "gradients, and pad_packed_sequence (batch_first, padding_value, total_length) torch's "
        "padded output and lengths; the packing functions raise torch's errors.",
        f"{_NN}.LSTM.html",
    ),
    Rule(
        "MOD-012",
        MODULES,
        "After torch.manual_seed, Dropout, Dropout1d/2d/3d, AlphaDropout and FeatureAlphaDropout in "
        "train mode (and F.dropout ..., torch.dropout, feature_dropout, alpha_dropout, in place or not) "
        "draw torch's masks from its CPU stream, per element or per channel, scale (and shift) the "
        "kept values as torch's, give MulBackward0 or AddBackward0 and torch's gradients, warn as torch "
        "on inputs of other dimensions (Dropout2d on 3-D input), and are the identity in eval mode; "
        "RReLU (lower, upper; F.rrelu, torch.rrelu, in place or not) draws torch's slope for each "
        "element at or below zero in train mode, is a leaky ReLU of the bounds' mean in eval mode, "
        "with RreluWithNoiseBackward0/1 and torch's gradients.",
        f"{_NN}.Dropout2d.html",
    ),
    Rule(
        "MOD-013",
        MODULES,
        "print(model) of nested Sequential, ModuleList and ModuleDict trees shows torch's text: each "
        "child on its own line under its name, indented, with its extra_repr options (Linear, Conv2d, "
        "Flatten, Unflatten, the dropout, activation, pooling and normalisation layers, Embedding); "
        "Unflatten and Flatten compute torch's views.",
        f"{_NN}.Module.html#torch.nn.Module.extra_repr",
    ),
    Rule(
        "MOD-014",
        MODULES,
        "LazyLinear, LazyConv2d, LazyConv1d, LazyBatchNorm1d and LazyBatchNorm2d hold "
        "UninitializedParameters (printed with in_features=0 or 0 "
        "channels; their shape refused with torch's RuntimeError) until the first call, which infers "
        "the input's features, materializes and initialises the parameters on torch's random stream "
        "(weight, then bias: a seeded program gets torch's weights) and turns the module into Linear, "
        "Conv2d or BatchNorm2d ..., printed and computed as torch's.",
        f"{_NN}.LazyLinear.html",
    ),
    Rule(
        "MOD-015",
        MODULES,
        "F.scaled_dot_product_attention (bool or float attn_mask, is_causal, scale, dropout_p after a "
        "seed, enable_gqa) on 2-, 3- and 4-D inputs runs torch's CPU kernel: the flash kernel "
        "(ScaledDotProductFlashAttentionForCpuBackward0) for 4-D inputs without dropout, a mask that "
        "requires grad or of another rank, else the math path's ops (SafeSoftmaxBackward0 ...), with "
        "torch's values, gradients and graphs.",
        f"{_NN}.functional.scaled_dot_product_attention.html",
    ),
    Rule(
        "MOD-016",
        MODULES,
        "MultiheadAttention (bias, add_bias_kv, add_zero_attn, kdim/vdim, batch_first, dropout after a "
        "seed) makes torch's parameters from the random stream (names, order, xavier init), prints as "
        "torch's, and on self- or cross-attention, batched or not, with a bool or float attn_mask and "
        "a key_padding_mask gives torch's output, averaged attention weights, graphs and gradients.",
        f"{_NN}.MultiheadAttention.html",
    ),
    Rule(
        "MOD-017",
        MODULES,
        "TransformerEncoderLayer and TransformerDecoderLayer (norm_first, relu or gelu, batch_first, "
        "bias, dropout after a seed) make torch's parameters from the random stream, print as torch's "
        "and, with a causal or bool mask and key padding masks, give torch's outputs, graphs and "
        "gradients.",
        f"{_NN}.TransformerEncoderLayer.html",
    ),
    Rule(
        "MOD-018",
        MODULES,
        "SELU, CELU (alpha), Hardswish, Hardsigmoid, Hardshrink and Softshrink (lambd) and "
        "Tanhshrink, in place where torch allows it, give torch's values at zeros, band edges, "
        "thresholds and infinities, grad_fn names (EluBackward0 for SELU, CeluBackward0/1), "
        "gradients and second-order gradients (HardswishBackwardBackward0, the NotImplemented node "
        "under Hardsigmoid's).",
        f"{_NN}.SELU.html",
    ),
    Rule(
        "MOD-020",
        MODULES,
        "Unfold and Fold (F.unfold, F.fold: kernel_size, dilation, padding, stride, batched or not) "
        "give torch's blocks and sums, Im2ColBackward0 and Col2ImBackward0 (each the other's "
        "derivative), gradients, printed forms and errors for inputs and options torch refuses; "
        "UpsamplingNearest2d and UpsamplingBilinear2d (size or scale_factor) give torch's values, "
        "nodes and gradients, and the deprecated F.upsample, upsample_nearest and upsample_bilinear "
        "torch's results and UserWarnings; ChannelShuffle, ZeroPad3d, ConstantPad3d, ReflectionPad3d, "
        "ReplicationPad3d, CircularPad1d/2d/3d, LPPool1d/2d (norm_type finite or infinite, stride, "
        "ceil_mode) and MaxUnpool1d/2d/3d (MaxUnpool2DBackward0/3D) give torch's values, nodes, gradients "
        "and printed forms; F.affine_grid (2-D and 3-D) and F.grid_sample ('bilinear' or 'nearest', "
        "padding_mode 'zeros', 'border' or 'reflection', align_corners given or not, 4-D and 5-D) "
        "give torch's grids, samples, "
        "AffineGridGeneratorBackward0 and GridSampler2DBackward0/3D nodes, gradients of input, grid "
        "and theta, warnings and errors.",
        f"{_NN}.Fold.html",
    ),
    Rule(
        "MOD-019",
        MODULES,
        "CosineEmbeddingLoss (margin; targets 1, -1 and 0, integer or float), MultiMarginLoss (p, "
        "margin, class weight), MultiLabelMarginLoss (each frame's classes up to its first -1), "
        "MultiLabelSoftMarginLoss (weight) and TripletMarginWithDistanceLoss (margin, swap) give "
        "torch's values, graphs (MultiMarginLossBackward0, MultilabelMarginLossBackward0, the "
        "composites' nodes) and gradients with every reduction, hinge terms at exactly 0 counted out.",
        f"{_NN}.MultiMarginLoss.html",
    ),
    Rule(
        "OPT-001",
        OPTIM,
        "SGD (lr, momentum, dampening, weight_decay, nesterov, maximize) moves the parameters as "
        "torch's does, step after step.",
        f"{_OPTIM}.SGD.html",
    ),
    Rule(
        "OPT-002",
        OPTIM,
        "Adam and AdamW (amsgrad, maximize, weight_decay) move the parameters as torch's do, step "
        "after step, in a training loop with zero_grad.",
        f"{_OPTIM}.Adam.html",
    ),
    Rule(
        "OPT-003",
        OPTIM,
        "RMSprop (alpha, momentum, centered), Adagrad (lr_decay, initial_accumulator_value, its state "
        "made at construction) and Adadelta (rho), with weight_decay and maximize, move the parameters "
        "as torch's do, step after step, in a training loop with zero_grad.",
        f"{_OPTIM}.RMSprop.html",
    ),
    Rule(
        "OPT-004",
        OPTIM,
        "Adamax (its infinity norm), NAdam (momentum_decay, the running mu product, "
        "decoupled_weight_decay) and RAdam (rectified from the sixth step on, decoupled_weight_decay), "
        "with weight_decay and maximize, move the parameters as torch's do over six or seven steps.",
        f"{_OPTIM}.NAdam.html",
    ),
    Rule(
        "OPT-005",
        OPTIM,
        "A learning-rate scheduler (StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, LambdaLR, "
        "OneCycleLR cycling momentum or beta1, ReduceLROnPlateau with patience, threshold and cooldown, "
        "MultiplicativeLR, ConstantLR, LinearLR, PolynomialLR, CosineAnnealingWarmRestarts, CyclicLR in "
        "its modes cycling momentum or beta1 (refused without either), SequentialLR and "
        "ChainedScheduler of others) sets torch's learning rates after each step(), to the bit "
        "(chainable forms, and closed forms under step(epoch)), holds torch's state_dict, and warns as "
        "torch does when stepped before the optimizer or given an epoch.",
        "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
    ),
    Rule(
        "OPT-006",
        OPTIM,
        "nn.utils.clip_grad_norm_ returns torch's total norm (the norm_type norm of the gradients' "
        "norms, inf and -inf included, of mixed dtypes) and multiplies each .grad in place by "
        "max_norm / (total + 1e-6) clamped to 1 (NaN and inf gradients scaled as torch's, or refused "
        "with error_if_nonfinite); clip_grad_value_ clamps each .grad in place into [-v, v].",
        "https://pytorch.org/docs/stable/generated/torch.nn.utils.clip_grad_norm_.html",
    ),
    Rule(
        "OPT-007",
        OPTIM,
        "Rprop (etas, step_sizes: each step size grown or shrunk by the gradient's sign change) and "
        "ASGD (lambd, alpha, t0, weight_decay), with maximize, move the parameters as torch's do, step "
        "after step, in a training loop with zero_grad.",
        f"{_OPTIM}.Rprop.html",
    ),
]

