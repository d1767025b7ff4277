"""Private helpers shared by dealroom's subpackages."""
