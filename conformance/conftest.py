"""The conformance suite's shared decorator: ``@examples(weight)`` runs a test ``weight`` times
the active hypothesis profile's examples (``oracle.profiles``, where the profiles ci, dev,
thorough, planted, fuzz and triage are defined; the oracle's plugin registers them).
"""

from oracle.profiles import examples

__all__ = ["examples"]
