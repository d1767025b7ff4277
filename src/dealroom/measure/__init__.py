"""dealroom.measure."""
