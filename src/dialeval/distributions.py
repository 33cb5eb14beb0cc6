"""Tables of distributions over a scale: the one shape gold, runs and predictions share.

For each scale, :class:`Distributions` holds an ``n × L`` array of probabilities and an index of its items:
the dialogue id of each row and, for a turn-level scale, the turn's position in the dialogue (0-based,
DBDC's ``turn-index``). Gold is built from any :class:`~dialeval.corpus.Corpus` by counting each item's
per-annotator labels; ``counts`` keeps those counts (the annotators per item, and the input of agreement).

The gold document written by ``dialeval gold`` (and read back as a "perfect run")::

    {"dialeval": "gold", "version": "...", "source": "...", "format": "dbdc", "blocks": false,
     "scales": {"breakdown": {"kind": "ordinal", "level": "turn", "levels": ["O", "T", "X"], "sender": "system"}},
     "dialogues": [{"id": "iris_00014", "<dialogue-level scale>": {"level": p, ...},
                    "turns": [{"turn": 1, "n": 30, "breakdown": {"O": 0.33, "T": 0.27, "X": 0.4}}, ...]}]}
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from dialeval.corpus import Corpus, Dialogue, Scale, Turn, expect_corpus
from dialeval.errors import DialevalError, describe, refused


@dataclass
class Distributions:
    """Distributions of one scale: ``probs[i]`` is item ``(ids[i], turns[i])`` (``turns`` None: dialogue level).

    ``counts`` holds the label counts of gold items (None for a run). Rows are normalised to sum 1.

    Examples
    --------
    >>> from dialeval.corpus import Corpus, Dialogue, Turn, Scale
    >>> s = Scale("b", ("O", "T", "X"), "ordinal", "turn")
    >>> c = Corpus([Dialogue("d1", [Turn("user", ["hi"]), Turn("system", ["yo"], {"b": ["O", "O", "X", None]})])],
    ...            {"b": s})
    >>> g = gold_distributions(c)["b"]
    >>> g.item_keys(), g.probs.round(3).tolist(), g.counts.tolist()
    ([('d1', 1)], [[0.667, 0.0, 0.333]], [[2, 0, 1]])
    """

    scale: Scale
    ids: list[str]
    turns: np.ndarray | None
    probs: np.ndarray
    counts: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def n_labels(self) -> np.ndarray:
        """Labels per item (annotators who gave one); None-free gold only."""
        if self.counts is None:
            raise DialevalError(f"scale {self.scale.name!r}: a run has no label counts")
        return self.counts.sum(axis=1)

    def item_keys(self) -> list[tuple[str, int | None]]:
        """``(dialogue id, turn position or None)`` of each row."""
        if self.turns is None:
            return [(i, None) for i in self.ids]
        return list(zip(self.ids, self.turns.tolist(), strict=True))

    def row_index(self) -> dict[tuple[str, int | None], int]:
        return {k: r for r, k in enumerate(self.item_keys())}

    def take(self, rows: np.ndarray) -> Distributions:
        """The rows ``rows`` (an index array), in that order."""
        return Distributions(self.scale, [self.ids[r] for r in rows.tolist()],
                             None if self.turns is None else self.turns[rows], self.probs[rows],
                             None if self.counts is None else self.counts[rows])


def labelled_items(corpus: Corpus, scale: Scale) -> Iterator[tuple[int, int | None, Dialogue | Turn]]:
    """The items of ``scale`` that hold a list of labels in ``corpus``, in corpus order: ``(index of the
    dialogue in the corpus, 0-based turn or None for a dialogue-level scale, the dialogue or turn)``; a turn
    only where the scale applies to its sender. The one walk of items behind gold (:func:`label_counts`) and
    models' training targets (:func:`dialeval.models.turndata.scale_targets`); the list may hold only None.

    Examples
    --------
    >>> from dialeval.corpus import Corpus, Dialogue, Scale, Turn
    >>> s = Scale("b", ("O", "X"), "nominal", "turn", sender="system")
    >>> c = Corpus([Dialogue("a", [Turn("user", ["hi"], {"b": ["O"]}), Turn("system", ["yo"], {"b": [None]})])],
    ...            {"b": s})
    >>> [(i, t, item.labels["b"]) for i, t, item in labelled_items(c, s)]
    [(0, 1, [None])]
    """
    expect_corpus(corpus)
    name = scale.name
    for i, d in enumerate(corpus.dialogues):
        if scale.level == "dialogue":
            if name in d.labels:
                yield i, None, d
            continue
        for t, turn in enumerate(d.turns):
            if name in turn.labels and scale.applies_to(turn.sender):
                yield i, t, turn


def label_counts(corpus: Corpus, scale: str | Scale, *, min_labels: int = 1) -> Distributions:
    """Count each item's labels on one scale (``None`` labels skipped) into a :class:`Distributions`.

    Items are the dialogues (a dialogue-level scale) or the turns the scale applies to (a turn-level one)
    with at least ``min_labels`` labels; others are left out.

    Raises
    ------
    DialevalError
        An unknown scale, or a label that is not one of the scale's levels (located).
    """
    expect_corpus(corpus)
    if isinstance(scale, str):
        if scale not in corpus.scales:
            raise DialevalError(f"no scale {scale!r} in the corpus; its scales are " + ", ".join(corpus.scales),
                                file=corpus.source)
        scale = corpus.scales[scale]
    check_min_labels(min_labels)
    pos = {lv: i for i, lv in enumerate(scale.levels)}
    ids: list[str] = []
    turns: list[int] = []
    rows: list[int] = []
    codes: list[int] = []

    for i, t, item in labelled_items(corpus, scale):
        did = corpus.dialogues[i].id
        cs = []
        for a, lab in enumerate(item.labels[scale.name]):
            if lab is None:
                continue
            c = pos.get(lab)
            if c is None:
                where = f"turns[{t}].{scale.name}[{a}]" if t is not None else f"{scale.name}[{a}]"
                raise DialevalError(f"label {describe(lab)} is not on scale {scale.name!r}; allowed are "
                                    + ", ".join(scale.levels), file=corpus.source, dialogue=did, field=where)
            cs.append(c)
        if len(cs) >= min_labels:
            r = len(ids)
            ids.append(did)
            if t is not None:
                turns.append(t)
            rows.extend([r] * len(cs))
            codes.extend(cs)
    L = len(scale)
    counts = np.bincount(np.asarray(rows, dtype=np.int64) * L + np.asarray(codes, dtype=np.int64),
                         minlength=len(ids) * L).reshape(len(ids), L)
    probs = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    return Distributions(scale, ids, np.asarray(turns, dtype=np.int64) if scale.level == "turn" else None,
                         probs, counts)


def check_min_labels(min_labels: object) -> int:
    """The fewest labels an item needs to be kept: an integer >= 1."""
    if isinstance(min_labels, bool) or not isinstance(min_labels, int) or min_labels < 1:
        raise refused("min_labels", min_labels, "integers >= 1")
    return min_labels


def gold_distributions(corpus: Corpus, scales: list[str] | None = None, *,
                       min_labels: int = 1) -> dict[str, Distributions]:
    """Gold distributions of every labelled scale of a corpus (or of ``scales``), by scale name.

    Scales with no labelled item are left out (e.g. the labels of a test file).
    """
    expect_corpus(corpus)
    names = list(corpus.scales) if scales is None else list(scales)
    out = {}
    for n in names:
        d = label_counts(corpus, n, min_labels=min_labels)
        if len(d) or scales is not None:
            out[n] = d
    return out


def _dist_dict(scale: Scale, row: np.ndarray) -> dict[str, float]:
    return {lv: float(v) for lv, v in zip(scale.levels, row.tolist(), strict=True)}


def gold_document(corpus: Corpus, dists: dict[str, Distributions]) -> dict:
    """The self-describing JSON document of gold distributions (see the module docstring)."""
    expect_corpus(corpus)
    if not isinstance(dists, Mapping) or not all(isinstance(d, Distributions) for d in dists.values()):
        raise DialevalError(f"dists {describe(dists)} are not allowed; allowed is a dict of scale name -> "
                            "Distributions, e.g. gold_distributions(corpus)")
    from dialeval import __version__
    by_id: dict[str, dict] = {d.id: {"id": d.id} for d in corpus.dialogues}
    turn_entries: dict[tuple[str, int], dict] = {}
    for name, dist in dists.items():
        n = dist.n_labels
        for r, (did, t) in enumerate(dist.item_keys()):
            entry = by_id[did] if t is None else turn_entries.setdefault((did, t), {"turn": t})
            entry[name] = _dist_dict(dist.scale, dist.probs[r])
            if t is not None:
                entry["n"] = max(entry.get("n", 0), int(n[r]))
            else:
                entry.setdefault("n", {})[name] = int(n[r])
    for (did, _t), entry in sorted(turn_entries.items(), key=lambda kv: kv[0][1]):
        by_id[did].setdefault("turns", []).append(entry)
    scales = {n: {"kind": d.scale.kind, "level": d.scale.level, "levels": list(d.scale.levels),
                  "sender": d.scale.sender, "description": d.scale.description} for n, d in dists.items()}
    return {"dialeval": "gold", "version": __version__, "source": corpus.source, "format": corpus.format,
            "blocks": bool(corpus.meta.get("blocks", False)), "scales": scales,
            "dialogues": [e for e in by_id.values() if len(e) > 1]}
