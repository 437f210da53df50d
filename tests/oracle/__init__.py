"""Self-tests of the oracle and its tooling (plugin, report, CLI, campaigns, benchmarks' bookkeeping,
the GPU check): checks that must be able to fail, shown to fail on planted faults."""
