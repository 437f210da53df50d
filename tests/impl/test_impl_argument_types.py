"""torch's parser TypeErrors for a float, bool or other non-int where an int, a dim or a list of
ints goes (issue 22), compared with torch; and impl's typed parameters against torch's schemas."""

import inspect
import re
from pathlib import Path

import numpy
import torch
import torchgen

import impl
from impl import _api as api
from impl._signatures import PARSED_ANNOTATIONS

CALLS = [
    "torch.sum(x,1.0)", "x.sum(1.0)", "torch.sum(x,dim=1.0)", "torch.cumsum(x,1.0)", "x.cumsum(dim=1.0)",
    "torch.mean(x,1.0)", "torch.amax(x,1.0)", "torch.softmax(x,1.0)", "x.softmax(1.0)", "torch.sum(x,True)",
    "torch.cumsum(x,True)", "x.unsqueeze(1.0)", "x.transpose(0,1.0)", "torch.argmax(x,1.0)", "x.max(1.0)",
    "torch.nn.functional.softmax(x,1.0)", "torch.flatten(x,0.0)", "x.size(1.0)", "torch.cat([x,x],1.0)",
    "torch.squeeze(x,1.0)", "x.select(1.0,0)", "torch.sum(x,(1.0,))", "torch.sum(x,[0,1.0])",
    "x.narrow(1.0,0,1)", "torch.var(x,1.0)", "torch.logsumexp(x,1.0)", "torch.sort(x,1.0)",
    "torch.topk(x,1,1.0)", "torch.cumsum(x,torch.tensor(1))", "torch.sum(x,torch.tensor(1))",
    "torch.sum(x,numpy.int64(1))", "torch.sum(x,dim=numpy.float64(1))", "torch.prod(x,1.0)",
    "torch.std(x,1.0)", "torch.max(x,1.0)", "torch.min(x,dim=1.0)", "torch.cumprod(x,1.0)",
    "torch.log_softmax(x,1.0)", "torch.stack([x,x],1.0)", "torch.argmin(x,1.0)", "torch.all(x,1.0)",
    "torch.any(x,1.0)", "x.movedim(0,1.0)", "x.permute(1.0,0)", "x.flip(1.0)", "torch.roll(x,1,1.0)",
    "x.unbind(1.0)", "x.chunk(2,1.0)", "x.gather(1.0,torch.zeros(2,3,dtype=torch.long))",
    "x.index_select(1.0,torch.tensor([0]))", "x.expand(2.0,3)", "x.view(3.0,2)", "x.reshape(3.0,2)",
    "torch.zeros(2.0,3)", "torch.ones((2,3.0))", "x.repeat(2.0,1)", "x.cummax(1.0)", "x.median(1.0)",
    "x.kthvalue(1,1.0)", "torch.diff(x,dim=1.0)", "x.nansum(1.0)", "x.count_nonzero(1.0)",
    "torch.tensor_split(x,2,1.0)", "x.diagonal(0,0.0,1)", "x.tril(1.0)", "x.sum(dim=True)",
    "x.argsort(1.0)", "x.unflatten(1.0,(3,1))", "x.squeeze(dim=1.0)",
    "torch.cumsum(x,torch.tensor(1.0))", "torch.cumsum(x,torch.tensor([1]))", "torch.cumsum(x,None)",
    "torch.cumsum(x,numpy.int32(1))", "torch.amax(x,(1.0,))", "torch.amax(x,[0,1.0])", "x.amax([0,1.0])",
    "x.sum((1.0,))", "torch.amax(x,dim=(0,1.0))", "x.flip(1)", "x.flip((1.0,))", "x.permute(0.0,1)",
    "x.permute((1.0,0))", "x.permute([1,0.0])", "x.view((3.0,2))", "x.view(3,2.0)", "x.expand(2,3.0)",
    "x.reshape(3,2.0)", "torch.reshape(x,(3.0,2))", "torch.zeros(2,3.0)", "torch.zeros((2.0,3))",
    "torch.zeros(size=(2.0,3))", "x.repeat((2.0,1))", "torch.topk(x,1.0)",
    "x.transpose(True,0)", "x.unsqueeze(dim=1.0)", "torch.squeeze(x,dim=1.0)", "x.squeeze(1.0)",
    "torch.sum(x,torch.Size([1]))", "torch.softmax(x,dim=1.0)", "x.softmax(dim=True)",
    "x.sum(numpy.float64(1))", "x.amax(numpy.float32(1))", "torch.flatten(x,start_dim=0.0)",
    "x.flatten(0,1.0)", "x.size(True)", "x.view(-1.0)", "torch.argmax(x,dim=1.0)", "x.argmax(1.0)",
    "x.min(1.0,True)", "torch.mean(x,(0,1.0))", "torch.sort(x,dim=1.0)", "x.sort(1.0)",
    "torch.ones(2,True)", "torch.empty(2.5)", "torch.rand(2,3.0)", "torch.randn((2.0,))",
    "torch.full((2.0,),1.0)", "torch.cat([x,x],dim=1.0)", "torch.stack([x,x],dim=True)",
    "torch.transpose(x,0,1.0)", "torch.unsqueeze(x,1.0)", "torch.narrow(x,1.0,0,1)", "torch.select(x,1.0,0)",
    "torch.movedim(x,0.0,1)", "torch.roll(x,1.0,1)", "torch.roll(x,(1,),(1.0,))", "x.sum([True])",
    "x.sum([0,True])", "x.sum([0,numpy.float64(1)])", "x.sum([0,torch.tensor(1)])", "x.sum([0,None])",
    "x.view(2,True,3)", "x.permute(1,0.0)", "x.sum(dim=[0,1.0])", "x.amax(dim=(1.0,))",
    "x.sum(dim=(1.0,))", "torch.zeros(2.0)", "x.repeat(2,1.0)", "x.permute(1.0)", "x.expand(2.0)",
    "torch.sum(x,1.0,True)", "x.sum(1.0,True)", "torch.cumsum(x,1.0,dtype=None)",
    "x.sum(dim=1.0,keepdim=True)", "torch.topk(x,1,dim=1.0)", "x.cumsum(1.0,1)",
]  # fmt: skip


def _outcome(module, call):
    x = module.ones(2, 3)
    try:
        result = eval(call, {"torch": module, "x": x, "numpy": numpy})
    except Exception as error:  # noqa: BLE001 (the error is the observation)
        return type(error).__name__, str(error)
    return "ok", tuple(result.shape) if hasattr(result, "shape") else None


def test_argument_type_errors_as_torch():
    """impl refuses (or takes) each call as torch does, with torch's error type and words."""
    outcomes = [(c, _outcome(torch, c), _outcome(impl, c)) for c in CALLS]
    wrong = [(c, t, i) for c, t, i in outcomes if t != i]
    assert not wrong, "\n".join(f"{c}\n  torch: {t}\n  impl:  {i}" for c, t, i in wrong)


SCHEMAS = Path(torchgen.__file__).parent / "packaged/ATen/native/native_functions.yaml"
# torch's functions whose Python signature is not their schema's (torch.functional, torch._tensor),
# or whose impl parameters are parsed by their own code (conv's ints or tuples, randint's and
# normal's overloads, tensor_split's indices_or_sections, var_mean's and std_mean's OVERLOADS)
UNTYPED = {
    "cdist", "norm", "unique_consecutive", "normal", "randint", "tensor_split", "var_mean", "std_mean",
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
}  # fmt: skip


def _schema_kinds() -> dict[str, dict[str, set[str]]]:
    """Per function, per parameter, the types its overloads give it: int, tuple of ints, bool."""
    kinds: dict[str, dict[str, set[str]]] = {}
    for m in re.finditer(r"^- func: (\w+)(?:\.\w+)?\((.*)\) ->", SCHEMAS.read_text(), re.M):
        for part in m.group(2).split(", "):
            declared, _, param = part.split("=")[0].rpartition(" ")
            t = declared.rstrip("?")
            ints = re.fullmatch(r"(Sym)?[Ii]nt\[\d*\]", t)
            kind = "int" if t in ("int", "SymInt") else "tuple of ints" if ints else "other"
            kind = "bool" if t == "bool" else kind
            kinds.setdefault(m.group(1), {}).setdefault(param, set()).add(kind)
    return kinds


def test_typed_parameters_match_torch_schemas():
    """Every impl function or method torch declares types its int, int[] and bool parameters as
    torch's schema does (one type in all overloads), so that impl refuses what torch's parser does."""
    kinds = _schema_kinds()
    wrong = []
    for table in (api.FUNCTIONS, api.METHODS):
        for name, fn in table.items():
            if name not in kinds or name in UNTYPED or not inspect.isfunction(fn):
                continue
            for p in inspect.signature(fn).parameters.values():
                (kind, *more) = kinds[name].get(p.name, {"other"})
                if more or kind == "other":
                    continue
                typed = PARSED_ANNOTATIONS.get(p.annotation)
                if p.kind is p.VAR_POSITIONAL:
                    typed = "tuple of ints" if p.annotation == "Dims" else None
                if typed != kind:
                    wrong.append(f"{name}({p.name}): torch's {kind}, impl's {p.annotation}")
    assert not wrong, "\n".join(sorted(set(wrong)))
