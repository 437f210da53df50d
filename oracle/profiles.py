"""Hypothesis profiles of the conformance suite, chosen with ``--hypothesis-profile NAME``.

- ``ci``: reproducible (derandomized, no example database), sized so the whole suite stays under
  10 minutes on 2 cores; failing examples print a reproduction blob.
- ``dev``: the default when no profile is chosen; few examples for a quick edit-run loop.
- ``thorough``: ten times ``ci``'s examples with random seeds, keeping failures in the example
  database under ``.hypothesis/`` so a rerun replays them first.
- ``planted``: ``ci``'s programs without shrinking, for runs with a planted fault
  (``tests/oracle/test_impl_planted_faults.py``): the first failing program shows the fault is caught.
- ``fuzz``: a fuzz campaign's rounds (``oracle/campaign.py``, ``nox -s fuzz``): random seeds,
  shrinking on, the round's ``max_examples`` and example database (a directory or Redis) read from
  its environment.
- ``triage``: for a first look at a weak backend: ``ci``'s programs without shrinking, failing
  programs collected per test up to a cap and a time budget per rule (the oracle plugin's
  ``--test-failures`` and ``--rule-budget``), so that a backend failing everywhere still gets
  through the whole suite quickly, with several failing programs per test to read.

The oracle's pytest plugin registers them (``register``) when pytest configures, before hypothesis
applies ``--hypothesis-profile``, whichever paths are run; the active profile's name is recorded
in results.json.

A test whose programs are cheap, or whose family is thin, runs a multiple of the profile's examples:
decorate it with ``@examples(weight)`` instead of ``@settings(deadline=None)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oracle import campaign

if TYPE_CHECKING:
    from hypothesis import settings

CI_EXAMPLES = 100
TRIAGE = "triage"  # the profile for weak backends
DEFAULT = "dev"  # loaded when no profile is chosen


def register() -> None:
    """Register the profiles, and load ``dev`` unless one was loaded already (hypothesis then
    loads the one ``--hypothesis-profile`` names, if any). Registering again replaces them.
    Without hypothesis installed there is nothing to register (hypothesis is imported here, not at
    module level, so that the plugin loads without it, as ``oracle.campaign`` does)."""
    try:
        from hypothesis import HealthCheck, Phase, settings
        from hypothesis.database import DirectoryBasedExampleDatabase
    except ImportError:
        return
    no_shrinking = [p for p in Phase if p not in (Phase.shrink, Phase.explain)]
    settings.register_profile(
        "ci",
        max_examples=CI_EXAMPLES,
        derandomize=True,
        deadline=None,
        print_blob=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    ci = settings.get_profile("ci")
    settings.register_profile("planted", ci, phases=no_shrinking)
    settings.register_profile(TRIAGE, ci, phases=no_shrinking)
    settings.register_profile(
        DEFAULT,
        max_examples=25,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.register_profile(
        "thorough",
        max_examples=10 * CI_EXAMPLES,
        derandomize=False,
        deadline=None,
        print_blob=True,
        database=DirectoryBasedExampleDatabase(".hypothesis/examples"),
        suppress_health_check=[HealthCheck.too_slow],
    )
    # fuzz campaigns (oracle/campaign.py): the round's examples and database come from its environment
    settings.register_profile("fuzz", **campaign.profile_settings())
    if settings.get_current_profile_name() == "default":
        settings.load_profile(DEFAULT)


def examples(weight: float) -> settings:
    """Settings for one test: ``weight`` times the active profile's ``max_examples`` (so ci, dev and
    thorough keep their proportions), no deadline. Test modules are imported after hypothesis
    loaded the profile chosen on the command line, so the multiple is of that profile's count."""
    from hypothesis import settings

    return settings(max_examples=max(1, round(weight * settings.default.max_examples)), deadline=None)
