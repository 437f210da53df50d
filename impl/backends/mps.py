"""torch.backends.mps off a Mac: neither built nor available."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
