"""``python -m dialeval``: the same as the ``dialeval`` command."""

from dialeval.cli.main import main

main()
