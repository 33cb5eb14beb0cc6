"""``python -m dialeval``: the same as the ``dialeval`` command."""

from dialeval.cli.entry import main

main()
