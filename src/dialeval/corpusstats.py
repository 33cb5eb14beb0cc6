"""What a corpus holds: dialogues, turns, annotated turns, annotators per item, label counts, agreement."""

from __future__ import annotations

import numpy as np

from dialeval.agreement import scale_agreement
from dialeval.corpus import Corpus
from dialeval.distributions import label_counts


def _spread(x: np.ndarray) -> dict:
    if not x.size:
        return {"min": None, "median": None, "max": None}
    med = float(np.median(x))
    return {"min": int(x.min()), "median": int(med) if med.is_integer() else med, "max": int(x.max())}


def corpus_stats(corpus: Corpus) -> dict:
    """A summary of a corpus, as a JSON-ready dict.

    ``dialogues``, ``turns``, ``annotated_turns`` (turns with at least one label), ``senders`` (turns per
    sender) and, per scale: kind, level, levels, ``items`` (labelled items), ``annotators_per_item``
    (min/median/max of labels per item, missing labels not counted), ``missing`` (None labels, e.g. N/A),
    ``label_counts`` (per level) and ``agreement`` (Krippendorff's alpha, ordinal or nominal by the scale,
    with the pairable units it used and a note when undefined).

    Examples
    --------
    >>> from dialeval.corpus import Corpus, Dialogue, Turn, Scale
    >>> s = Scale("b", ("O", "X"), "nominal", "turn")
    >>> c = Corpus([Dialogue("d", [Turn("user", ["hi"]), Turn("system", ["yo"], {"b": ["O", "O", "X"]})])], {"b": s})
    >>> st = corpus_stats(c)
    >>> st["turns"], st["annotated_turns"], st["scales"]["b"]["label_counts"]
    (2, 1, {'O': 2, 'X': 1})
    """
    n_turns = sum(len(d.turns) for d in corpus)
    annotated = sum(1 for d in corpus for t in d.turns if any(v is not None for vs in t.labels.values() for v in vs))
    senders: dict[str, int] = {}
    for d in corpus:
        for t in d.turns:
            senders[t.sender] = senders.get(t.sender, 0) + 1
    scales = {}
    for name, scale in corpus.scales.items():
        dist = label_counts(corpus, name)
        if not len(dist):
            continue
        missing = sum(sum(v is None for v in (d.labels.get(name) or ())) for d in corpus) if scale.level == "dialogue" \
            else sum(sum(v is None for v in (t.labels.get(name) or ())) for d in corpus for t in d.turns)
        ag = scale_agreement(corpus, name)
        scales[name] = {
            "kind": scale.kind, "level": scale.level, "sender": scale.sender, "levels": list(scale.levels),
            "items": len(dist), "annotators_per_item": _spread(dist.n_labels), "missing": int(missing),
            "label_counts": {lv: int(c) for lv, c in zip(scale.levels, dist.counts.sum(axis=0).tolist(), strict=True)},
            "agreement": {"measure": f"Krippendorff's alpha ({scale.kind})", "alpha": ag.alpha,
                          "units": ag.units, "pairable_labels": ag.pairable, "note": ag.note},
        }
    from dialeval import __version__
    return {"source": corpus.source, "format": corpus.format, "dialogues": len(corpus), "turns": n_turns,
            "annotated_turns": annotated, "senders": senders, "scales": scales,
            "notices": list(corpus.meta.get("notices", [])), "dialeval_version": __version__}
