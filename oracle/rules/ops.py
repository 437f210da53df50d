"""Rules of the family "op values and gradients": what each op of impl's op list computes, with
which dtype, which gradient and graph, and what it saves (so when a second backward raises).
Checked in conformance/test_ops.py."""

from oracle.rules import Rule

FAMILY = "op values and gradients"
_DOCS = "https://pytorch.org/docs/stable"
_DERIVATIVES = "https://github.com/pytorch/pytorch/blob/main/tools/autograd/derivatives.yaml"

RULES = [
    Rule(
        "OPS-001",
        FAMILY,
        "Elementwise unary ops (exp, log, sqrt, sin, cos, tan, their inverses asin/acos/atan, sinh, "
        "cosh, asinh, acosh, atanh (aliases arcsin, arccos, arctan, arcsinh, arccosh, arctanh), tanh, "
        "erf, erfc, lgamma, digamma, polygamma (of order n), mvlgamma (of dimension p), erfinv, i0, "
        "torch.special's i1 and ndtr, "
        "sigmoid, relu, abs, sgn, neg, positive, square, log1p, expm1, log2, log10, exp2, rsqrt, "
        "reciprocal, frac, sinc, logit (with eps), deg2rad, rad2deg, nan_to_num, floor, ceil, round "
        "(with decimals), trunc (fix), sign, clamp, pow with a scalar exponent) and their in-place "
        "forms, on floating, integer and bool tensors, give torch's values (zeros, infinities and NaN "
        "included), result dtype, gradient and grad_fn, and torch's errors (a float result an integer "
        "tensor cannot hold in place, kernels without a bool or integer version); the predicates "
        "isinf, isposinf, isneginf and signbit give bool results that require no grad; a second "
        "backward without retain_graph raises exactly when the op saved a tensor.",
        _DERIVATIVES,
    ),
    Rule(
        "OPS-002",
        FAMILY,
        "Binary ops (+ - * / ** % and their reflected forms, maximum, minimum, where, atan2, hypot, "
        "fmod, remainder, fmax, fmin, copysign, xlogy, logaddexp, logaddexp2, float_power, heaviside, "
        "isclose with rtol/atol/equal_nan, the regularized incomplete gamma functions igamma and "
        "igammac (torch.special's gammainc and gammaincc: a gradient for x only, torch's error for a)) "
        "and the ternary lerp, addcmul and addcdiv (with their in-place forms) broadcast their "
        "operands, promote dtypes as torch does (tensors and Python scalars), reduce gradients "
        "back to each operand's shape, and reject the dtype combinations (and integer division by "
        "zero) torch rejects with its message.",
        f"{_DOCS}/notes/broadcasting.html",
    ),
    Rule(
        "OPS-003",
        FAMILY,
        "Reductions (sum, mean, prod, var, std, max, min, amax, logsumexp, nansum, nanmean, all, any, "
        "count_nonzero) over all elements, a dim or a list of dims, with keepdim, the two-output "
        "reductions aminmax, var_mean and std_mean (one node for both outputs, backpropagated through "
        "either or both), and scans (cumsum, cumprod, logcumsumexp, cummax, cummin: which index among "
        "ties and NaN), and the norms (linalg.vector_norm of every ord, linalg.matrix_norm 'fro', 1, -1, "
        "inf, -inf, linalg.norm, torch.norm: LinalgVectorNormBackward0 with torch's subgradient at a zero "
        "norm and the inf norm's gradient shared by the maxima), and the distances (cdist of every p "
        "and compute mode, batched, CdistBackward0 or EuclideanDistBackward0 on torch's matrix product "
        "path; cosine_similarity with dim, eps and broadcasting; pairwise_distance with p, eps, keepdim; "
        "both also as the modules nn.CosineSimilarity and nn.PairwiseDistance, printed as torch's), "
        "on every dtype, give torch's values, "
        "indices, dtypes, gradients and errors for bad dims and arguments.",
        f"{_DOCS}/torch.html#reduction-ops",
    ),
    Rule(
        "OPS-004",
        FAMILY,
        "Matrix products (matmul and @ with 1-d, 2-d and batched operands, mm, bmm, addmm, trace, "
        "einsum with explicit and implicit outputs, ellipses, diagonals and several operands; the "
        "add-products addmv, addr and addbmm with a broadcast input, beta and alpha; the vector "
        "products inner, vdot and ger; adjoint; chain_matmul with its deprecation warning) "
        "give torch's values, gradients, grad_fn names (einsum's: the permutes, bmm and views torch "
        "decomposes it into) and shape and equation errors.",
        f"{_DOCS}/generated/torch.matmul.html",
    ),
    Rule(
        "OPS-005",
        FAMILY,
        "cat, stack, gather, index_select, take, masked_fill, softmax, log_softmax and nn.functional.one_hot "
        "give torch's values, gradients and graph, and torch's errors for bad dims, indices and shapes.",
        _DERIVATIVES,
    ),
    Rule(
        "OPS-006",
        FAMILY,
        "Indexing reads (integers, lists, tuples and ranges read as sequences, integer and boolean "
        "tensors, narrow, select, narrow_copy, Tensor.unfold's windows) and writes "
        "(__setitem__ with a scalar or a tensor) give torch's values, gradients and graph.",
        f"{_DOCS}/tensor_view.html",
    ),
    Rule(
        "OPS-007",
        FAMILY,
        "In-place ops (add_, sub_, mul_, div_, zero_, fill_, copy_, clamp_, relu_, masked_fill_) "
        "follow torch's rules: they bump the version counter, rewire the graph of the tensor they "
        "modify, are refused on leaves that require grad, and make a backward that needs a value "
        "they overwrote raise torch's error.",
        f"{_DOCS}/notes/autograd.html#in-place-operations-with-autograd",
    ),
    Rule(
        "OPS-008",
        FAMILY,
        "Sorting and selection ops (sort with descending and stable, argsort, msort, topk with "
        "largest and sorted, kthvalue, median of all elements or along a dim) give torch's values "
        "and indices (NaN sorting as the largest value, ties in torch's order on lanes of up to "
        "three elements), dtypes, value-selecting gradients and graph, and torch's errors for bad "
        "dims, an out-of-range k, empty dims and bool inputs; searchsorted and bucketize give torch's "
        "insertion points (left or right, with a sorter, lane by lane, NaN last, compared in the "
        "result type) and its errors; unique and unique_consecutive (inverse indices, counts, dim), "
        "nonzero (as_tuple), argwhere, bincount (weights, minlength) and histc (bins, min, max) give "
        "torch's values, dtypes, "
        "nodes (unique's, whose backward raises) and errors.",
        f"{_DOCS}/generated/torch.sort.html",
    ),
    Rule(
        "OPS-009",
        FAMILY,
        "Shape ops (tril, triu and tril_/triu_, roll, diagonal, movedim/moveaxis, swapaxes/swapdims, "
        "broadcast_to, flipud, fliplr, ravel, unflatten, repeat, tile, diag, diag_embed, rot90, "
        "broadcast_tensors, hstack, vstack/row_stack, dstack, column_stack, tensor_split, hsplit, vsplit, "
        "dsplit, split (a size or sizes), chunk, unbind, "
        "diff (n, dim, prepend/append), atleast_1d/2d/3d (of one tensor or several), "
        "tril_indices/triu_indices (offset, index dtypes), repeat_interleave (int or tensor counts, "
        "dim, output_size), meshgrid (indexing, torch's warning without it), and the scatter ops "
        "scatter (a tensor src or a number, reduce='add'/'multiply'), "
        "scatter_add, index_add (alpha), index_copy and their in-place forms scatter_/scatter_add_/"
        "index_add_/index_copy_) give torch's values, dtypes, views "
        "(a view shares the base's memory and version counter exactly where torch's does), gradients "
        "(each element's in its place), "
        "grad_fn names and errors (index dtype, shapes, range, in torch's order); scatter's src writes use "
        "distinct indices (which of duplicates wins is undefined in torch), as do index_copy's; "
        "scatter_add's and index_add's repeat them.",
        _DERIVATIVES,
    ),
    Rule(
        "OPS-010",
        FAMILY,
        "Comparisons (eq, ne, lt, le, gt, ge, NumPy's names not_equal, less, less_equal, greater, "
        "greater_equal, and the operators == != < <= > >=) of two broadcastable tensors of any dtypes, "
        "or of a tensor and a Python number, compare in the promoted dtype and give bool tensors that "
        "require no grad: NaN is unequal to everything (itself included) and neither less nor greater, "
        "-0.0 equals 0.0, infinities compare as numbers; their in-place forms (eq_ ... ge_ and the "
        "NumPy names' not_equal_ ... greater_equal_) write the result in self's dtype, record torch's "
        "node (EqBackward0/1 ...) when self or other requires grad, and refuse an other broadcasting "
        "self to a larger shape.",
        f"{_DOCS}/generated/torch.ge.html",
    ),
    Rule(
        "OPS-011",
        FAMILY,
        "The reductions whose choices are torch's CPU kernels' give torch's values, indices, graph, "
        "gradients and errors: nanmedian of all elements or along a dim (the index std::nth_element "
        "picks, NaN ignored, a lane of NaN only included), mode along a dim (the index among equal "
        "values that libstdc++'s std::sort leaves, on lanes of any length, bool included), quantile "
        "and nanquantile (q a number or a 0-d or 1-d tensor requiring grad or not, every "
        "interpolation, dim and keepdim; torch's composite graph), isin (tensors or numbers of any "
        "dtypes, invert, assume_unique) and histogram (int bins with a range or edges, weight, "
        "density; its NotImplemented node).",
        f"{_DOCS}/torch.html#reduction-ops",
    ),
    Rule(
        "OPS-012",
        FAMILY,
        "Structure and product ops: cross and linalg.cross (dim given, or torch.cross's deprecated "
        "default with its warning), dist (every p), renorm (every p, dim and maxnorm: torch's CPU factor "
        "maxnorm / (norm + 1e-7), RenormBackward0 with torch's renorm_backward; a non-positive p, a "
        "negative maxnorm, fewer than 2 dims refused), block_diag (0-d, 1-d, empty and 2-d blocks, "
        "BlockDiagBackward0 with torch's gradient offsets), and those torch composes of others (kron, "
        "tensordot with dims an int or two dim lists, take_along_dim with and without dim, diagflat, "
        "cartesian_prod, combinations (r, with_replacement), trapezoid, trapz and cumulative_trapezoid "
        "with samples x or a spacing dx, linalg.vecdot, linalg.diagonal, cov with correction, fweights "
        "and aweights, corrcoef, vander and linalg.vander, linalg.multi_dot in torch's order of "
        "products) give torch's values, promoted dtypes, gradients, grad_fn names (those of the parts "
        "torch composes them of), warnings and torch's errors for mismatched shapes, dims and dtypes; "
        "the integer ops gcd, lcm, bitwise_left_shift and bitwise_right_shift (the operators << and >>,"
        " reflected and in place) give torch's values on every integer dtype (shift amounts past the "
        "bit width or negative included) and refuse bool and floating operands as torch does; the "
        "shape and index queries broadcast_shapes (ints, sequences and None), is_nonzero (of one "
        "element of any dtype, NaN included) and unravel_index (integer indices, negative ones too, "
        "into an int or a sequence shape) give torch's results as they print, and torch's errors for "
        "mismatched or negative sizes, tensors of no or several elements and floating indices.",
        _DERIVATIVES,
    ),
    Rule(
        "OPS-013",
        FAMILY,
        "The ops on a float's representation give torch's values, dtypes, gradients, graph and errors: "
        "frexp (the named tuple of a mantissa in [0.5, 1) and an int32 exponent, FrexpBackward0 through "
        "the mantissa; integer inputs refused), ldexp (an integer exponent scales exactly in the input's "
        "dtype (a result the exponent broadcasts wider included); a floating one "
        "multiplies by pow(2, other) in torch's dtypes; LdexpBackward0 for both operands) and nextafter "
        "(the neighbouring float in the promoted dtype, the other itself where they are equal; its "
        "gradient passes to self except there, none to other) and their in-place forms.",
        _DERIVATIVES,
    ),
    Rule(
        "OPS-014",
        FAMILY,
        "index_put (a tuple of index tensors: rows and columns, rows, bool masks, negative indices) "
        "and put (flat indices into the tensor read as 1-d) and their in-place forms write the values "
        "(broadcast to what the indices select), or add them with accumulate=True (repeated indices "
        "adding up), and give torch's values, gradients (IndexPutBackward0, PutBackward0: self's "
        "gradient zero where a write went unless accumulating) and errors (values of another dtype "
        "or shape, an index out of range, a float index); writes use distinct indices (which of "
        "duplicates wins is undefined in torch). So do index_fill/index_fill_ (a number or a 0-d "
        "tensor value; IndexFillBackward0/1), masked_scatter/masked_scatter_ (MaskedScatterBackward0) and "
        "fill_diagonal_ (wrap; CopySlices), and select_scatter/slice_scatter/diagonal_scatter (src "
        "written into the view; Select/Slice/DiagonalScatterBackward0), with torch's checks in its order "
        "(in place: autograd's first).",
        f"{_DOCS}/generated/torch.Tensor.index_put_.html",
    ),
]
