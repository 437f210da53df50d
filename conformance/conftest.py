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

The active profile's name is recorded in results.json by the oracle plugin.

A test whose programs are cheap, or whose family is thin, runs a multiple of the profile's examples:
decorate it with ``@examples(weight)`` (imported from here) instead of ``@settings(deadline=None)``.
"""

from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from oracle import campaign

CI_EXAMPLES = 100

settings.register_profile(
    "ci",
    max_examples=CI_EXAMPLES,
    derandomize=True,
    deadline=None,
    print_blob=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "planted", settings.get_profile("ci"), phases=[p for p in Phase if p not in (Phase.shrink, Phase.explain)]
)
settings.register_profile(
    "triage", settings.get_profile("ci"), phases=[p for p in Phase if p not in (Phase.shrink, Phase.explain)]
)
settings.register_profile(
    "dev",
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


def examples(weight: float) -> settings:
    """Settings for one test: ``weight`` times the active profile's ``max_examples`` (so ci, dev and
    thorough keep their proportions), no deadline. Test modules are imported after hypothesis
    loaded the profile chosen on the command line, so the multiple is of that profile's count."""
    return settings(max_examples=max(1, round(weight * settings.default.max_examples)), deadline=None)


# pytest imports this file before hypothesis applies --hypothesis-profile when conformance/ is
# among the paths run, and afterwards otherwise: only fall back to "dev" if nothing was chosen.
if settings.get_current_profile_name() == "default":
    settings.load_profile("dev")
