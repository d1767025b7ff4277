"""dealroom.harness.rlm."""
