"""Scoring a run against the gold of any corpus, one path for every task (:mod:`dialeval.tasks`).

- STC-3/DialEval DQ: per dialogue and key (A, S, E), NMD and RSNOD between predicted and gold distributions
  over the levels ``2, 1, 0, -1, -2``; reported per key as the mean over dialogues.
- STC-3 ND: per turn, JSD and RNSS over the sender's nugget types; per dialogue
  ``alpha * mean(customer turns) + (1 - alpha) * mean(helpdesk turns)`` (a dialogue with turns of one
  sender only takes that sender's mean); reported as the mean over dialogues.
- DBDC breakdown, WOCHAT validity, ConTurE impression and any other scale: per item (turn, or dialogue for a
  dialogue-level scale) the task's measures (JSD, MSE, NMD, RSNOD; JSD and MSE for a nominal scale no task
  declares), averaged per dialogue then over dialogues (``average="turn"``: over items, DBDC3's script).
- Missing dialogues: skipped and counted by default; ``strict=True`` scores each missing item the worst value.

How: :mod:`dialeval.scoring.gold` prepares the gold as items per scale; its layout
(:mod:`dialeval.scoring.layouts`) aligns a run file with them; :mod:`dialeval.scoring.engine` scores every
task the same way; :class:`~dialeval.scoring.scores.Scores` reports them in each task's declared shape.
"""

from __future__ import annotations

import os
from pathlib import Path

from dialeval.errors import DialevalError, describe
from dialeval.io.detect import check_not_swapped
from dialeval.scoring.engine import score_aligned, worst
from dialeval.scoring.gold import PreparedGold, load_gold
from dialeval.scoring.scores import Scores
from dialeval.tasks import AVERAGES, subtask_measures

__all__ = ["AVERAGES", "TASKS", "PreparedGold", "Scores", "evaluate", "load_gold", "score", "score_aligned",
           "worst"]

TASKS: dict[str, tuple[str, ...]] = subtask_measures()
"""Measures of each STC-3 subtask, in report order (declared in :mod:`dialeval.tasks`)."""


def score(submission: object, gold: object, *, alpha: float = 0.5, strict: bool = False,
          rsnod_variant: str = "paper", average: str | None = None, blocks: bool = False,
          gold_format: str | None = None) -> Scores:
    """Score a run per dialogue. See :func:`evaluate` for the arguments; ``.summary()`` gives the means."""
    from dialeval.scoring.engine import check_options

    check_options(alpha, average, rsnod_variant)
    if not isinstance(strict, bool):
        raise DialevalError(f"strict {describe(strict)} is not allowed; allowed are True and False")
    try:
        g = load_gold(gold, format=gold_format, blocks=blocks)
        run = g.read_run(submission)
    except DialevalError:  # only then are the files' formats probed: swapped arguments get their own message
        if all(isinstance(x, str | os.PathLike) for x in (submission, gold)):
            check_not_swapped(Path(submission), Path(gold), usage="evaluate(run, gold)")  # type: ignore[arg-type]
        raise
    return score_aligned(run, g, alpha=alpha, strict=strict, average=average, rsnod_variant=rsnod_variant)


def evaluate(submission: object, gold: object, *, alpha: float = 0.5, strict: bool = False,
             rsnod_variant: str = "paper", average: str | None = None, blocks: bool = False,
             gold_format: str | None = None) -> dict:
    """Score a run against the gold of any corpus: the means of every task the run predicts.

    Parameters
    ----------
    submission : path, folder, or parsed records
        The run: STC-3 records ``{id, quality?, nugget?}`` for STC-3 gold; dialeval's per-item layout or a
        folder of DBDC3 ``*.labels.json`` for other corpora (:mod:`dialeval.io.turnruns`).
    gold : path, list of dict, Corpus, or PreparedGold
        The annotated corpus; prepare it once with :func:`load_gold` to score many runs fast.
    alpha : float in [0, 1], default 0.5
        ND weight of customer turns; helpdesk turns get ``1 - alpha``.
    strict : bool, default False
        If True, a gold item missing from the run scores the worst value of each measure (:func:`worst`: 1.0
        for NMD, JSD, RNSS; 2/L for MSE; sqrt(c_L) for RSNOD, 1 up to 4 levels and sqrt(13/12) on 5); if
        False it is skipped and counted.
    rsnod_variant : {'paper', '2018'}
        'paper' (MEASURES.md, the default) or the first STC-3 script's all-bins averaging.
    average : {'dialogue', 'turn'}, optional
        How a task's item scores become one figure; default: the task's own (per dialogue, then over
        dialogues). 'turn' averages over items (DBDC3's script); ND allows 'dialogue' only.
    blocks : bool, default False
        Other corpora: merge consecutive turns of one sender into utterance blocks first.
    gold_format : str, optional
        The gold's format when it cannot be detected.

    Returns
    -------
    dict
        STC-3: ``{"quality": {"nmd": {"A", "S", "E"}, "rsnod": {...}}, "nugget": {"jsd", "rnss"}, ...}``;
        other tasks: ``{"scales": {scale: {measure: mean}}, "items": {scale: {"scored", "missing"}}, ...}``;
        always ``"dialogues": {"scored", "missing", "extra"}`` and ``"settings"``. A task absent from the
        run is absent here. Lower is better for every measure.

    Examples
    --------
    >>> import dialeval
    >>> gold = [{"id": "1", "turns": [{"sender": "customer", "utterances": ["hi"]}],
    ...          "annotations": [{"quality": {"A": 1, "S": 0, "E": 0}}, {"quality": {"A": 1, "S": 1, "E": 0}}]}]
    >>> run = [{"id": "1", "quality": {k: {"1": 1.0} for k in "ASE"}}]
    >>> r = dialeval.evaluate(run, gold)
    >>> r["quality"]["nmd"]["A"], round(r["quality"]["nmd"]["S"], 4)
    (0.0, 0.125)

    The same call scores a turn-level corpus:

    >>> from dialeval.corpus import Corpus, Dialogue, Turn
    >>> from dialeval.io.dbdc import breakdown_scale
    >>> dbdc = Corpus([Dialogue("d1", [Turn("user", ["hi"]),
    ...                                Turn("system", ["yo"], {"breakdown": ["O", "X"]})])],
    ...               {"breakdown": breakdown_scale()}, "dbdc")
    >>> dialeval.evaluate([{"id": "d1", "turns": [{"turn": 1, "breakdown": {"O": 0.5, "X": 0.5}}]}],
    ...                   dbdc)["scales"]["breakdown"]
    {'jsd': 0.0, 'mse': 0.0, 'nmd': 0.0, 'rsnod': 0.0}
    """
    return score(submission, gold, alpha=alpha, strict=strict, rsnod_variant=rsnod_variant, average=average,
                 blocks=blocks, gold_format=gold_format).summary()
