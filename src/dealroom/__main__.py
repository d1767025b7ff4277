"""``python -m dealroom``."""

from dealroom.cli import main

main()
