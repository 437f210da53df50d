"""The project's own tests: ``tests/impl`` (impl against torch), ``tests/oracle`` (the oracle and
its tooling testing themselves) and ``tests/helpers`` (what they share). A package, so that test
modules are imported by their full names (``tests.oracle.test_cli``) and share helpers by import."""
