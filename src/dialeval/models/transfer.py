"""Predicting the scales of a corpus with a model of other corpora's scales, and turn scores.

A model knows the scales it was trained on (:attr:`Estimator.scales <dialeval.models.base.Estimator.scales>`).
On a corpus it predicts:

- each of the corpus's scales the model knows, at the same level with the same levels (DBDC's ``breakdown``,
  DSTC9's ``likeable``...);
- each other turn-level scale of a task *compatible* with one the model knows (:func:`dialeval.tasks.transfer_map`:
  WOCHAT's ``validity``, ConTurE's ``overall impression``), its levels mapped from good to bad;
- the model's own scales when the corpus has none of those and no turn-level scale (e.g. a DBDC model on DSTC9,
  or unlabelled dialogues).

A corpus whose turn-level scales are all unknown and incompatible, and that has no scale the model knows, is an
error naming them. The *turn score* (:func:`turn_scores`) is the expected value of the distribution on the
task's 0 .. L-1 scale (worst .. best), ConTurE's 0/1/2 for a three-level scale.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np

from dialeval.corpus import Corpus
from dialeval.errors import DialevalError, DialevalWarning
from dialeval.models.base import Estimator
from dialeval.models.data import TurnTable
from dialeval.models.turndata import TurnScale, turn_records
from dialeval.tasks import transfer_map, turn_score_values


def _known(est: Estimator) -> str:
    if not est.scales:
        return "STC-3's dialogue quality (A, S, E) and nugget types"
    return ", ".join(f"{n} ({', '.join(s.levels)})" for n, s in est.scales.items())


def plan(corpus: Corpus, est: Estimator) -> dict[str, tuple[str, dict[str, str] | None]]:
    """``{corpus scale: (model scale, level map or None)}``: what the model predicts on ``corpus`` (see the
    module).

    Raises
    ------
    DialevalError
        When the corpus has turn-level scales and the model knows none of them nor a compatible one, and no
        other scale of the corpus.
    """
    out: dict[str, tuple[str, dict[str, str] | None]] = {}
    for s in corpus.scales.values():
        own = est.scales.get(s.name)
        if own is not None and own.levels == s.levels and own.level == s.level:
            out[s.name] = (s.name, None)
            continue
        for n in (n for n, m in est.scales.items() if s.level == m.level == "turn"):
            mapping = transfer_map(n, s.name, s.levels)
            if mapping is not None:
                out[s.name] = (n, mapping)
                break
    if out:
        return out
    wanted = [s for s in corpus.scales.values() if s.level == "turn"]
    if not wanted:
        if not est.scales:
            raise DialevalError(f"this {est.kind} model predicts {_known(est)}, and the corpus has no such scale "
                                "(it is not an STC-3 corpus)", file=corpus.source)
        return {n: (n, None) for n in est.scales}
    names = ", ".join(f"{s.name!r} ({', '.join(s.levels)})" for s in wanted)
    raise DialevalError(f"the corpus's turn-level scale(s) {names}: this {est.kind} model knows none of them "
                        f"nor a compatible one; it predicts {_known(est)}", file=corpus.source)


def predict_turn_scales(corpus: Corpus, est: Estimator, progress: bool | None = None, *,
                        check_training: bool = True) -> list[dict]:
    """The model's distributions on the corpus's scales (see the module), as a per-item run.

    Every dialogue of ``corpus`` is in the run, in order, with the distribution of each dialogue-level scale;
    each predicted turn has the distribution of each turn-level scale and its hard label (``"labels"``: the
    most probable level).
    """
    if not est.scales:
        plan(corpus, est)  # an STC-3 model on another corpus: the error naming the scales
    what = plan(corpus, est)
    table = TurnTable.from_corpus(corpus, senders=None)
    labelled: dict[str, np.ndarray] = {}  # the corpus's labelled turns, by the name of the model's scale
    for target, (source, _) in what.items():
        if target in table.labelled:
            labelled[source] = labelled.get(source, False) | table.labelled[target]
    table = replace(table, labelled=labelled)
    saved = est.progress
    if progress is not None:
        est.progress = progress
    try:
        pred = est.predict(table, check_training=check_training)
    finally:
        est.progress = saved
    turns, scales = {}, {}
    for target, (source, mapping) in what.items():
        rows, probs = pred.turns[source]
        src = est.scales[source]
        declared = corpus.scales.get(target)   # None: a corpus with no turn scale (DSTC9) gets the model's own
        only = declared.sender if declared is not None and declared.level == "turn" else None
        if only is not None and src.level == "turn":   # the corpus's scale labels one sender's turns (DBDC's
            keep = np.asarray([table.senders[r] == only for r in rows.tolist()], dtype=bool)   # system's):
            rows, probs = rows[keep], probs[keep]      # a model that learnt others' too predicts only those
            src = replace(src, senders=(only,))
        if mapping is None:
            turns[target], scales[target] = (rows, probs), src
            continue
        levels = corpus.scales[target].levels
        back = {v: k for k, v in mapping.items()}
        cols = [src.levels.index(back[lv]) for lv in levels]
        turns[target] = (rows, probs[:, cols])
        scales[target] = TurnScale(target, levels, corpus.scales[target].kind, src.senders)
    if not any(len(r) for r, _ in turns.values()):
        senders = sorted({s for sc in est.scales.values() for s in sc.senders})
        if not set(senders) & set(table.senders):
            raise DialevalError(f"the model predicts turns of sender(s) {', '.join(senders)}; the corpus has none "
                                f"(its senders: {', '.join(sorted(set(table.senders)))})", file=corpus.source)
        first = min(sc.first for sc in est.scales.values() if sc.level == "turn")
        raise DialevalError(f"the model predicts turns of sender(s) {', '.join(senders)} from position {first} on "
                            f"(in its training, their turns before it were never labelled: DBDC's greeting), and "
                            f"labelled ones anywhere; the corpus's turns of {', '.join(senders)} are all before "
                            f"position {first} and unlabelled", file=corpus.source)
    _warn_unpredicted(corpus, table, turns, scales)
    return turn_records(table, turns, scales)


def _warn_unpredicted(corpus: Corpus, table: TurnTable, turns: dict[str, tuple[np.ndarray, np.ndarray]],
                      scales: dict[str, TurnScale]) -> None:
    """Warn when labelled turns of the corpus are left out of the run (the scorer skips them, or counts them as
    worst): turns of senders the model was not trained on. (Labelled turns of the senders it knows are predicted
    wherever they are: :func:`~dialeval.models.turndata.rows_for`; ``early`` is a guard.) Called once some turn
    is predicted (when none is, the error says why)."""
    for name, (rows, _probs) in turns.items():
        scale = corpus.scales.get(name)
        if scale is None or scale.level != "turn":
            continue
        predicted, known = set(rows.tolist()), set(scales[name].senders)
        missed = [(d.id, pos, t.sender) for i, d in enumerate(corpus.dialogues) for pos, t in enumerate(d.turns)
                  if int(table.start[i]) + pos not in predicted and any(v is not None for v in t.labels.get(name, ()))]
        others = sorted({s for _, _, s in missed if s not in known})
        early = [(did, pos) for did, pos, s in missed if s in known]
        where = f"{corpus.source or 'the corpus'}: "
        if others:
            n = sum(s not in known for _, _, s in missed)
            warnings.warn(f"{where}{n} labelled turn(s) of scale {name!r} are of sender(s) {', '.join(others)}, "
                          f"which the model was not trained on (it predicts {', '.join(sorted(known))}); they are "
                          "not in the run", DialevalWarning, stacklevel=3)
        if early:
            did, pos = early[0]
            warnings.warn(f"{where}the model does not predict {len(early)} labelled turn(s) of scale {name!r} "
                          f"(first: dialogue {did}, turn {pos}); they are not in the run", DialevalWarning,
                          stacklevel=3)


def turn_scores(records: list[dict]) -> list[dict]:
    """``[{"id", "turns": [{"turn", "score"}]}]``: the expected turn score of each predicted turn.

    The score is the expected value of the first scale of the turn whose task orders its levels from good
    to bad (0 = worst .. L-1 = best; ConTurE's 0/1/2). The layout ``dialeval correlate --scores`` reads.

    Examples
    --------
    >>> turn_scores([{"id": "d", "turns": [{"turn": 1, "breakdown": {"O": 0.5, "T": 0.5, "X": 0.0}}]}])
    [{'id': 'd', 'turns': [{'turn': 1, 'score': 1.5}]}]
    """
    out = []
    for rec in records:
        turns = []
        for t in rec.get("turns", []):
            for name, dist in t.items():
                if not isinstance(dist, dict) or name == "labels":
                    continue
                values = turn_score_values(name, tuple(dist))
                if values is not None:
                    p = np.array(list(dist.values()), dtype=np.float64)
                    turns.append({"turn": t["turn"], "score": round(float(p @ values / p.sum()), 6)})
                    break
        out.append({"id": rec["id"], "turns": turns})
    return out
