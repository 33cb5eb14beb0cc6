"""Names of score columns for people, from the measures registry (never a second list of measures).

A score column is named like the columns of :class:`dialeval.scoring.Scores`: ``quality.<measure>.<key>``
or ``nugget.<measure>`` (STC-3), ``<scale>/<measure>`` (any other task). Any other name (e.g. a matrix
file's) is shown as it is, lower is better.
"""

from __future__ import annotations

from dialeval.errors import DialevalError, describe
from dialeval.io.stc3 import QUALITY_NAMES
from dialeval.measures import Measure
from dialeval.measures import get as get_measure

SUBTASK_NAMES = {"quality": "dialogue quality", "nugget": "nugget detection"}


def _parts(column: str) -> tuple[str | None, Measure, str | None] | None:
    """``(subtask, measure, key)`` of a score column: ``<subtask>.<measure>[.<key>]`` (STC-3's subtasks) or
    ``<scale>/<measure>`` (any other task's, :meth:`dialeval.tasks.Task.column`; the key is the scale); None
    for any other name."""
    if "/" in column:
        scale, _, name = column.rpartition("/")
        subtask, key = None, scale
    else:
        parts = column.split(".")
        if len(parts) not in (2, 3) or parts[0] not in SUBTASK_NAMES:
            return None
        subtask, name, key = parts[0], parts[1], (parts[2] if len(parts) == 3 else None)
    try:
        return subtask, get_measure(name), key
    except DialevalError:
        return None


def column_measure(column: str) -> Measure | None:
    """The registered measure of a score column, or None if the name is not ``<subtask>.<measure>[.<key>]``
    or ``<scale>/<measure>``."""
    parts = _parts(column)
    return parts[1] if parts else None


def column_key(column: str) -> str | None:
    """The key (``A``) or scale (``breakdown``) of a score column; None when it has neither."""
    parts = _parts(column)
    return parts[2] if parts else None


def column_label(column: str) -> str:
    """A short header: ``NMD (A)``, ``JSD``, ``JSD (breakdown)``; other names unchanged.

    >>> column_label("quality.rsnod.S"), column_label("nugget.jsd"), column_label("breakdown/jsd")
    ('RSNOD (S)', 'JSD', 'JSD (breakdown)')
    >>> column_label("my score")
    'my score'
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
    >>> column_title("breakdown/nmd")
    'NMD (breakdown): normalised match distance; scale breakdown'
    """
    parts = _parts(column)
    if parts is None:
        return column
    subtask, m, key = parts
    if subtask is None:
        return f"{column_label(column)}: {m.title}; scale {key}"
    where = f"{SUBTASK_NAMES[subtask]} {key}, {QUALITY_NAMES.get(key, key)}" if key else SUBTASK_NAMES[subtask]
    return f"{column_label(column)}: {m.title}; {where}"


def lower_is_better(column: str) -> bool:
    """The direction the registry states for the column's measure (names it does not know: lower is better)."""
    m = column_measure(column)
    return True if m is None else m.lower_is_better


def direction_text(column: str) -> str:
    return "lower is better" if lower_is_better(column) else "higher is better"


def directions_text(columns: list[str]) -> str:
    """The direction of several columns in words: one phrase when they share it, else each column's.

    >>> directions_text(["quality.nmd.A", "breakdown/jsd"])
    'lower is better'
    """
    texts = {c: direction_text(c) for c in columns}
    if len(set(texts.values())) <= 1:
        return next(iter(texts.values()), "lower is better")
    return "; ".join(f"{column_label(c)}: {t}" for c, t in texts.items())


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
    given = [w.strip() for item in (wanted or []) for w in str(item).split(",") if w.strip()]  # type: ignore[attr-defined]
    names = [w.lower() for w in given]
    if wanted and not names:   # given, but nothing in it: a mistake (an empty shell variable), not "all"
        raise DialevalError(f"measures {describe(wanted)} name no measure; allowed are names such as "
                            "nmd, nmd.A, 'NMD (A)', jsd (comma-separated or repeated), or leave the option out for "
                            "every measure")
    if not names:
        return cols

    def keys(name: str) -> set[str]:
        parsed = _parts(name)
        if parsed is None:   # a name of no registered measure (a matrix file's): itself, or without a prefix
            parts = name.split(".")
            return {name.lower(), ".".join(parts[1:]).lower(), (parts[1] if len(parts) > 1 else name).lower()}
        _, m, key = parsed
        within = f"{m.name}.{key}" if key else m.name   # without the subtask: nmd.A; jsd.breakdown
        return {name.lower(), within.lower(), column_label(name).lower(), m.name.lower()}

    unknown = [g for g, w in zip(given, names, strict=True) if not any(w in keys(c) for c in cols)]  # as typed
    if unknown:
        allowed = ", ".join(dict.fromkeys(".".join(c.split(".")[1:]) or c for c in cols))
        example = next((m.name for c in cols if (m := column_measure(c)) is not None), "nmd")
        raise DialevalError(f"measure(s) {', '.join(map(repr, unknown))} not among the score columns; allowed are "
                            f"{allowed}, or a measure alone (e.g. {example})")
    return [c for c in cols if keys(c) & set(names)]
