"""NTCIR-14 STC-3 / NTCIR-15-16 DialEval customer-helpdesk dialogues (FORMATS.md §1): read and write.

A dataset is a JSON array of ``{"id", "turns": [{"sender", "utterances"}], "annotations": [{"quality":
{"A", "S", "E"}, "nugget": [...]}]}``. Quality is on the ordered scale ``2, 1, 0, -1, -2``; nugget types
depend on the sender of the turn.

``annotations`` left out is an unlabelled dialogue (STC-3's test files); ``[]`` too, said in a warning when other
dialogues of the file are annotated (the gold leaves it out); ``null`` or any other value that is not a list is
refused (:func:`annotations_of`).
"""

from __future__ import annotations

import warnings

from dialeval.corpus import Corpus, Dialogue, Scale, Turn
from dialeval.errors import DialevalError, DialevalWarning, describe, first_few
from dialeval.io._files import require_list
from dialeval.io.jsonarray import Source, dump_json, load_records, source_name

QUALITY_KEYS = ("A", "S", "E")
QUALITY_NAMES = {"A": "task accomplishment", "S": "customer satisfaction", "E": "dialogue effectiveness"}
QUALITY_LEVELS = ("2", "1", "0", "-1", "-2")
SENDERS = ("customer", "helpdesk")
NUGGET_TYPES = {"customer": ("CNUG0", "CNUG", "CNUG*", "CNaN"), "helpdesk": ("HNUG", "HNUG*", "HNaN")}
NUGGET_SCALE = {"customer": "nugget_customer", "helpdesk": "nugget_helpdesk"}


def stc3_scales() -> dict[str, Scale]:
    """The label scales of STC-3: A, S, E (ordinal, dialogue level) and nugget types per sender.

    Each dialogue lists its annotators' labels in one order, the same people throughout (``panel``): in the
    training files, the j-th annotator's mean A differs from the dialogues' means by as much as -1.17 levels,
    with a standard error of 0.02 (``benchmarks/stc3_panel.py``).
    """
    scales = {k: Scale(k, QUALITY_LEVELS, "ordinal", "dialogue", None, QUALITY_NAMES[k], panel=True)
              for k in QUALITY_KEYS}
    for sender, types in NUGGET_TYPES.items():
        name = NUGGET_SCALE[sender]
        scales[name] = Scale(name, types, "nominal", "turn", sender, f"nugget type of a {sender} turn", panel=True)
    return scales


def dialogue_id(rec: object, i: int, file: str | None) -> str:
    if not isinstance(rec, dict):
        raise DialevalError(f"item {i} is a JSON {type(rec).__name__}; expected an object", file=file)
    did = rec.get("id")
    if did is None:
        raise DialevalError(f"item {i} has no 'id'", file=file, field="id")
    if did == "":
        raise DialevalError(f"item {i}: id is empty; allowed is a non-empty string", file=file, field="id")
    if not isinstance(did, str | int) or isinstance(did, bool):
        raise DialevalError(f"item {i}: id {describe(did)} must be a string", file=file, field="id")
    return str(did)


def dialogue_senders(rec: dict, did: str, file: str | None) -> list[str]:
    """The senders of a dialogue's turns, checked by :func:`check_turns` (utterances not looked at)."""
    return check_turns(rec, did, file, utterances=None)[0]


def check_turns(rec: dict, did: str, file: str | None, *,
                utterances: str | None = "required") -> tuple[list[str], list[dict]]:
    """The senders of a dialogue's turns and the turns as ``{"sender", "utterances"}`` (other fields of a turn
    left out), checked in one pass: what an STC-3 turn is.

    ``turns`` must be a non-empty list of objects whose ``sender`` is one of :data:`SENDERS` and whose
    ``utterances`` are a list of strings.

    Parameters
    ----------
    rec : dict
        The dialogue.
    did, file : str
        Its id and file (None for in-memory input), for messages.
    utterances : {"required", "optional", None}
        ``"optional"``: a turn without ``utterances`` has none (``[]``); ``None``: utterances are not looked at
        (the list of turns is then empty).

    Raises
    ------
    DialevalError
        Located at the dialogue and the field (``turns``, ``turns[1].sender``...) of the first problem.

    Examples
    --------
    >>> senders, turns = check_turns({"turns": [{"sender": "customer", "utterances": ["Hi."], "x": 1},
    ...                                         {"sender": "helpdesk"}]}, "d1", None, utterances="optional")
    >>> senders
    ['customer', 'helpdesk']
    >>> turns
    [{'sender': 'customer', 'utterances': ['Hi.']}, {'sender': 'helpdesk', 'utterances': []}]
    """
    if utterances not in ("required", "optional", None):
        raise DialevalError(f"utterances={utterances!r} is not allowed; allowed are 'required', 'optional', None")
    turns = rec.get("turns") if isinstance(rec, dict) else None
    if not isinstance(turns, list) or not turns:
        raise DialevalError(f"'turns' must be a non-empty list, received {describe(turns)}",
                            file=file, dialogue=did, field="turns")
    senders: list[str] = []
    checked: list[dict] = []
    missing = None if utterances == "required" else []
    for t, turn in enumerate(turns):
        sender = turn.get("sender") if isinstance(turn, dict) else None
        if sender not in SENDERS:
            raise DialevalError(f"sender {describe(sender)} is not allowed; allowed are {', '.join(SENDERS)}",
                                file=file, dialogue=did, field=f"turns[{t}].sender")
        senders.append(sender)
        if utterances is not None:
            utts = turn.get("utterances", missing)
            if not isinstance(utts, list) or not all(isinstance(u, str) for u in utts):
                raise DialevalError(f"'utterances' must be a list of strings, received {describe(utts)}",
                                    file=file, dialogue=did, field=f"turns[{t}].utterances")
            checked.append({"sender": sender, "utterances": list(utts) if utts is missing else utts})
    return senders, checked


def read_stc3(source: Source) -> Corpus:
    """Read an STC-3/DialEval dataset file (or parsed list) into a :class:`~dialeval.corpus.Corpus`.

    Raises
    ------
    DialevalError
        Located at the file, dialogue id and field of the first problem.
    """
    file = source_name(source)
    records = load_records(source)
    dialogues, seen = [], set()
    empty: list[str] = []   # ids of the dialogues whose annotations are []
    for i, rec in enumerate(records):
        did = dialogue_id(rec, i, file)
        if did in seen:
            raise DialevalError("duplicate dialogue id", file=file, dialogue=did, field="id")
        seen.add(did)
        senders, checked = check_turns(rec, did, file, utterances="optional")  # none given: none said
        turns = [Turn(c["sender"], list(c["utterances"]), meta={k: v for k, v in raw.items()
                                                                if k not in ("sender", "utterances")})
                 for raw, c in zip(rec["turns"], checked, strict=True)]
        dlg = Dialogue(did, turns, meta={k: v for k, v in rec.items() if k not in ("id", "turns", "annotations")})
        anns = annotations_of(rec, did, file)
        if anns == []:
            empty.append(did)
        elif anns is not None:  # absent: an unlabelled dialogue (a test set's)
            check_annotations(anns, senders, did, file)
            if any("quality" in a for a in anns):
                for k in QUALITY_KEYS:
                    dlg.labels[k] = [str(a["quality"][k]) for a in anns]
            if any("nugget" in a for a in anns):
                for t, turn in enumerate(turns):
                    turn.labels[NUGGET_SCALE[turn.sender]] = [a["nugget"][t] for a in anns]
            if all("annotator" in a for a in anns):  # named (an annotation project's export): no fixed panel
                dlg.annotators = [a["annotator"] for a in anns]
                for turn in turns:
                    turn.annotators = list(dlg.annotators)
        dialogues.append(dlg)
    corpus = Corpus(dialogues, stc3_scales(), "stc3", file)
    if empty and corpus.is_annotated():
        _warn_empty_annotations(empty, file)
    return corpus


ANNOTATIONS_ALLOWED = ("a list with one annotation object per annotator ([], or no 'annotations' key, for an "
                       "unlabelled dialogue)")
"""What an STC-3 dialogue's ``annotations`` may be, as error messages say it."""


def annotations_of(rec: dict, did: str, file: str | None) -> list | None:
    """A dialogue's ``annotations``: None when the key is left out (an unlabelled dialogue, as in STC-3's test
    files), else the list (maybe empty; its items are checked by :func:`check_annotations`).

    Raises
    ------
    DialevalError
        ``annotations`` is not a list (``null`` included: a key given as null is not a key left out), located at
        the file, the dialogue and the field.

    Examples
    --------
    >>> annotations_of({"id": "d1"}, "d1", None) is None, annotations_of({"annotations": []}, "d1", None)
    (True, [])
    >>> annotations_of({"annotations": None}, "d1", "g.json")
    Traceback (most recent call last):
    ...
    dialeval.errors.DialevalError: g.json: dialogue d1: annotations: 'annotations' must be a list, received None; \
allowed is a list with one annotation object per annotator ([], or no 'annotations' key, for an unlabelled dialogue)
    """
    if "annotations" not in rec:
        return None
    return require_list(rec["annotations"], "'annotations'", ANNOTATIONS_ALLOWED, file=file, dialogue=did,
                        field="annotations")


def _warn_empty_annotations(ids: list[str], file: str | None) -> None:
    """One warning naming how many dialogues have ``"annotations": []`` in a file whose other dialogues are
    annotated, and the first few: read as unlabelled, they are in no gold distribution (said, not dropped in
    silence)."""
    shown = first_few(ids)
    where = DialevalError(f"{len(ids)} dialogue(s) have an empty 'annotations' list ([]) while other dialogues are "
                          f"annotated: read as unlabelled, they are left out of the gold: {shown}", file=file)
    warnings.warn(str(where), DialevalWarning, stacklevel=3)


def check_annotations(anns: object, senders: list[str], did: str, file: str | None) -> None:
    """Slow, thorough check of one dialogue's annotations; raises at the first problem."""
    require_list(anns, "'annotations'", ANNOTATIONS_ALLOWED, file=file, dialogue=did, field="annotations")
    has_q = has_n = None
    for a, ann in enumerate(anns):
        where = f"annotations[{a}]"
        if not isinstance(ann, dict):
            raise DialevalError("an annotation must be an object", file=file, dialogue=did, field=where)
        hq, hn = "quality" in ann, "nugget" in ann
        if "annotator" in ann and (not isinstance(ann["annotator"], str) or not ann["annotator"].strip()):
            raise DialevalError(f"annotator {describe(ann['annotator'])} is not allowed; allowed is the annotator's "
                                "id, a non-empty string", file=file, dialogue=did, field=f"{where}.annotator")
        if has_q is None:
            has_q, has_n = hq, hn
        if (hq, hn) != (has_q, has_n):
            raise DialevalError("annotators disagree on which of quality/nugget they gave; every annotation "
                                "must have the same fields", file=file, dialogue=did, field=where)
        if hq:
            q = ann["quality"]
            if not isinstance(q, dict) or set(q) != set(QUALITY_KEYS):
                keys = sorted(q) if isinstance(q, dict) else describe(q)
                raise DialevalError(f"quality keys {keys} are not allowed; expected exactly A, S, E",
                                    file=file, dialogue=did, field=f"{where}.quality")
            for k in QUALITY_KEYS:
                v = q[k]
                if isinstance(v, bool) or not isinstance(v, int) or str(v) not in QUALITY_LEVELS:
                    raise DialevalError(f"rating {describe(v)} is not allowed; allowed are 2, 1, 0, -1, -2",
                                        file=file, dialogue=did, field=f"{where}.quality.{k}")
        if hn:
            nug = ann["nugget"]
            if not isinstance(nug, list) or len(nug) != len(senders):
                n = len(nug) if isinstance(nug, list) else describe(nug)
                raise DialevalError(f"inconsistent annotation lengths: {n} nugget labels for "
                                    f"{len(senders)} turns", file=file, dialogue=did, field=f"{where}.nugget")
            for t, (lab, sender) in enumerate(zip(nug, senders, strict=True)):
                if lab not in NUGGET_TYPES[sender]:
                    other = "helpdesk" if sender == "customer" else "customer"
                    hint = f" (a {other} type)" if lab in NUGGET_TYPES[other] else ""
                    raise DialevalError(f"nugget type {describe(lab)}{hint} is not allowed for a {sender} "
                                        f"turn; allowed are " + ", ".join(NUGGET_TYPES[sender]),
                                        file=file, dialogue=did, field=f"{where}.nugget[{t}]")


def to_records(corpus: Corpus) -> list[dict]:
    """The STC-3 JSON records of a corpus (annotations included where the corpus has STC-3 labels)."""
    out = []
    for d in corpus.dialogues:
        rec: dict = {"id": d.id, "turns": [{"sender": t.sender, "utterances": list(t.utterances)}
                                          for t in d.turns]}
        n = max([len(v) for v in d.labels.values()] +
                [len(v) for t in d.turns for v in t.labels.values()] + [0])
        if n:
            anns = []
            who = _annotators(d, n)
            for a in range(n):
                ann: dict = {} if who is None else {"annotator": who[a]}
                if all(k in d.labels for k in QUALITY_KEYS):
                    ann["quality"] = {k: int(d.labels[k][a]) for k in QUALITY_KEYS}
                if d.turns and all(NUGGET_SCALE.get(t.sender) in t.labels for t in d.turns):
                    ann["nugget"] = [t.labels[NUGGET_SCALE[t.sender]][a] for t in d.turns]
                anns.append(ann)
            rec["annotations"] = anns
        out.append(rec)
    return out


def _annotators(d: Dialogue, n: int) -> list[str] | None:
    """The ids of the ``n`` annotators of ``d``'s labels, when the corpus names them (an annotation project's
    export): written as each annotation's ``annotator``, so that a reader does not take the j-th labels of every
    dialogue for one person's (:attr:`Scale.panel <dialeval.corpus.Scale.panel>`)."""
    named = [d.annotators, *(t.annotators for t in d.turns)]
    return next((list(a) for a in named if a is not None and len(a) == n), None)


def write_stc3(corpus: Corpus, path: str) -> None:
    """Write a corpus as an STC-3/DialEval JSON dataset (atomically)."""
    dump_json(to_records(corpus), path)


def __getattr__(name: str):
    # The gold arrays live in dialeval.io.stc3_gold (which imports this module); keep the old names working.
    if name in ("build_gold", "Stc3Gold"):
        from dialeval.io import stc3_gold
        return getattr(stc3_gold, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
