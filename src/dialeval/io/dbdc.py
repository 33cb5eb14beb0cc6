"""Dialogue Breakdown Detection Challenge logs (FORMATS.md §3): read.

One JSON file per dialogue (``*.log.json``)::

    {"dialogue-id": "iris_00014", "speaker-id": "...", "group-id": "",
     "turns": [{"turn-index": 0, "speaker": "U", "utterance": "Hi", "time": "", "annotations": []},
               {"turn-index": 1, "speaker": "S", "utterance": "Hi.", "time": "",
                "annotations": [{"annotator-id": "43374108", "breakdown": "X",
                                 "ungrammatical-sentence": "", "comment": ""}, ...]}]}

Speakers ``U``/``S`` become senders ``user``/``system``; each annotated turn gets the annotators' labels on the
ordinal scale ``breakdown`` (``O`` not a breakdown, ``T`` possible breakdown, ``X`` breakdown). A turn's
``annotations`` is a list: ``[]`` (as on every user turn and each dialogue's opening system turn of DBDC3) or the key
left out is a turn nobody labelled; ``null`` or any other value is refused. A path is one file or a folder, read
recursively (``dbdc3/en/eval`` reads the four evaluation sets).
"""

from __future__ import annotations

import warnings
from pathlib import Path

from dialeval.corpus import Corpus, Dialogue, Scale, Turn
from dialeval.errors import DialevalError, DialevalWarning, describe
from dialeval.io._files import (
    MAX_BYTES,
    as_path,
    files_in,
    load_json_document,
    require_dict,
    require_list,
    require_str,
)

BREAKDOWN = "breakdown"
BREAKDOWN_LEVELS = ("O", "T", "X")
SPEAKERS = {"U": "user", "S": "system"}
FILE_PATTERN = "*.log.json"
SYSTEMS = {"IRIS": "IRIS", "TKTK": "TickTock", "CIC": "CIC", "YI": "YI"}
"""Chatbot of each DBDC3 English set, by the prefix of its folder name (``IRIS_100`` -> IRIS)."""
_ANNOTATION_EXTRA = ("ungrammatical-sentence", "comment")


def breakdown_scale() -> Scale:
    """The DBDC label scale: O, T, X in that order (ordinal), on system turns."""
    return Scale(BREAKDOWN, BREAKDOWN_LEVELS, "ordinal", "turn", "system",
                 "dialogue breakdown: O not a breakdown, T possible breakdown, X breakdown")


def read_dbdc(source: str | Path, *, max_bytes: int = MAX_BYTES) -> Corpus:
    """Read DBDC ``*.log.json`` files (one file, or every one under a folder) into a Corpus.

    Parameters
    ----------
    source : path
        A ``*.log.json`` file or a folder searched recursively for them (sorted by path).
    max_bytes : int
        Size limit of one file.

    Returns
    -------
    Corpus
        ``format="dbdc"``, one scale ``breakdown`` (turn level, system turns). Each dialogue's ``meta``
        keeps ``speaker-id``, ``group-id``, ``set`` (the folder name) and ``system`` (IRIS, TickTock...).

    Raises
    ------
    DialevalError
        A file that is not a DBDC log, a turn-index out of order, a speaker other than U/S, a label other
        than O/T/X, an annotator twice on one turn, or a dialogue id met twice.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = {"dialogue-id": "x_00001", "turns": [
    ...     {"turn-index": 0, "speaker": "U", "utterance": "hi", "annotations": []},
    ...     {"turn-index": 1, "speaker": "S", "utterance": "hello", "annotations": [
    ...         {"annotator-id": "a", "breakdown": "O"}, {"annotator-id": "b", "breakdown": "T"}]}]}
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x_00001.log.json"
    >>> _ = p.write_text(json.dumps(d))
    >>> c = read_dbdc(p)
    >>> c.dialogues[0].turns[1].labels
    {'breakdown': ['O', 'T']}
    """
    path = as_path(source, "DBDC logs")
    files = files_in(path, [FILE_PATTERN], "DBDC logs") if path.is_dir() else [path]
    dialogues: list[Dialogue] = []
    seen: dict[str, str] = {}
    for f in files:
        dlg = _read_log(f, path if path.is_dir() else f.parent, max_bytes)
        if dlg.id in seen:
            raise DialevalError(f"dialogue id met twice (also in {seen[dlg.id]})", file=str(f), dialogue=dlg.id,
                                field="dialogue-id")
        seen[dlg.id] = str(f)
        dialogues.append(dlg)
    _warn_user_labels(dialogues, seen)
    return Corpus(dialogues, {BREAKDOWN: breakdown_scale()}, "dbdc", str(path), "en")


def _warn_user_labels(dialogues: list[Dialogue], files: dict[str, str]) -> None:
    """A warning naming the first user (U) turn that holds breakdown annotations, and how many do.

    DBDC annotates system turns only, and its scale (:func:`breakdown_scale`) counts them only, so such labels
    (a hand-made file, or one written from a corpus that labels every turn) are kept on their turn but are in
    no gold distribution: said, not dropped in silence."""
    off = [(d, i, len(t.labels[BREAKDOWN])) for d in dialogues for i, t in enumerate(d.turns)
           if t.sender != "system" and t.labels.get(BREAKDOWN)]
    if not off:
        return
    d, i, n = off[0]
    more = (f"; {len(off) - 1} more user turn(s) hold breakdown labels "
            f"({sum(k for _, _, k in off[1:])} label(s) in all), left out the same way") if len(off) > 1 else ""
    where = DialevalError(f"{n} breakdown label(s) on a user (U) turn: kept on the turn, but DBDC annotates system "
                          "(S) turns only and its breakdown scale counts them only, so the gold leaves these labels "
                          f"out{more}", file=files[d.id], dialogue=d.id, field=f"turns[{i}].annotations")
    warnings.warn(str(where), DialevalWarning, stacklevel=3)


def _system_of(set_name: str) -> str | None:
    return SYSTEMS.get(set_name.split("_")[0].upper())


def check_dialogue_id(did: object, file: str) -> str:
    """``did`` if it is a usable DBDC ``"dialogue-id"``, else the error naming ``file`` and the field.

    A log (:func:`read_dbdc`) and a labels file (:mod:`dialeval.io.turnruns`) apply this one rule, so that a
    labels folder written from logs is read back: a string with a character other than whitespace.

    Parameters
    ----------
    did : object
        The value of ``"dialogue-id"`` as the file holds it.
    file : str
        The file it comes from, named in the error.

    Returns
    -------
    str
        ``did``, unchanged (not stripped).

    Raises
    ------
    DialevalError
        ``did`` is not a string, or is empty or whitespace only. A blank value is also described by its length,
        which stays exact where a message's runs of spaces are folded into one (the CLI's one-line errors).

    Examples
    --------
    >>> check_dialogue_id("d1", "d1.log.json")
    'd1'
    >>> check_dialogue_id("  ", "x.log.json")
    Traceback (most recent call last):
    ...
    dialeval.errors.DialevalError: x.log.json: dialogue-id: 'dialogue-id' must be a non-empty string, received '  ' \
(2 characters, all whitespace; an id needs a character other than whitespace)
    """
    if isinstance(did, str) and did.strip():
        return did
    got = describe(did)
    if isinstance(did, str) and did:
        got += (f" ({len(did)} character{'s' if len(did) > 1 else ''}, all whitespace; an id needs a character "
                "other than whitespace)")
    raise DialevalError(f"'dialogue-id' must be a non-empty string, received {got}", file=file, field="dialogue-id")


def _read_log(f: Path, root: Path, max_bytes: int) -> Dialogue:
    file = str(f)
    rec = require_dict(load_json_document(f, max_bytes), "the top level", file=file)
    did = check_dialogue_id(rec.get("dialogue-id"), file)
    turns_raw = rec.get("turns")
    if not isinstance(turns_raw, list) or not turns_raw:
        raise DialevalError(f"'turns' must be a non-empty list, received {describe(turns_raw)}", file=file,
                            dialogue=did, field="turns")
    turns = [_read_turn(raw, i, did, file) for i, raw in enumerate(turns_raw)]
    meta = {k: v for k, v in rec.items() if k not in ("dialogue-id", "turns")}
    meta["set"] = f.parent.name
    system = _system_of(f.parent.name)
    if system is not None:
        meta["system"] = system
    meta["file"] = str(f.relative_to(root)) if f.is_relative_to(root) else f.name
    return Dialogue(did, turns, meta=meta)


def _read_turn(raw: object, i: int, did: str, file: str) -> Turn:
    where = f"turns[{i}]"
    t = require_dict(raw, where, file=file, dialogue=did, field=where)
    if isinstance(t.get("turn-index"), bool) or t.get("turn-index") != i:
        raise DialevalError(f"turn-index {describe(t.get('turn-index'))} where {i} was expected (turns must be "
                            "numbered 0, 1, 2, ... in order)", file=file, dialogue=did, field=f"{where}.turn-index")
    speaker = t.get("speaker")
    if not isinstance(speaker, str) or speaker not in SPEAKERS:   # a list or an object is not hashable
        raise DialevalError(f"speaker {describe(speaker)} is not allowed; allowed are U, S", file=file,
                            dialogue=did, field=f"{where}.speaker")
    text = require_str(t.get("utterance", ""), "'utterance'", file=file, dialogue=did, field=f"{where}.utterance")
    meta = {k: v for k, v in t.items() if k not in ("turn-index", "speaker", "utterance", "annotations")}
    meta["turn-index"] = i
    turn = Turn(SPEAKERS[speaker], [text], meta=meta)
    anns = require_list(t.get("annotations", []), "'annotations'", "a list of annotation objects ([], or no "
                        "'annotations' key, for a turn nobody labelled)", file=file, dialogue=did,
                        field=f"{where}.annotations")
    if anns:
        labels, ids, extra = [], [], []
        for a, ann in enumerate(anns):
            aw = f"{where}.annotations[{a}]"
            ann = require_dict(ann, aw, file=file, dialogue=did, field=aw)
            lab = ann.get("breakdown")
            if lab not in BREAKDOWN_LEVELS:
                raise DialevalError(f"breakdown label {describe(lab)} is not allowed; allowed are O, T, X",
                                    file=file, dialogue=did, field=f"{aw}.breakdown")
            raw_aid = ann.get("annotator-id", f"#{a}")
            if isinstance(raw_aid, bool) or not isinstance(raw_aid, str | int):
                raise DialevalError(f"annotator id {describe(raw_aid)} is not allowed; allowed are a string or a "
                                    "number", file=file, dialogue=did, field=f"{aw}.annotator-id")
            aid = str(raw_aid)
            if aid in ids:
                raise DialevalError(f"annotator {aid!r} labels this turn twice", file=file, dialogue=did,
                                    field=f"{aw}.annotator-id")
            labels.append(lab)
            ids.append(aid)
            extra.append({k: ann[k] for k in _ANNOTATION_EXTRA if k in ann})   # empty ones too: written back
        turn.labels[BREAKDOWN] = labels
        turn.annotators = ids
        if any(extra):
            turn.meta["annotation_extra"] = extra
    return turn
