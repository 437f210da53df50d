"""Root conftest: load the oracle's pytest plugin (options, fixtures, results.json, report)."""

pytest_plugins = ("oracle.plugin", "oracle.planted")
