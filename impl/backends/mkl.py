"""torch.backends.mkl: torch's x86 CPU build has MKL."""


def is_available() -> bool:
    return True
