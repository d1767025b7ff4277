"""dealroom.judge."""
