"""dealroom.harness."""
