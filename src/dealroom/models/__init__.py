"""dealroom.models."""
