"""dealroom.harness.toolloop."""
