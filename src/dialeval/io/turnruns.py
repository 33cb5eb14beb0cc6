"""Runs of predicted distributions for any corpus (turn- or dialogue-level scales), aligned with gold.

Two layouts are read:

1. dialeval's (also the layout of ``dialeval gold`` output, so a gold file is a perfect run): a JSON array of
   dialogues, or an object whose ``"dialogues"`` holds that array::

       [{"id": "iris_00014",
         "turns": [{"turn": 1, "breakdown": {"O": 0.6, "T": 0.3, "X": 0.1}},
                   {"turn": 3, "breakdown": {"O": 0.2, "T": 0.2, "X": 0.6}}],
         "likeable": {"1": 0.1, "2": 0.3, "3": 0.6}}]

   ``turn`` is the turn's 0-based position in the dialogue (DBDC's ``turn-index``); a distribution is an
   object ``level: probability`` under the scale's name (turn-level scales inside ``turns``, dialogue-level
   ones beside ``id``). A missing level counts as 0; each distribution is normalised.
2. DBDC3's submission format: a folder of ``<dialogue-id>.labels.json`` files (or one such file), each
   ``{"dialogue-id", "turns": [{"turn-index", "labels": [{"breakdown", "prob-O", "prob-T", "prob-X"}]}]}``,
   read as the scale ``breakdown``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dialeval.distributions import Distributions
from dialeval.errors import DialevalError, describe, suggest
from dialeval.io._files import as_path, files_in, load_json_document
from dialeval.io.dbdc import BREAKDOWN, BREAKDOWN_LEVELS, check_dialogue_id
from dialeval.io.runs import read_distribution
from dialeval.io.stc3 import dialogue_id
from dialeval.io.values import normalise

RESERVED = ("id", "turns", "n")
HARD = "labels"
"""Optional key of a turn: ``{scale: level}``, the run's hard label (DBDC3's ``breakdown``)."""
DBDC_PATTERN = "*.labels.json"


@dataclass
class TurnRun:
    """A run aligned with gold: per scale, the gold rows it predicts and its normalised distributions."""

    rows: dict[str, np.ndarray]
    probs: dict[str, np.ndarray]
    dialogue_ids: list[str]
    extra_dialogues: list[str] = field(default_factory=list)
    extra_items: list[str] = field(default_factory=list)
    file: str | None = None
    labels: dict[str, list[str | None]] = field(default_factory=dict)
    """Per scale, the run's hard label of each row of ``probs`` (None where it gives none)."""


def _dbdc_record(rec: object, file: str) -> dict:
    """One DBDC3 labels file as a dialeval run record, every value checked here, so that an error names this
    file and the field as the file spells it (``turns[0].labels[0].prob-O``)."""
    if not isinstance(rec, dict) or "dialogue-id" not in rec:
        raise DialevalError("not a DBDC3 labels file: expected an object with 'dialogue-id' and 'turns'", file=file)
    did = check_dialogue_id(rec["dialogue-id"], file)
    turns = rec.get("turns")  # may be empty: a dialogue of which the run predicts no turn (write_dbdc_labels)
    if not isinstance(turns, list):
        raise DialevalError(f"'turns' must be a list, received {describe(turns)}", file=file, dialogue=did,
                            field="turns")
    probs = tuple(f"prob-{lv}" for lv in BREAKDOWN_LEVELS)
    out = []
    for i, t in enumerate(turns):
        where = f"turns[{i}]"
        if not isinstance(t, dict):
            raise DialevalError(f"a turn must be an object, received {describe(t)}", file=file, dialogue=did,
                                field=where)
        pos = t.get("turn-index")
        if isinstance(pos, bool) or not isinstance(pos, int) or pos < 0:
            raise DialevalError(f"'turn-index' {describe(pos)} is not allowed; allowed are the turn's 0-based "
                                "position, an integer >= 0", file=file, dialogue=did, field=f"{where}.turn-index")
        labels = t.get("labels")
        if not isinstance(labels, list) or not labels or not isinstance(labels[0], dict):
            raise DialevalError("expected 'labels': [{'breakdown', 'prob-O', 'prob-T', 'prob-X'}], "
                                f"received {describe(labels)}", file=file, dialogue=did, field=f"{where}.labels")
        lab = labels[0]
        at = f"{where}.labels[0]"
        missing = [p for p in probs if p not in lab]
        if missing:
            raise DialevalError(f"missing {', '.join(missing)}", file=file, dialogue=did, field=at)
        unknown = [k for k in lab if isinstance(k, str) and k.startswith("prob-") and k not in probs]
        if unknown:  # the official script reads labels[0]'s three probabilities (other keys and entries: ignored)
            raise DialevalError(f"unknown bin {describe(unknown[0])}; allowed are " + ", ".join(probs),
                                file=file, dialogue=did, field=at)
        dist = read_distribution({p: lab[p] for p in probs}, probs, did, at, file)
        turn = {"turn": pos, BREAKDOWN: dict(zip(BREAKDOWN_LEVELS, dist, strict=True))}
        hard = lab.get(BREAKDOWN)
        if hard is not None:
            if hard not in BREAKDOWN_LEVELS:
                raise DialevalError(f"hard label {describe(hard)} is not allowed{suggest(hard, BREAKDOWN_LEVELS)}; "
                                    "allowed are " + ", ".join(BREAKDOWN_LEVELS), file=file, dialogue=did,
                                    field=f"{at}.{BREAKDOWN}")
            turn[HARD] = {BREAKDOWN: hard}
        out.append(turn)
    return {"id": did, "turns": out}


def load_run_records(source: object) -> tuple[list, str | None]:
    """The run's dialogue records (dialeval layout) from a path or parsed JSON, and the file name."""
    if isinstance(source, list):
        return source, None
    if isinstance(source, dict):
        return _records_of(source, None), None
    path = as_path(source, "run")
    if path.is_dir():
        files = files_in(path, [DBDC_PATTERN], "DBDC3 labels files")
        return [_dbdc_record(load_json_document(f), str(f)) for f in files], str(path)
    return _records_of(load_json_document(path), str(path)), str(path)


def _records_of(doc: object, file: str | None) -> list:
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict) and "dialogue-id" in doc:
        return [_dbdc_record(doc, file or "run")]
    if isinstance(doc, dict) and isinstance(doc.get("dialogues"), list):
        return doc["dialogues"]
    raise DialevalError("a run is a JSON array of dialogues, an object with 'dialogues', or DBDC3 labels; "
                        f"received a JSON {type(doc).__name__}", file=file)


def read_turn_run(source: object, gold: dict[str, Distributions]) -> TurnRun:
    """Read a run (path, folder of DBDC3 labels, or parsed JSON) and align it with gold distributions.

    Items of the run that the gold does not have (a dialogue id not in the gold, a turn without gold
    labels) are counted as extra, not scored.

    Raises
    ------
    DialevalError
        A dialogue without id or met twice; a turn without an integer ``turn`` or met twice; a scale the
        gold does not have; an unknown level; a negative, NaN, infinite or all-zero distribution.
    """
    records, file = load_run_records(source)
    index = {name: d.row_index() for name, d in gold.items()}
    gold_ids = {i for d in gold.values() for i in d.ids}
    rows: dict[str, list[int]] = {n: [] for n in gold}
    vals: dict[str, list[tuple]] = {n: [] for n in gold}
    hard: dict[str, list[str | None]] = {n: [] for n in gold}
    seen: set[str] = set()
    extra_d: list[str] = []
    extra_i: list[str] = []
    for i, rec in enumerate(records):
        did = dialogue_id(rec, i, file)   # the STC-3 run reader's rule: a string (or an integer) id
        if did in seen:
            raise DialevalError("dialogue id met twice", file=file, dialogue=did, field="id")
        seen.add(did)
        if did not in gold_ids:
            extra_d.append(did)
            continue
        items = [(None, k, v, k, None) for k, v in rec.items() if k not in RESERVED]
        turns = rec.get("turns", [])
        if not isinstance(turns, list):
            raise DialevalError("'turns' must be a list", file=file, dialogue=did, field="turns")
        done: set[int] = set()
        for j, t in enumerate(turns):
            if not isinstance(t, dict):
                raise DialevalError("a turn must be an object", file=file, dialogue=did, field=f"turns[{j}]")
            pos = t.get("turn")
            if isinstance(pos, bool) or not isinstance(pos, int) or pos < 0:
                raise DialevalError(f"'turn' {describe(pos)} is not allowed; allowed are the turn's 0-based "
                                    "position, an integer >= 0", file=file, dialogue=did, field=f"turns[{j}].turn")
            if pos in done:
                raise DialevalError(f"turn {pos} is given twice", file=file, dialogue=did, field=f"turns[{j}]")
            done.add(pos)
            given = t.get(HARD, {})
            if not isinstance(given, dict):
                raise DialevalError(f"'{HARD}' must be an object scale: level, received {describe(given)}", file=file,
                                    dialogue=did, field=f"turns[{j}].{HARD}")
            items.extend((pos, k, v, f"turns[{j}].{k}", given.get(k)) for k, v in t.items()
                         if k not in ("turn", "n", HARD))
        for pos, name, dist, where, label in items:
            if name not in gold:
                raise DialevalError(f"scale {name!r} is not in the gold{suggest(name, gold)}; its scales are "
                                    + ", ".join(gold),
                                    file=file, dialogue=did, field=where)
            g = gold[name]
            if (pos is None) != (g.turns is None):
                lvl = "dialogue" if g.turns is None else "turn"
                raise DialevalError(f"scale {name!r} is a {lvl}-level scale; give it "
                                    + ("beside 'id'" if lvl == "dialogue" else "inside 'turns'"),
                                    file=file, dialogue=did, field=where)
            r = index[name].get((did, pos))
            if r is None:
                extra_i.append(f"{did}:{name}" if pos is None else f"{did}:{pos}:{name}")
                continue
            vals[name].append(read_distribution(dist, g.scale.levels, did, where, file))
            rows[name].append(r)
            if label is not None and label not in g.scale.levels:
                raise DialevalError(f"hard label {describe(label)} is not allowed{suggest(label, g.scale.levels)}; "
                                    "allowed are " + ", ".join(g.scale.levels), file=file, dialogue=did,
                                    field=where.rsplit(".", 1)[0] + f".{HARD}.{name}")
            hard[name].append(label)
    if not seen:
        raise DialevalError("the run holds no dialogue", file=file)
    out_rows, out_probs = {}, {}
    for n in gold:
        if rows[n]:
            arr = np.asarray(vals[n], dtype=float)
            out_rows[n] = np.asarray(rows[n], dtype=np.int64)
            out_probs[n] = normalise(arr)
    return TurnRun(out_rows, out_probs, [i for i in seen if i in gold_ids], extra_d, extra_i, file,
                   {n: hard[n] for n in out_rows})


def run_document(dists: dict[str, Distributions]) -> list[dict]:
    """Distributions (e.g. a model's predictions) as a run in dialeval's layout, dialogues in first-seen order."""
    by_id: dict[str, dict] = {}
    turns: dict[tuple[str, int], dict] = {}
    for name, d in dists.items():
        for r, (did, t) in enumerate(d.item_keys()):
            entry = by_id.setdefault(did, {"id": did})
            dist = {lv: float(v) for lv, v in zip(d.scale.levels, d.probs[r].tolist(), strict=True)}
            if t is None:
                entry[name] = dist
            else:
                if (did, t) not in turns:
                    turns[(did, t)] = {"turn": t}
                    entry.setdefault("turns", []).append(turns[(did, t)])
                turns[(did, t)][name] = dist
    for e in by_id.values():
        if "turns" in e:
            e["turns"].sort(key=lambda x: x["turn"])
    return list(by_id.values())


def write_dbdc_labels(records: list[dict], folder: str, scale: str = BREAKDOWN) -> list[str]:
    """Write a turn-layout run in DBDC3's submission layout (layout 2 above, which :func:`read_turn_run` reads):
    ``<folder>/<dialogue-id>.labels.json`` per dialogue, into a new or empty ``folder`` (an earlier run's files
    left beside these would be scored with them), all at once.

    Each ``{"dialogue-id", "turns": [{"turn-index", "labels": [{"breakdown", "prob-O", "prob-T", "prob-X"}]}]}``
    with the hard label of the run; ``"turns": []`` for a dialogue of which the run predicts no turn (one whose
    only system turn is DBDC's unlabelled greeting), so that the folder holds every dialogue of the run. Returns
    the files written, one per dialogue.

    Raises
    ------
    DialevalError
        The run holds no dialogue, or predicts no turn on ``scale`` but other scales (``--to dbdc`` writes
        ``scale``, an O, T, X scale, only); a dialogue id two files would share; the folder is not new or empty.
    """

    from dialeval.io.atomic import check_output_folder, claim_file_name
    from dialeval.io.jsonarray import json_text
    from dialeval.io.writers import write_folder

    out = check_output_folder(folder, "--to dbdc's *.labels.json files")
    files, names, any_turn = [], {}, False
    for rec in records:
        turns = []
        for t in rec.get("turns", []):
            dist = t.get(scale)
            if not isinstance(dist, dict):
                continue
            if tuple(dist) != BREAKDOWN_LEVELS:
                raise DialevalError(f"--to dbdc needs the O, T, X scale {scale!r}; the run has levels "
                                    + ", ".join(dist))
            label = {scale: t.get("labels", {}).get(scale) or max(dist, key=dist.get)}
            label |= {f"prob-{lv}": dist[lv] for lv in BREAKDOWN_LEVELS}
            turns.append({"turn-index": t["turn"], "labels": [label]})
        any_turn = any_turn or bool(turns)
        # every dialogue gets its file, "turns": [] where none of its turns is predicted (a log whose only system
        # turn is the unlabelled greeting), so that evaluate finds each dialogue of the run
        path = out / claim_file_name(names, str(rec["id"]), ".labels.json", file=str(out))
        files.append((path, json_text({"dialogue-id": rec["id"], "turns": turns}, indent=1) + "\n"))
    has = sorted({k for rec in records for t in rec.get("turns", []) for k in t if k not in ("turn", "labels")})
    other = has or sorted({k for rec in records for k in rec if k not in RESERVED})
    if not records or (not any_turn and other):  # a run of other scales only (WOCHAT's, STC-3's dialogue scales)
        raise DialevalError(f"the run predicts no turn on scale {scale!r} (it predicts "
                            + (", ".join(map(repr, has)) or "no turn-level scale")
                            + "); --to dbdc writes DBDC3's O/T/X breakdown scale only: leave it out to write this "
                            "run in dialeval's layout")
    # a new or empty folder, written all at once (no earlier run's files beside these, nothing on a failure)
    return write_folder(out, [(path.name, text.encode()) for path, text in files])
