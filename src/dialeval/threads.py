"""How many cores dialeval's parallel work uses: ``$DIALEVAL_THREADS``, else every CPU this process may use.

One setting for the randomised tests (threads), sentence embedding (threads) and neural training (worker
processes). A value that is not an integer >= 1 is an error, wherever it is read.
"""

from __future__ import annotations

import os

from dialeval.errors import DialevalError


def default_threads() -> int:
    """``$DIALEVAL_THREADS`` if set, else the number of CPUs this process may run on.

    Examples
    --------
    >>> default_threads() >= 1
    True
    """
    env = os.environ.get("DIALEVAL_THREADS")
    if env:
        return check_threads(int(env) if env.strip().isdigit() else env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def check_threads(threads: object) -> int:
    """``threads`` if it is an integer >= 1, else a :class:`DialevalError` saying what is allowed."""
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise DialevalError(f"threads = {threads!r} is not allowed; allowed are integers >= 1 (or None: "
                            "$DIALEVAL_THREADS, else every CPU)")
    return threads
