"""The ``dialeval`` command's entry point: the command modules are imported inside it, so that Ctrl-C while they load
(a second or more on a cold start) ends as every interrupted command does, ``error: interrupted`` and exit status 130,
not a traceback.

Only ``dialeval`` itself (the library's package) is imported before this runs.
"""

from __future__ import annotations

import sys

INTERRUPTED = 130
"""The exit status of an interrupted command (128 + SIGINT), as :data:`dialeval.cli.main.INTERRUPTED`."""


def main() -> None:
    try:
        from dialeval.cli.main import run
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        sys.exit(INTERRUPTED)
    sys.exit(run())
