"""Names of score columns for people, from the measures registry (never a second list of measures).

A score column is named like the columns of :class:`dialeval.scoring.Scores`: ``quality.<measure>.<key>``
or ``nugget.<measure>``. Any other name (e.g. a matrix file's) is shown as it is, lower is better.
"""

from __future__ import annotations

from dialeval.errors import DialevalError
from dialeval.io.stc3 import QUALITY_NAMES
from dialeval.measures import Measure
from dialeval.measures import get as get_measure

SUBTASK_NAMES = {"quality": "dialogue quality", "nugget": "nugget detection"}


def column_measure(column: str) -> Measure | None:
    """The registered measure of a score column, or None if the name is not ``<subtask>.<measure>[.<key>]``."""
    parts = column.split(".")
    if len(parts) not in (2, 3) or parts[0] not in SUBTASK_NAMES:
        return None
    try:
        return get_measure(parts[1])
    except DialevalError:
        return None


def column_key(column: str) -> str | None:
    parts = column.split(".")
    return parts[2] if len(parts) == 3 and column_measure(column) is not None else None


def column_label(column: str) -> str:
    """A short header: ``NMD (A)``, ``JSD``; other names unchanged.

    >>> column_label("quality.rsnod.S"), column_label("nugget.jsd"), column_label("my score")
    ('RSNOD (S)', 'JSD', 'my score')
    """
    m = column_measure(column)
    if m is None:
        return column
    key = column_key(column)
    return f"{m.name.upper()} ({key})" if key else m.name.upper()


def column_title(column: str) -> str:
    """A full title: ``NMD (A): normalised match distance; dialogue quality A, task accomplishment``.

    >>> column_title("nugget.rnss")
    'RNSS: root normalised sum of squares; nugget detection'
    """
    m = column_measure(column)
    if m is None:
        return column
    subtask = SUBTASK_NAMES[column.split(".")[0]]
    key = column_key(column)
    where = f"{subtask} {key}, {QUALITY_NAMES.get(key, key)}" if key else subtask
    return f"{column_label(column)}: {m.title}; {where}"


def lower_is_better(column: str) -> bool:
    """The direction the registry states for the column's measure (names it does not know: lower is better)."""
    m = column_measure(column)
    return True if m is None else m.direction.lower().startswith("lower")


def direction_text(column: str) -> str:
    return "lower is better" if lower_is_better(column) else "higher is better"


def match_columns(columns: object, wanted: object) -> list[str]:
    """The score columns named by ``wanted`` (all when empty), in the order of ``columns``.

    A name matches a column as it is (``quality.nmd.A``), without its subtask (``nmd.A``), by its label
    (``NMD (A)``), or by the measure alone (``nmd``: every key); case does not matter; items may be
    comma-separated. An unknown name is an error listing the allowed ones.

    Examples
    --------
    >>> match_columns(["quality.nmd.A", "quality.nmd.S", "nugget.jsd"], ["JSD", "nmd.s"])
    ['quality.nmd.S', 'nugget.jsd']
    """
    cols = [str(c) for c in columns]  # type: ignore[attr-defined]
    names = [w.strip().lower() for item in (wanted or []) for w in str(item).split(",") if w.strip()]  # type: ignore[attr-defined]
    if not names:
        return cols

    def keys(name: str) -> set[str]:
        parts = name.split(".")
        return {name.lower(), ".".join(parts[1:]).lower(), column_label(name).lower(),
                (parts[1] if len(parts) > 1 else name).lower()}

    unknown = [w for w in names if not any(w in keys(c) for c in cols)]
    if unknown:
        allowed = ", ".join(dict.fromkeys(".".join(c.split(".")[1:]) or c for c in cols))
        raise DialevalError(f"measure(s) {', '.join(map(repr, unknown))} not among the score columns; allowed are "
                            f"{allowed}, or a measure alone (e.g. nmd)")
    return [c for c in cols if keys(c) & set(names)]
