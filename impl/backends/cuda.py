"""torch.backends.cuda of a CPU build: not built; ``matmul`` holds cuBLAS's flags, its allow_tf32
being torch.set_float32_matmul_precision's state (True unless 'highest')."""

from __future__ import annotations

from typing import Any

from impl.backends import _flags


def is_built() -> bool:
    return False


def is_flash_attention_available() -> bool:
    return False


class cuBLASModule:
    """``torch.backends.cuda.matmul``: an object whose attributes are cuBLAS's flags."""

    __module__ = "torch.backends.cuda"
    _REDUCTIONS = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")

    def __init__(self) -> None:
        object.__setattr__(self, "_reductions", dict.fromkeys(self._REDUCTIONS, True))

    def __getattr__(self, name: str) -> Any:
        if name == "allow_tf32":
            return _flags.get_float32_matmul_precision() != "highest"
        if name == "fp32_precision":
            return "none" if _flags.get_float32_matmul_precision() == "highest" else "tf32"
        if name in self._REDUCTIONS:
            return self._reductions[name]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "allow_tf32":
            if not isinstance(value, bool):
                raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got {type(value).__name__}")
            _flags.set_float32_matmul_precision("high" if value else "highest")
        elif name in self._REDUCTIONS:
            first = value[0] if isinstance(value, (tuple, list)) and value else value
            if not isinstance(first, bool):
                raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got {type(value)!r}")
            self._reductions[name] = first
        else:
            raise AttributeError("Unknown attribute " + name)


matmul = cuBLASModule()
