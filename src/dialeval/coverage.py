"""The one check that a run and its gold share dialogues, with the message both scorers give."""

from __future__ import annotations

from collections.abc import Sequence

from dialeval.errors import DialevalError

ID_LIST_CHARS = 100
"""Each list of ids in the message is cut to about this many characters."""


def id_sample(ids: Sequence[str], limit: int = ID_LIST_CHARS) -> str:
    """The first ids, comma-separated, cut to about ``limit`` characters (``...`` when cut).

    Examples
    --------
    >>> id_sample(["a", "b", "c"]), id_sample([str(i) * 30 for i in range(9)], 70)
    ('a, b, c', '000000000000000000000000000000, 111111111111111111111111111111...')
    """
    out: list[str] = []
    used = 0
    for i in ids:
        i = str(i)
        if len(i) > limit:
            i = i[: limit - 3] + "..."
        if out and used + len(i) + 2 > limit:
            return ", ".join(out) + "..."
        out.append(i)
        used += len(i) + 2
    return ", ".join(out)


def check_common(run_ids: Sequence[str], gold_ids: Sequence[str], n_common: int, file: str | None) -> None:
    """Raise when no dialogue of the run is in the gold (a test-set run against a training file, say).

    Examples
    --------
    >>> check_common(["t1", "t2"], ["g1"], 0, "run.json")
    Traceback (most recent call last):
    ...
    dialeval.errors.DialevalError: run.json: 0 of 2 run ids are in the gold; run ids: t1, t2; gold ids: g1
    """
    if n_common == 0:
        raise DialevalError(f"0 of {len(run_ids)} run ids are in the gold; run ids: {id_sample(run_ids)}; "
                            f"gold ids: {id_sample(gold_ids)}", file=file)
