"""Each op's call, its recording function and its node's ``apply``/``release``, generated from its
OpDef, as torch's autograd codegen turns derivatives.yaml into one ``VariableType`` function and
one node class (``Functions.cpp``) per op.

The call (``call_source``, what ``table.apply`` runs) wraps numbers, promotes, runs the forward on
the arrays, lays out and wraps the result and records the node when an input needs a gradient:
the same steps for every op, here with the op's arity, promotion, view-ness and differentiable
inputs baked in instead of looped over on every call.

Recording a node is the same steps for every op (make the node, find each input's edge, keep the
inputs' metadata, save what the derivatives of the inputs that need a gradient use, attach the node
to the result), but doing them by interpreting the op's plan costs a loop per input and per saved
value on every call. Generated once per op, the steps are straight-line code with the op's shape
baked in; ``OpDef.record_source`` shows it. For ``MulBackward0``::

    def record(tensors, attrs, results):
        node = _new(node_class)
        node._sequence_nr = next(_sequence)
        node._attrs = NOTHING_SAVED
        node._sv_other = node._sv_self = None
        t0, t1 = tensors
        if t0._base_ is not None:
            edge0 = t0._edge()
        elif t0._grad_fn_ is not None:
            edge0 = (t0._grad_fn_, t0._output_nr)
        elif t0._requires_grad:
            edge0 = t0._edge()
        else:
            edge0 = NO_EDGE
        if t1._base_ is not None:
            edge1 = t1._edge()
        elif t1._grad_fn_ is not None:
            edge1 = (t1._grad_fn_, t1._output_nr)
        elif t1._requires_grad:
            edge1 = t1._edge()
        else:
            edge1 = NO_EDGE
        node._fn0, node._nr0 = edge0
        node._rest = edge1
        meta = (t0._data.shape, t0._data.dtype, t1._data.shape, t1._data.dtype)
        node._in_meta = _IN_META.get(meta) or shared_in_meta(meta)
        saved = None
        if attrs:
            saved = attrs.copy()
            for k, v in attrs.items():
                if isinstance(v, Tensor):
                    del saved[k]
        if edge0[0] is not None:
            if t1._counter is None and not t1._inference and not _saved_hooks.stack:
                node._sv_other = t1
            else:
                node._sv_other = _save(t1, None)
        if edge1[0] is not None:
            if t0._counter is None and not t0._inference and not _saved_hooks.stack:
                node._sv_self = t0
            else:
                node._sv_self = _save(t0, None)
        if saved:
            node._attrs = saved
        result = results[0]
        result._grad_fn_ = node
        result._output_nr = 0
        data = result._data
        meta = _OUTPUT_META.get((data.shape, data.dtype, type(data)))
        node._input_meta = meta or output_meta(result)

The node's ``apply`` (``apply_source``) unpacks every saved value first, then calls the formula
of each input whose edge leads somewhere; ``release`` (``release_source``) frees its saved tensors.

What gets saved follows the codegen's rule (``_guarded_uses``): a value only one input's derivative
uses, of an op with several differentiable inputs, is saved only when that input's gradient goes
somewhere; other values whenever the node is recorded. Saved tensors go to the node's slots (an
input kept bare while unwritten, an output as a SavedTensor naming the node, see
``table._save``); attributes and strides go to ``node._attrs``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from impl._ops.table import OpDef


def call_source(op: OpDef) -> str:
    """The Python source of ``op``'s call ``call(tensors, attrs)`` (what ``table.apply`` runs): wrap
    Python numbers as torch does, cast to the common dtype when the op promotes, run the forward on
    the arrays (numpy's floating-point warnings silenced, torch's broadcast error), lay the result
    out as torch's TensorIterator does for an elementwise op, make a view's bookkeeping, and record
    the node when a differentiable input needs a gradient."""
    n = len(op.inputs)
    names = [f"t{i}" for i in range(n)]
    arrays = [f"a{i}" for i in range(n)]
    unpack = f"{_tuple(names)} = tensors"
    tensors = " and ".join(f"isinstance({t}, Tensor)" for t in names)
    lines = [
        "def call(tensors, attrs):",
        f"    {unpack}",
        f"    if not {tensors if n == 1 else f'({tensors})'}:",
    ]
    if n == 2:  # a tensor and a float (``h * 1.0001``): _wrap_numbers' first case, without its frame
        lines += [
            "        if type(t1) is float and isinstance(t0, Tensor):",
            "            tensors = (t0, _wrap(t1, t0))",
            "        else:",
            "            tensors = _wrap_numbers(tensors, op)",
        ]
    else:
        lines.append("        tensors = _wrap_numbers(tensors, op)")
    lines.append(f"        {unpack}")
    lines += [f"    a{i} = t{i}._data" for i in range(n)]
    lines.append("    xp = np if type(a0) is np.ndarray else namespace_of(a0)")
    if op.moves_device:  # the result's namespace: the result is wrapped by the target's asarray
        lines.append("    xp = attrs.pop('target')")
    if op.promote:  # to torch's result type (a float one for "float" ops)
        lines += _promote_lines(n, op.promote == "float")
    operands = ", ".join(arrays)
    if op.complex is None:  # an op that does not take complex operands refuses them
        complex_operand = " or ".join(f"{a}.dtype.kind == 'c'" for a in arrays)
        lines += [f"    if {complex_operand}:", "        raise complex_refused(op)"]
    lines += [
        "    token = quiet_enter()",
        "    try:",
        f"        raw = op.forward(xp, {operands}, **attrs) if attrs else op.forward(xp, {operands})",
        "    except ValueError as exc:",
        f"        _raise_broadcast_error(exc, op, ({_tuple(arrays)}), attrs)",
        "        raise",
        "    except TypeError:  # operands on two devices (never reached otherwise)",
        "        return _across_devices(op, tensors, attrs)",
        "    finally:",
        "        quiet_exit(token)",
        "    if type(raw) is tuple:",
        "        results = tuple([_from_array(r if type(r) is np.ndarray else xp.asarray(r)) for r in raw])",
        "        main = results[0]",
        "    else:",
    ]
    if op.iterator_operands:
        lines += [
            "        if raw.ndim > 1:  # a 0-d or 1-d result has one layout in both",
            f"            raw = _torch_layout(op, xp, raw, tensors, [{operands}], attrs)",
        ]
    lines += [
        "        main = _from_array(raw if type(raw) is np.ndarray else xp.asarray(raw))",
        "        results = None",
    ]
    if op.view:  # the result shares t0's memory and version counter
        lines += [
            "    if t0._inference:  # torch tracks no view of an inference tensor: an inference tensor",
            "        main._inference = True  # on the same memory (its storage, for storage_offset)",
            "        main._storage = t0._storage_array()",
            "    else:  # a view of a normal tensor is normal, in inference mode too",
            "        main._base_ = t0._base_ if t0._base_ is not None else t0",
            "        main._vc = t0._vc",
            "        main._view_version = t0._vc.value",
            "        main._inference = False",
            "        if not _grad_state.enabled or _grad_state.inference or t0._creation_meta:",
            "            main._creation_meta = _view_creation_meta(t0)",
        ]
    # an input needs a gradient if it requires grad itself or, being a view, through its base
    needs = [
        f"t{i}._requires_grad or t{i}._grad_fn_ is not None or "
        f"t{i}._base_ is not None and t{i}._base_.requires_grad"
        for i, d in enumerate(op._plan.diff)
        if d
    ]
    # torch runs an op whose operands are all inference tensors below autograd (they lack its
    # dispatch keys): nothing is recorded, whatever requires grad
    normal = " or ".join(f"not t{i}._inference" for i in range(n))
    if needs:
        lines += [
            "    if _grad_state.enabled and not _grad_state.inference and main._data.dtype in GRAD_DTYPES:",
            f"        if ({' or '.join(needs)}) and ({normal}):",
            "            op._record(tensors, attrs, results or (main,))",
        ]
    if op.derivatives:  # forward AD: tangents in, a tangent out (see table._forward_grad)
        lines += [
            "    if forward_level.token is not None and forward_level.propagating:",
            "        _forward_grad(op, tensors, attrs, results or (main,))",
        ]
    lines.append("    return main if results is None or len(results) == 1 else results")
    return "\n".join(lines) + "\n"


def _promote_lines(n: int, to_float: bool) -> list[str]:
    """The operands cast to torch's result type ``dt``: ``table._common_float`` (the float dtype
    every operand but wrapped numbers shares) written out for one or two operands, with each
    operand's dtype read once and compared by identity first (numpy's dtype ``!=`` is a rich
    comparison), else ``compute_dtype``; an operand of another dtype is cast."""
    lines = [f"    d{i} = a{i}.dtype" for i in range(n)]
    if n == 1:
        lines.append("    dt = d0 if not t0._wrapped_number and d0.kind == 'f' else None")
    elif n == 2:
        lines += [
            "    if t0._wrapped_number:",
            "        dt = None if t1._wrapped_number or d0.kind == 'c' else d1",
            "    elif t1._wrapped_number and d1.kind != 'c' or d1 is d0 or d1 == d0:",
            "        dt = d0",
            "    else:",
            "        dt = None",
            "    if dt is not None and dt.kind != 'f':",
            "        dt = None",
        ]
    else:
        lines.append("    dt = _common_float(tensors)")
    lines += ["    if dt is None:", f"        dt = compute_dtype(tensors, {to_float}).np"]
    for i in range(n):
        lines += [f"    if d{i} is not dt and d{i} != dt:", f"        a{i} = _cast(t{i}, a{i}, dt)"]
    return lines


def record_source(op: OpDef) -> str:
    """The Python source of ``op``'s recording function ``record(tensors, attrs, results)``."""
    plan = op._plan
    n = len(op.inputs)
    names = [f"t{i}" for i in range(n)]
    lines = ["def record(tensors, attrs, results):", *_new_node_lines(op)]
    lines.append(f"    {_tuple(names)} = tensors")
    for i, d in enumerate(plan.diff):  # edges: NO_EDGE when the op has no derivative for the input
        lines += [f"    edge{i} = NO_EDGE"] if d is None else _edge_lines(i)
    lines.append("    node._fn0, node._nr0 = edge0")
    if n == 1:
        lines.append("    node._rest = ()")
    elif n == 2:  # the flat edges after the first are one (fn, nr) pair: the edge itself
        lines.append("    node._rest = edge1")
    else:
        lines.append(f"    node._rest = _tail([{', '.join(f'*edge{i}' for i in range(1, n))}])")
    if op.links_required_only and n > 1:
        edges = ", ".join(f"edge{i}" for i in range(n))
        lines.append(f"    node._next = tuple(edge for edge in ({edges}) if edge[0] is not None)")
    meta = ", ".join(f"t{i}._data.shape, t{i}._data.dtype" for i in range(n))
    lines += [f"    meta = ({meta})", "    node._in_meta = _IN_META.get(meta) or shared_in_meta(meta)"]
    # the node's _attrs: the op's attributes that are no tensors (a copy without them: a loop here,
    # not a comprehension's frame), then strides and attributes used
    kinds = {kind for sources in plan.sources if sources for _, kind, _, _ in sources}
    lines += [
        "    saved = {}" if kinds & {"strides", "attr"} else "    saved = None",
        "    if attrs:",
        "        saved = attrs.copy()",
        "        for k, v in attrs.items():",
        "            if isinstance(v, Tensor):",
        "                del saved[k]",
    ]
    written: set[str] = set()  # slots an earlier input may already have filled
    guarded = _guarded_uses(op)
    for sources in plan.sources:  # what is saved whenever the node is recorded, once each
        for use, kind, where, slot in sources or ():
            if use not in guarded and (slot or use) not in written:
                lines += ["    " + line for line in _save_lines(use, kind, where, slot, written, op)]
                written.add(slot or use)
    for i, sources in enumerate(plan.sources):  # what only input i's derivative uses
        mine = [source for source in sources or () if source[0] in guarded]
        if mine:
            lines.append(f"    if edge{i}[0] is not None:")
            for use, kind, where, slot in mine:
                lines += ["        " + line for line in _save_lines(use, kind, where, slot, written, op)]
    lines += ["    if saved:", "        node._attrs = saved"]
    if op.differentiable_outputs == 1:  # output_meta's shared tuple, looked up without its frame
        lines += [
            "    result = results[0]",
            "    result._grad_fn_ = node",
            "    result._output_nr = 0",
            "    data = result._data",
            "    meta = _OUTPUT_META.get((data.shape, data.dtype, type(data)))",
            "    node._input_meta = meta or output_meta(result)",
        ]
    else:  # the node is the grad_fn of each differentiable output, in order
        outputs = range(op.differentiable_outputs)
        for nr in outputs:
            lines += [f"    results[{nr}]._grad_fn_ = node", f"    results[{nr}]._output_nr = {nr}"]
        lines.append(f"    node._input_meta = {' + '.join(f'output_meta(results[{nr}])' for nr in outputs)}")
    return "\n".join(lines) + "\n"


def _new_node_lines(op: OpDef) -> list[str]:
    """The node made as ``node_class()`` makes it (``OpNode.__init__``: a sequence number, nothing
    saved, every slot empty), written out without the call and the loop over the slots."""
    init = next(c for c in op.node_class.__mro__ if "__init__" in vars(c))
    if (init.__module__, init.__name__) != ("impl._ops.table", "OpNode"):  # a node class's own
        return ["    node = node_class()"]
    lines = [
        "    node = _new(node_class)",
        "    node._sequence_nr = next(_sequence)",
        "    node._attrs = NOTHING_SAVED",
    ]
    if op._slot_names:
        lines.append(f"    {' = '.join(f'node.{slot}' for slot in op._slot_names)} = None")
    return lines


def _edge_lines(i: int) -> list[str]:
    """``edge<i> = _edge_of(t<i>)`` written out: a view asks the tensor (``_edge``), an output its
    grad_fn, a leaf that requires grad its accumulator (``_edge``), anything else leads nowhere."""
    t = f"t{i}"
    return [
        f"    if {t}._base_ is not None:",
        f"        edge{i} = {t}._edge()",
        f"    elif {t}._grad_fn_ is not None:",
        f"        edge{i} = ({t}._grad_fn_, {t}._output_nr)",
        f"    elif {t}._requires_grad:",
        f"        edge{i} = {t}._edge()",
        "    else:",
        f"        edge{i} = NO_EDGE",
    ]


def _guarded_uses(op: OpDef) -> set[str]:
    """The values saved only when the gradient of the one input whose derivative uses them goes
    somewhere: torch's codegen (gen_variable_type's guard_for) guards a saved tensor with
    ``should_compute_output`` only when the op has several differentiable inputs, exactly one of
    their derivatives uses it and the op is no backward op; anything else is saved whenever the
    node is recorded (an ``exp`` of a view whose gradient goes nowhere still saves its result), and
    outputs always (torch saves them unguarded: ``pow(a, b)`` keeps its result for b's gradient)."""
    plan = op._plan
    if sum(d is not None for d in plan.diff) <= 1 or op.node_name.count("Backward") > 1:
        return set()
    users: dict[str, int] = {}
    for sources in plan.sources:
        for use in {use for use, kind, _, _ in sources or () if kind not in ("strides", "output")}:
            users[use] = users.get(use, 0) + 1
    return {use for use, n in users.items() if n == 1}


def _tuple(items: list[str]) -> str:
    """``items`` as the elements of a Python tuple (``t0,`` for one, ``t0, t1`` for two)."""
    return ", ".join(items) + ("," if len(items) == 1 else "")


def _save_lines(use: str, kind: str, where: Any, slot: str | None, written: set[str], op: OpDef) -> list[str]:
    """Saving the value ``use`` that a derivative reads (see ``table._source`` for the kinds). An
    output the node is not the grad_fn of (max's indices) is saved as torch saves a leaf: no node
    named when it was written in place."""
    if kind == "strides":  # layout of an input, as derivatives.yaml's x.sym_strides()
        return [f"saved[{use!r}] = t{where}.stride()"]
    if kind == "attr":  # a tensor attribute is saved like a tensor, once
        return [
            f"v = attrs[{where!r}]",
            "if not isinstance(v, Tensor):",
            f"    saved[{use!r}] = v",
            f"elif {use!r} not in saved:",
            f"    saved[{use!r}] = _save(v, None)",
        ]
    if kind == "output":
        owner = "node" if where < op.differentiable_outputs else "None"
        lines = [f"node.{slot} = _save(results[{where}], {owner}, {where})"]
    else:  # an input never written, outside saved_tensors_hooks, is kept bare (_save's first case)
        t = f"t{where}"
        lines = [
            f"if {t}._counter is None and not {t}._inference and not _saved_hooks.stack:",
            f"    node.{slot} = {t}",
            "else:",
            f"    node.{slot} = _save({t}, None)",
        ]
    if slot in written:
        return [f"if node.{slot} is None:", *("    " + line for line in lines)]
    written.add(slot)
    return lines


def apply_source(op: OpDef) -> str:
    """The source of the node's ``apply(node, grads)``: as torch's generated ``apply``, every saved
    value is unpacked (checked) first, even when no gradient came (a saved tensor written in place
    raises all the same), then each input whose edge leads somewhere gets its derivative's
    formula ``f<i>(grad, ctx)`` (``f<i>(grads, ctx)``, the tuple of every differentiable output's
    gradient, for an op with several: see ``OpDef.differentiable_outputs``)."""
    plan = op._plan
    lines = ["def apply(node, grads):", "    held = False"]
    for slot in op._slot_names:  # a bare tensor without a version counter was never written
        lines += [
            f"    v = node.{slot}",
            "    if v is not None and (type(v) is SavedTensor or v._counter is not None):",
            "        held = _hold(v, node) or held",
        ]
    lines += [  # (_hold of a value that is no tensor does nothing)
        "    attrs = node._attrs",
        "    if attrs:",
        "        for v in attrs.values():",
        "            if type(v) is SavedTensor or isinstance(v, Tensor):",
        "                held = _hold(v, node) or held",
    ]
    if op.differentiable_outputs == 1:
        lines += ["    g = grads[0]", "    if g is None:"]
    else:  # the formulas get every output's gradient; they run when one is defined
        undefined = " and ".join(f"g[{nr}] is None" for nr in range(op.differentiable_outputs))
        lines += ["    g = grads", f"    if {undefined}:"]
    lines += [
        "        if held:",
        "            _drop(node)",
        f"        return {(None,) * len(op.inputs)!r}",
        "    ctx = _new(ctx_class)  # OpCtx(node) without an __init__ frame",
        "    ctx._node = node",
    ]
    grads = []
    for i, d in enumerate(plan.diff):
        edge = "node._fn0" if i == 0 else f"node._rest[{2 * i - 2}]"
        call = f"f{i}(g, ctx)"
        if op.complex == "holomorphic":  # a complex gradient: the formula sees conjugated values
            call = f"{call} if g._data.dtype.kind != 'c' else f{i}(g, ConjCtx(ctx))"
        grads.append("None" if d is None else f"None if {edge} is None else {call}")
    if len(grads) == 1:
        result = [f"return ({grads[0]},)"]
    else:
        result = ["return (", *(f"    {grad}," for grad in grads), ")"]
    # tensors the unpack hooks of saved_tensors_hooks gave are let go once the formulas ran
    lines += ["    if held:", "        try:", *("            " + line for line in result)]
    lines += ["        finally:", "            _drop(node)", *("    " + line for line in result)]
    return "\n".join(lines) + "\n"


def release_source(op: OpDef) -> str:
    """The source of the node's ``release(node)``: saved tensors freed (a SavedTensor released, a
    bare one replaced by ``RELEASED``), so that a second backward raises torch's error."""
    lines = ["def release(node):"]
    for slot in op._slot_names:
        lines += [
            f"    v = node.{slot}",
            "    if type(v) is SavedTensor:",
            "        v.release()",
            "    elif v is not None:",
            f"        node.{slot} = RELEASED",
        ]
    lines += [
        "    attrs = node._attrs",
        "    if attrs:",
        "        for k, v in attrs.items():",
        "            if type(v) is SavedTensor:",
        "                v.release()",
        "            elif isinstance(v, Tensor):",
        "                attrs[k] = RELEASED",
    ]
    return "\n".join(lines) + "\n"


def compile_call(op: OpDef, helpers: dict[str, Any]) -> Callable[[tuple, dict], Any]:
    """``op``'s call, compiled from ``call_source`` with ``helpers`` (numpy, the table's wrapping,
    promotion, layout and error helpers) and the op itself in scope."""
    return _compile(call_source(op), "call", op, {**helpers, "op": op})


def compile_recorder(op: OpDef, helpers: dict[str, Any]) -> Callable[[tuple, dict, tuple], None]:
    """``op``'s recording function, compiled from ``record_source`` with ``helpers`` (the table's
    ``_edge_of``, ``_save``, ``_tail``, ``output_meta``, ``NO_EDGE``, ``Tensor``) in scope."""
    return _compile(record_source(op), "record", op, {**helpers, "node_class": op.node_class})


def compile_node_method(op: OpDef, name: str, helpers: dict[str, Any]) -> Callable:
    """The node method ``name`` (``apply`` or ``release``) of ``op``'s node class, compiled from
    ``apply_source`` or ``release_source`` with ``helpers`` (``_unpack``, ``_new``, ``SavedTensor``,
    ``RELEASED``, ``Tensor``) and the op's formulas ``f<i>`` in scope."""
    source = {"apply": apply_source, "release": release_source}[name](op)
    formulas = {f"f{i}": d.formula for i, d in enumerate(op._plan.diff) if d is not None}
    return _compile(source, name, op, {**helpers, **formulas, "ctx_class": op.ctx_class})


def _compile(source: str, name: str, op: OpDef, namespace: dict[str, Any]) -> Callable:
    namespace = dict(namespace)
    code = compile(source, f"<{name} {op.node_name}>", "exec")
    exec(code, namespace)  # noqa: S102 - source built above from the op's own plan, no user input
    return namespace[name]
