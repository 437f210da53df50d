"""Fake torch-like engines for the oracle's self-tests: backends nobody here wrote, each broken in
one way the oracle must handle. Each is a module a run names with ``--backend tests.helpers.engines.NAME``.

The impl-based ones wrap ``impl`` with a PEP 562 ``__getattr__`` (every name they do not define
themselves is impl's); they never change impl itself, so impl's own internals keep working and a
failure is the engine's, not impl's.

- ``partial``: impl lacking a few names of torch's API (``LACKS``) and with a version of its own,
  which no package metadata has: the "unsupported" path, and report headers read from the module.
- ``meddler``: real torch, changed on import (default dtype float64, a broken
  ``Tensor.backward``), then put in ``sys.modules`` under its own name: what isolation protects
  the reference from.
- ``fragile``: impl whose ``exp`` segfaults, ``sin`` sleeps forever and ``cos`` allocates 16 GiB:
  a worker that dies, hangs or runs out of memory.
- ``weak``: a jtorch-like first attempt: impl lacking several names, computing some values wrong
  (``exp``, ``sum``, ``mul``) and sorting slowly, failing most rules: the triage profile's case.
"""

MEDDLER_MESSAGE = "meddler broke backward"  # what the meddler's Tensor.backward raises (never import it here)
