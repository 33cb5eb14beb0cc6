"""One way to show progress on long work, shared by the library and the CLI.

Library functions that may run for more than a second take ``progress: bool | None = None`` and wrap
their loops in :func:`track` or :func:`bar`. ``None`` means "show it when stderr is a terminal"; the bars
go to stderr so that stdout stays clean for JSON and tables. Set ``DIALEVAL_PROGRESS=0`` to silence every
bar (``1`` to force them on).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column

T = TypeVar("T")


def enabled(progress: bool | None = None) -> bool:
    """Whether to draw bars: an explicit ``progress`` wins, then ``DIALEVAL_PROGRESS``, then "stderr is a tty"."""
    if progress is not None:
        return bool(progress)
    env = os.environ.get("DIALEVAL_PROGRESS")
    if env is not None:
        return env.strip().lower() not in ("0", "false", "no", "off", "")
    return sys.stderr.isatty()


class _NullBar:
    """Stands in for a task when bars are off, so callers never branch on it."""

    def advance(self, n: float = 1) -> None:
        pass

    def update(self, **_: object) -> None:
        pass


class _Bar:
    def __init__(self, progress: Progress, task_id: int) -> None:
        self._p, self._id = progress, task_id

    def advance(self, n: float = 1) -> None:
        self._p.advance(self._id, n)

    def update(self, **fields: object) -> None:
        self._p.update(self._id, **fields)  # e.g. description=..., total=...


@contextmanager
def bar(description: str, total: float | None, *, progress: bool | None = None) -> Iterator[_Bar | _NullBar]:
    """A progress bar on stderr for work of ``total`` steps: ``with bar("scoring", n) as b: ... b.advance()``."""
    if not enabled(progress):
        yield _NullBar()
        return
    # On a narrow terminal the bar and then the description give way; the count and times never wrap.
    columns = [TextColumn("{task.description}", markup=False,  # a file's name is text, never rich markup
                          table_column=Column(no_wrap=True, overflow="ellipsis", ratio=3)),
               BarColumn(bar_width=None, table_column=Column(ratio=2)),
               MofNCompleteColumn(table_column=Column(no_wrap=True)), TaskProgressColumn(),
               TimeElapsedColumn(), TimeRemainingColumn()]
    with Progress(*columns, console=Console(stderr=True), transient=False) as p:
        yield _Bar(p, p.add_task(description, total=total))


def track(iterable: Iterable[T], description: str, total: float | None = None, *,
          progress: bool | None = None) -> Iterator[T]:
    """Iterate with a progress bar (see :func:`bar`); ``total`` defaults to ``len(iterable)`` when it has one."""
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    with bar(description, total, progress=progress) as b:
        for item in iterable:
            yield item
            b.advance()
