"""dealroom.eval."""
