"""The conformance suite: one property-test module per rule family (see oracle/rules/)."""
