"""The differential oracle: run the same program on PyTorch and on a backend, compare traces."""

__version__ = "0.1.0"
