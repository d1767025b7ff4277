"""dealroom.harness.sandbox."""
