"""torch.save / torch.load: files pass between impl and torch both ways (values, dtypes, shapes,
strides, offsets, shared storages, Parameters, Python values), checkpoints of a model and its
optimizer resume training as torch's, and torch's weights_only rules and errors."""

from __future__ import annotations

import io
import os
import pickle
import warnings
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch

import impl

ENGINES = {"impl": impl, "torch": torch}


def _objects(mod):
    x = mod.arange(12.0).reshape(3, 4)
    return {
        "x": x, "row": x[1], "t": x.t(), "cols": x[:, 1:3], "i": mod.tensor([1, 2, 3]),
        "b": mod.tensor([True, False]), "h": mod.tensor([1.5], dtype=mod.float16),
        "bf": mod.tensor([1.5], dtype=mod.bfloat16), "i8": mod.tensor([-3], dtype=mod.int8),
        "p": mod.nn.Parameter(mod.ones(2)), "frozen": mod.nn.Parameter(mod.ones(1), requires_grad=False),
        "sd": OrderedDict(w=mod.zeros(2, 2), b=mod.ones(2)), "n": 3, "l": [1.5, "s", None, (1, 2)],
        "dt": mod.float64, "size": mod.Size([2, 3]), "dev": mod.device("cpu"),
        "nonleaf": mod.ones(2, requires_grad=True) * 2, "empty": mod.empty(0, 3), "scalar": mod.tensor(5.0),
        "set": {1, 2}, "bytes": b"ab", "complex": 1 + 2j,
    }


def _geometry(t):
    return str(t.dtype), tuple(t.shape), t.stride(), t.storage_offset(), t.requires_grad, t.is_leaf


def _values(t):
    return np.array(t.detach().double().tolist())


def _same(got, want, path="obj"):
    assert type(got).__name__ == type(want).__name__, path
    if isinstance(want, dict):
        assert list(got) == list(want), path
        for k in want:
            _same(got[k], want[k], f"{path}[{k!r}]")
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _same(g, w, f"{path}[{i}]")
    elif isinstance(want, torch.Tensor):
        assert _geometry(got) == _geometry(want), path
        assert np.array_equal(_values(got), _values(want)), path
    else:
        assert repr(got) == repr(want), path


@pytest.mark.parametrize("direction", ["impl->torch", "torch->impl", "impl->impl"])
def test_a_file_loads_as_torch_loads_its_own(direction):
    src, dst = (ENGINES[name] for name in direction.split("->"))
    buf = io.BytesIO()
    src.save(_objects(src), buf)
    buf.seek(0)
    got = dst.load(buf)
    ref = io.BytesIO()
    torch.save(_objects(torch), ref)
    ref.seek(0)
    _same(got, torch.load(ref))
    got["x"][1, 0] = 100.0  # the views share the loaded storage
    assert float(got["row"][0]) == 100.0 and float(got["t"][0, 1]) == 100.0
    assert float(got["cols"][0, 0]) == 1.0


@pytest.mark.parametrize("name", ["m.pt", "model", "a.b.c", ".hidden", "nodir/x.pt"])
def test_the_archive_has_torchs_records(tmp_path, name):
    lists = []
    for mod in (impl, torch):
        path = str(tmp_path / mod.__name__ / name)
        os.makedirs(os.path.dirname(path).replace("nodir", "") or ".", exist_ok=True)
        outcome = _outcome(mod.save, {"a": mod.ones(2)}, path)
        records = os.path.exists(path) and zipfile.ZipFile(path).namelist()
        lists.append([outcome[0].replace(mod.__name__ + "/", ""), records])
    assert lists[0] == lists[1]
    if lists[0][1]:
        assert torch.load(str(tmp_path / "impl" / name))["a"].tolist() == [1.0, 1.0]


def _trained(mod):
    mod.manual_seed(0)
    model = mod.nn.Sequential(mod.nn.Linear(3, 4), mod.nn.ReLU(), mod.nn.Linear(4, 1))
    opt = mod.optim.Adam(model.parameters(), lr=0.1)
    model(mod.ones(2, 3)).sum().backward()
    opt.step()
    return model, opt


@pytest.mark.parametrize("direction", ["impl->torch", "torch->impl", "impl->impl"])
def test_a_checkpoint_resumes_training(direction):
    src, dst = (ENGINES[name] for name in direction.split("->"))
    model, opt = _trained(src)
    buf = io.BytesIO()
    src.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3}, buf)
    results = []
    for mod, file in ((dst, buf), (torch, buf)):
        file.seek(0)
        ck = mod.load(file)
        again, opt2 = _trained(mod)
        again.load_state_dict(ck["model"])
        opt2.load_state_dict(ck["opt"])
        again(mod.ones(2, 3)).sum().backward()
        opt2.step()
        results.append([p.tolist() for p in again.parameters()])
    assert results[0] == results[1]


@pytest.mark.parametrize("name", ["impl", "torch"])
def test_a_whole_module_needs_weights_only_false(name):
    mod = ENGINES[name]
    model, _ = _trained(mod)
    buf = io.BytesIO()
    mod.save(model, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError) as refused:
        mod.load(buf)
    buf.seek(0)
    again = mod.load(buf, weights_only=False)
    assert type(again) is type(model) and repr(again) == repr(model)
    assert again(mod.ones(1, 3)).tolist() == model(mod.ones(1, 3)).tolist()
    torch_buf = io.BytesIO()
    torch.save(_trained(torch)[0], torch_buf)
    torch_buf.seek(0)
    with pytest.raises(pickle.UnpicklingError) as torch_refused:
        torch.load(torch_buf)
    assert str(refused.value) == str(torch_refused.value)


def _outcome(call, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = call(*args, **kwargs)
            result = repr(got.tolist()) if hasattr(got, "tolist") else repr(got)
        except Exception as e:  # noqa: BLE001  (the error is the outcome compared)
            result = f"{type(e).__name__}: {e}"
    return result, [str(w.message) for w in caught]


LOADS = [
    {"map_location": "cuda"}, {"map_location": "foo"}, {"map_location": "cpu"},
    {"map_location": {"cpu": "cpu"}}, {"map_location": {"cpu": "cuda:0"}}, {"map_location": lambda s, loc: s},
    {"map_location": lambda s, loc: None}, {"map_location": lambda s, loc: s.cpu()},
    {"pickle_module": pickle},
    {"pickle_module": pickle, "weights_only": True},
    {"encoding": "latin1"}, {"weights_only": False, "encoding": "latin1"},
]


def _label(kwargs):
    shown = {k: getattr(v, "__name__", v) for k, v in kwargs.items()}  # lambdas, modules by name
    return ",".join(f"{k}={v}" for k, v in sorted(shown.items()))


@pytest.mark.parametrize("kwargs", LOADS, ids=[_label(k) for k in LOADS])
def test_load_options_and_their_errors(kwargs):
    outcomes = []
    for mod in (impl, torch):
        buf = io.BytesIO()
        torch.save(torch.arange(3.0), buf)
        buf.seek(0)
        options = {k: (mod.device(v) if isinstance(v, torch.device) else v) for k, v in kwargs.items()}
        outcomes.append(_outcome(mod.load, buf, **options))
    assert outcomes[0] == outcomes[1]


GLOBALS = ["[print]", "[os.getcwd]", "[torch.nn.Linear]", "[{1, 2}, b'x', 1 + 2j, bytearray(b'a')]"]


@pytest.mark.parametrize("obj", GLOBALS)
def test_weights_only_refuses_torchs_globals(obj):
    buf = io.BytesIO()
    torch.save(eval(obj), buf)
    outcomes = []
    for mod in (impl, torch):
        buf.seek(0)
        outcomes.append(_outcome(mod.load, buf))
    assert outcomes[0] == outcomes[1]


def test_save_errors():
    assert _outcome(impl.save, impl.ones(2), 3) == _outcome(torch.save, torch.ones(2), 3)
