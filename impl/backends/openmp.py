"""torch.backends.openmp: torch's CPU build has OpenMP."""


def is_available() -> bool:
    return True
