"""What the corpus writers share: the report of what a writer did, the sender map every writer applies first,
the original ids a WOCHAT conversion kept in ``<source_id>`` (restored by every other writer), the DBDC fields
carried through WOCHAT's kept tags, and the all-or-nothing write of a folder of files."""

from __future__ import annotations

import os
import re
import secrets
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from dialeval.corpus import Corpus, Dialogue, rename_senders
from dialeval.errors import DialevalError, quote
from dialeval.io.wochat import ID_RULE


@dataclass
class WriteReport:
    """What a writer did that the reader of its output should know (printed by ``dialeval corpus convert``)."""

    dialogues: int = 0
    turns: int = 0
    labels: int = 0
    mapping: dict[str, str] = field(default_factory=dict)
    mapped_scale: str | None = None
    senders: dict[str, str] = field(default_factory=dict)
    """The sender map applied (``--senders``)."""
    renamed_ids: dict[str, str] = field(default_factory=dict)
    restored_ids: dict[str, str] = field(default_factory=dict)
    """WOCHAT id -> the original id kept in its ``<source_id>``, written instead (:func:`restore_source_ids`)."""
    replaced_names: int = 0
    dropped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"wrote {self.dialogues} dialogue(s), {self.turns} turn(s), {self.labels} label(s) to "
               + (self.files[0] if len(self.files) == 1 else f"{len(self.files)} files")]
        if self.senders:
            out.append("senders mapped: " + ", ".join(f"{k} -> {v}" for k, v in self.senders.items()))
        if self.mapping:
            out.append(f"labels of scale {self.mapped_scale!r} mapped in order: "
                       + ", ".join(f"{k} -> {v}" for k, v in self.mapping.items()))
        if self.renamed_ids:
            out.append(f"{len(self.renamed_ids)} dialogue id(s) renamed to fit the WOCHAT pattern ({ID_RULE}); "
                       f"the original id is kept in <source_id>: {_examples(self.renamed_ids)}")
        if self.restored_ids:
            out.append(f"{len(self.restored_ids)} dialogue id(s) written as the original id kept in the WOCHAT "
                       f"<source_id>: {_examples(self.restored_ids)}")
        if self.replaced_names:
            out.append(f"{self.replaced_names} occurrence(s) of declared speaker names replaced by their tag "
                       "(SYSTEM_NAME, USER_NAME...) as the guidelines require")
        if self.dropped:
            out.append("dropped (not representable): " + "; ".join(self.dropped))
        return out + self.notes


    def note_joined(self, turns: int) -> None:
        """Say that ``turns`` turn(s) of several utterances were written as one (formats of one utterance a turn)."""
        if turns:
            self.notes.append(f"{turns} turn(s) of several utterances written as one utterance, joined by line "
                              "breaks")


def _examples(ids: dict[str, str]) -> str:
    """The first three ``old -> new`` of a renaming, quoted, and ``...`` when there are more."""
    return ", ".join(f"{quote(a)} -> {quote(b)}" for a, b in list(ids.items())[:3]) + (", ..." if len(ids) > 3 else "")


def refuse_or_drop_labels(scales: list[str], drop_labels: bool, report: WriteReport, target: str,
                          file: str | None) -> None:
    """Labels of ``scales`` that the ``target`` format cannot hold: an error unless ``drop_labels`` (the
    ``--drop-labels`` of ``corpus convert``), then listed in ``report.dropped``."""
    if not scales:
        return
    if not drop_labels:
        raise DialevalError(f"cannot write as {target}: the corpus has labels on " + ", ".join(scales)
                            + "; to write it without them, --drop-labels (in Python drop_labels=True)", file=file)
    report.dropped.append("labels of scale(s) " + ", ".join(scales))


def map_senders(corpus: Corpus, sender_map: dict[str, str] | None, allowed: Callable[[str], bool], speakers: str,
                example: str) -> tuple[Corpus, WriteReport]:
    """A writer's first step: ``corpus`` with its senders renamed by ``sender_map`` (:func:`rename_senders`) and a
    report that records the map; a sender the format cannot hold (``allowed`` false) is refused in one line
    that names the format's ``speakers`` and an ``example`` map."""
    report = WriteReport(senders=dict(sender_map or {}))
    corpus = rename_senders(corpus, report.senders)
    bad = sorted({t.sender for d in corpus for t in d.turns if not allowed(t.sender)})
    if bad:
        raise DialevalError(f"{speakers}; the corpus has {', '.join(bad)}: give a sender map (--senders "
                            f"{suggested_map(corpus, example)})", file=corpus.source)
    return corpus, report


def suggested_map(corpus: Corpus, example: str) -> str:
    """A sender map for a refused corpus: the format's ``example`` map (``user=customer,system=helpdesk``) when it
    names the corpus's own senders or cannot be fitted to them; else the corpus's senders, in the order they first
    speak, mapped to the example's targets in order (``user1=customer,user2=helpdesk``).

    Examples
    --------
    >>> from dialeval.corpus import Corpus, Dialogue, Turn
    >>> c = Corpus([Dialogue("d", [Turn("user1", ["hi"]), Turn("user2", ["hello"])])], {}, "wochat")
    >>> suggested_map(c, "user=customer,system=helpdesk")
    'user1=customer,user2=helpdesk'
    """
    targets = [pair.split("=", 1)[1] for pair in example.split(",")]
    sources = {pair.split("=", 1)[0] for pair in example.split(",")}
    senders = list(dict.fromkeys(t.sender for d in corpus for t in d.turns))
    if set(senders) <= sources or len(senders) != len(targets) or any(re.search(r"[\s,=]", s) for s in senders):
        return example
    return ",".join(f"{s}={t}" for s, t in zip(senders, targets, strict=True))


DBDC_DIALOGUE_FIELDS = ("speaker-id", "group-id")
DBDC_TURN_FIELDS = ("time", "annotation-id")
DBDC_ANNOTATION_FIELDS = ("ungrammatical-sentence", "comment")
"""The metadata fields of a DBDC log, its turns and its annotations that go through WOCHAT XML as kept tags of
the same name (``<speaker-id>`` in the dialogue, ``<time>`` in a turn, ``<comment>`` in an annotator) and back."""
DBDC_DERIVED = ("set", "system", "file", "turn-index", "annotation_extra")
"""What :func:`dialeval.io.dbdc.read_dbdc` adds to the metadata itself (not fields of the file)."""


def carried_value(value: object) -> str | None:
    """A metadata value as the text of a WOCHAT tag: a string or a number (None for anything else)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def carries(tag: dict, fields: tuple[str, ...]) -> bool:
    """Whether a kept WOCHAT tag is one of the DBDC ``fields`` the WOCHAT writer carries (a plain text tag)."""
    return tag.get("tag") in fields and "xml" not in tag and not tag.get("attrib")


def dbdc_fields(meta: dict, tags: list[dict] | None, fields: tuple[str, ...]) -> dict:
    """The DBDC ``fields`` of a dialogue, turn or annotation: from its metadata (a corpus read as DBDC) or from
    the WOCHAT kept tags of those names (a DBDC corpus written as WOCHAT and read back), in that order."""
    out = {k: meta[k] for k in fields if k in meta}
    for t in tags or []:
        if carries(t, fields) and t["tag"] not in out:
            out[t["tag"]] = t.get("text") or ""
    return out


def unheld_metadata(corpus: Corpus, *, dbdc_fields_held: bool) -> list[str]:
    """The metadata of a DBDC or WOCHAT ``corpus`` a target format has no place for, as lines of
    ``WriteReport.dropped``, each with how many times it occurs: a DBDC log's fields (its own, a turn's, an
    annotation's) other than those dialeval derives (:data:`DBDC_DERIVED`); WOCHAT's declared speaker names,
    dialogue timestamps and kept tags. ``dbdc_fields_held``: the target keeps DBDC's known fields
    (:data:`DBDC_DIALOGUE_FIELDS`, :data:`DBDC_TURN_FIELDS`, :data:`DBDC_ANNOTATION_FIELDS`: DBDC logs), so only
    the rest counts. Other formats' corpora give ``[]``.

    Examples
    --------
    >>> from dialeval.corpus import Corpus, Dialogue, Turn
    >>> d = Dialogue("d1", [Turn("user", ["hi"], meta={"time": "12:00", "turn-index": 0})],
    ...              meta={"speaker-id": "S1", "topic": "music"})
    >>> unheld_metadata(Corpus([d], {}, "dbdc", "x"), dbdc_fields_held=True)
    ["DBDC dialogue field 'topic' (1 time(s))"]
    >>> len(unheld_metadata(Corpus([d], {}, "dbdc", "x"), dbdc_fields_held=False))
    3
    """
    lost: Counter = Counter()

    def dbdc(meta: dict, fields: tuple[str, ...], where: str) -> None:
        for k, v in meta.items():
            if k in DBDC_DERIVED or v in ("", None) or (dbdc_fields_held and k in fields):
                continue   # a known field's value that is no string or number: the DBDC writer refuses it
            lost[f"DBDC {where} field {k!r}"] += 1

    def wochat(tags: list[dict] | None, fields: tuple[str, ...], where: str) -> None:
        for t in tags or []:
            if not (dbdc_fields_held and carries(t, fields)):
                lost[f"WOCHAT <{t.get('tag')}> of {where}"] += 1

    for d in corpus if corpus.format in ("dbdc", "wochat") else ():
        if corpus.format == "dbdc":
            dbdc(d.meta, DBDC_DIALOGUE_FIELDS, "dialogue")
            for t in d.turns:
                dbdc(t.meta, DBDC_TURN_FIELDS, "turn")
                for extra in t.meta.get("annotation_extra") or []:
                    dbdc(extra if isinstance(extra, dict) else {}, DBDC_ANNOTATION_FIELDS, "annotation")
            continue
        if any((d.meta.get("names") or {}).values()):
            lost["WOCHAT declared speaker names (<system_name>, <user_name>...)"] += 1
        if d.meta.get("timestamp"):
            lost["WOCHAT <timestamp> of a dialogue"] += 1
        wochat(d.meta.get("tags"), DBDC_DIALOGUE_FIELDS, "a dialogue")
        for t in d.turns:
            wochat(t.meta.get("tags"), DBDC_TURN_FIELDS, "a turn")
            for tags in t.meta.get("annotator_tags") or []:
                wochat(tags, DBDC_ANNOTATION_FIELDS, "an annotator")
    return [f"{what} ({n} time(s))" for what, n in sorted(lost.items())]


def off_sender_labels(corpus: Corpus, scale: str, sender: str) -> int:
    """How many labels of turn scale ``scale`` are on turns of senders other than ``sender`` (labels one
    format's gold counts and another's leaves out: DBDC's breakdown counts system turns only, WOCHAT's validity
    every turn).

    >>> from dialeval.corpus import Corpus, Dialogue, Turn
    >>> turns = [Turn("user", ["hi"], {"v": ["VALID", None]}), Turn("system", ["yo"], {"v": ["VALID"]})]
    >>> c = Corpus([Dialogue("d", turns)])
    >>> off_sender_labels(c, "v", "system")
    1
    """
    return sum(v is not None for d in corpus for t in d.turns if t.sender != sender for v in t.labels.get(scale, ()))


def restore_source_ids(corpus: Corpus, report: WriteReport) -> Corpus:
    """Every writer but WOCHAT's: a WOCHAT dialogue that keeps the id it had before a conversion in
    ``<source_id>`` (``dialogue.meta["source_id"]``, see :func:`dialeval.io.wochat_writer.write_wochat`) gets that
    id back, so that DBDC -> WOCHAT -> DBDC gives the original ids; recorded in ``report.restored_ids``. Only a
    corpus read as WOCHAT is looked at (another format's ``source_id`` field is its own data).

    Raises
    ------
    DialevalError
        Two dialogues that would be written under one id, naming both.
    """
    if corpus.format != "wochat":
        return corpus
    dialogues: list[Dialogue] = []
    wochat_id: dict[str, str] = {}  # id written -> the WOCHAT id of the dialogue that has it
    for d in corpus.dialogues:
        src = d.meta.get("source_id")
        new = src if isinstance(src, str) and src else d.id
        if new in wochat_id:
            raise DialevalError(f"dialogue id '{quote(new)}' would be written twice: the WOCHAT dialogues "
                                f"'{quote(wochat_id[new])}' and '{quote(d.id)}' both have it once the original ids "
                                "kept in <source_id> are restored; edit one <source_id> (or remove it to keep the "
                                "WOCHAT id)", file=corpus.source, dialogue=d.id, field="source_id")
        wochat_id[new] = d.id
        if new != d.id:
            report.restored_ids[d.id] = new
            d = replace(d, id=new)
        dialogues.append(d)
    return replace(corpus, dialogues=dialogues)


def write_folder(folder: Path, files: list[tuple[str, bytes]], *, one_file: str | None = None) -> list[str]:
    """Write ``files`` (name, bytes) into the new or empty ``folder`` all at once: into a temporary folder beside
    it, then renamed; on any failure nothing is left. Returns the written paths.

    The folder gets the permissions the user's umask gives a new folder (as ``mkdir`` does), not the 0700 of a
    private temporary folder. ``one_file``: the suffix that writes a single file instead (WOCHAT's ``.xml``),
    named in the error for a non-empty folder.
    """
    if folder.is_symlink() and folder.is_dir():  # a link to an empty folder: the files go there, the link stays
        folder = Path(os.path.realpath(folder))
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        instead = f" or a path ending in {one_file}" if one_file else ""
        raise DialevalError(f"the output folder exists and is not empty; give a new folder{instead}", file=str(folder))
    folder.parent.mkdir(parents=True, exist_ok=True)
    while True:
        tmp = folder.parent / f".{folder.name}.{secrets.token_hex(6)}"
        try:
            tmp.mkdir()  # the umask applies, as to the folder the user asked for
            break
        except FileExistsError:  # pragma: no cover - a 48-bit name taken
            continue
    try:
        for name, data in files:
            (tmp / name).write_bytes(data)
        if folder.exists():
            folder.rmdir()
        os.replace(tmp, folder)
    except OSError as e:  # a full disk, no permission: named by the folder asked for, not by our temporary one
        shutil.rmtree(tmp, ignore_errors=True)
        raise DialevalError(f"cannot write: {e.strerror or e}", file=str(folder)) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [str(folder / name) for name, _ in files]
