"""Writing WOCHAT XML (FORMATS.md §2): ``<VALID/>`` always, declared names replaced, ids fitted to the pattern.

A corpus of another format is written with its known label map (DBDC's O, T, X -> VALID, ACCEPTABLE,
INVALID, in that order) or one given; labels WOCHAT cannot hold are refused unless dropped on purpose; every
mapping, rename and drop is in the returned :class:`WriteReport` and in a comment at the top of each file.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from defusedxml.ElementTree import fromstring as safe_fromstring

from dialeval.corpus import Corpus, Dialogue
from dialeval.errors import DialevalError, describe, quote
from dialeval.io.atomic import write_bytes
from dialeval.io.wochat import (
    BINARY_LEVELS,
    DIALOGUE_KEYS,
    EDGE_LAYOUT,
    ID_PATTERN,
    ID_RULE,
    OPTIONAL_TAGS,
    ROLES,
    VALIDITY,
    VALIDITY_TAGS,
    XML_SPACE,
    name_pattern,
    role_of,
)
from dialeval.io.writers import (
    DBDC_ANNOTATION_FIELDS,
    DBDC_DIALOGUE_FIELDS,
    DBDC_TURN_FIELDS,
    WriteReport,
    carried_value,
    map_senders,
    off_sender_labels,
    unheld_metadata,
    write_folder,
)

ID_POLICIES = ("renumber", "strict")
_SPEAKER = re.compile(rf"^({ROLES})$")
_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]")  # what XML 1.0 cannot carry (lone surrogates too)


def known_maps() -> dict[str, dict[str, str]]:
    """Label maps applied without being asked: WOCHAT's own scale, and DBDC's O, T, X in that order."""
    from dialeval.io import dbdc
    return {VALIDITY: {t: t for t in VALIDITY_TAGS},
            dbdc.BREAKDOWN: dict(zip(dbdc.BREAKDOWN_LEVELS, VALIDITY_TAGS, strict=True))}


def _validity_map(corpus: Corpus, scale: str | None, label_map: dict[str, str] | None) -> tuple[str, dict] | None:
    """The turn scale written as VALID/ACCEPTABLE/INVALID and its label map, or None if there is none."""
    known = known_maps()
    if scale is None and label_map is None:
        cands = [n for n in known if n in corpus.scales and _has_labels(corpus, n)]
        if len(cands) > 1:
            raise DialevalError("several turn scales could be written as VALID/ACCEPTABLE/INVALID: "
                                + ", ".join(cands) + "; choose one with --scale (in Python scale=)")
        return (cands[0], known[cands[0]]) if cands else None
    if scale is None:
        cands = [s.name for s in corpus.scales.values() if s.level == "turn" and set(s.levels) == set(label_map)]
        if len(cands) != 1:
            raise DialevalError("give --scale with --map (in Python scale= with label_map=): "
                                + (f"{len(cands)} turn scales have the levels "
                                f"{', '.join(label_map)}" if cands else "no turn scale has the levels "
                                + ", ".join(label_map)))
        scale = cands[0]
    if scale not in corpus.scales or corpus.scales[scale].level != "turn":
        raise DialevalError(f"scale {scale!r} is not a turn scale of the corpus; its turn scales are "
                            + ", ".join(s.name for s in corpus.scales_at("turn")))
    s = corpus.scales[scale]
    mapping = label_map if label_map is not None else known.get(scale)
    if mapping is None:
        raise DialevalError(f"no known mapping from scale {scale!r} ({', '.join(s.levels)}) to VALID, ACCEPTABLE, "
                            "INVALID; give one with label_map= (--map), e.g. "
                            + ",".join(f"{lv}={t}" for lv, t in zip(s.levels, VALIDITY_TAGS * 2, strict=False)))
    missing = [lv for lv in s.levels if lv not in mapping]
    bad = {k: v for k, v in mapping.items() if v not in VALIDITY_TAGS or k not in s.levels}
    if missing or bad:
        raise DialevalError(f"label map {describe(mapping)} must send every level of {scale!r} ("
                            + ", ".join(s.levels) + ") to one of " + ", ".join(VALIDITY_TAGS))
    return scale, {lv: mapping[lv] for lv in s.levels}


def _has_labels(corpus: Corpus, name: str) -> bool:
    s = corpus.scales[name]
    if s.level == "dialogue":
        return any(any(v is not None for v in d.labels.get(name, ())) for d in corpus)
    return any(any(v is not None for v in t.labels.get(name, ())) for d in corpus for t in d.turns)


def _plan_scales(corpus: Corpus, scale: str | None, label_map: dict[str, str] | None, drop_labels: bool,
                 report: WriteReport) -> tuple[tuple[str, dict] | None, list[str]]:
    src = _validity_map(corpus, scale, label_map)
    binary = [t for t in OPTIONAL_TAGS if corpus.scales.get(t.lower()) is not None
              and corpus.scales[t.lower()].levels == BINARY_LEVELS]
    kept = {src[0]} if src else set()
    kept |= {t.lower() for t in binary}
    other = [n for n in corpus.scales if n not in kept and _has_labels(corpus, n)]
    if other:
        if not drop_labels:
            turn_scales = [n for n in other if corpus.scales[n].level == "turn" and n.upper() not in OPTIONAL_TAGS]
            keep = ""
            if src is None and turn_scales:
                s = corpus.scales[turn_scales[0]]
                keep = ("; --scale and --map (in Python scale= and label_map=) keep the labels of one turn scale as "
                        f"VALID/ACCEPTABLE/INVALID, e.g. --scale {_shell(s.name)} --map 'LEVEL=VALID,LEVEL=ACCEPTABLE,"
                        "LEVEL=INVALID' with each of its levels " + ", ".join(s.levels))
            raise DialevalError("cannot write as WOCHAT XML, which holds per-turn VALID/ACCEPTABLE/INVALID and "
                                "the optional yes/no tags only: the corpus has labels on " + ", ".join(other)
                                + keep + "; --drop-labels (in Python drop_labels=True) writes it without the labels "
                                "WOCHAT cannot hold (listed as dropped)", file=corpus.source)
        report.dropped.append("labels of scale(s) " + ", ".join(other))
    if src is not None:
        if any(k != v for k, v in src[1].items()):  # VALID -> VALID, ... is no mapping to report
            report.mapped_scale, report.mapping = src
        only = corpus.scales[src[0]].sender
        off = off_sender_labels(corpus, src[0], only) if only else 0
        if off:
            report.notes.append(f"{off} {src[0]} label(s) of turns other than {only}'s written: the {src[0]} scale "
                                "counts only those, WOCHAT's validity every turn, so its gold counts them")
    return src, binary


def _shell(word: str) -> str:
    """A scale name as it would be typed on a command line."""
    return word if re.fullmatch(r"[\w.,:=+-]+", word) else "'" + word.replace("'", "'\\''") + "'"


def _wochat_id(did: str, used: set[str], ids: str, file: str | None) -> str:
    if ID_PATTERN.match(did):
        return did
    if ids == "strict":
        raise DialevalError(f"dialogue id {did!r} does not follow the WOCHAT pattern: {ID_RULE}; "
                            "ids='renumber' (--ids renumber) renames it and keeps the original in <source_id>",
                            file=file, dialogue=did)
    m = re.match(r"^(.*?)(\d+)$", did)
    stem = re.sub(r"[^\w.-]", "_", m.group(1) if m else did) or "dialogue"
    if not stem[0].isalpha():
        stem = "d" + stem
    number = int(m.group(2)) if m else 0
    if m and number < 100000 and f"{stem}{number:05d}" not in used:
        return f"{stem}{number:05d}"
    for n in range(100000):
        cand = f"{stem}{n:05d}"
        if cand not in used:
            return cand
    raise DialevalError(f"no free 5-digit number left for the id stem {stem!r}", file=file, dialogue=did)


def _names_of(d: Dialogue, roles: list[str]) -> dict[str, str]:
    """Declared names: those a WOCHAT source declared; other roles get an empty name tag.

    No name is invented (say, "TickTock" from a DBDC folder name): the guidelines would then require
    rewriting every occurrence in the utterances, and the conversion would lose the users' words.
    """
    names = dict(d.meta.get("names") or {})
    for r in roles:
        names.setdefault(r, "")
    return names


def _role_order(role: str) -> tuple:
    return (0, 0) if role == "SYSTEM" else (1, int(role[4:] or 0))


def _text_element(parent: ET.Element, tag: str, text: str | None, attrib: dict | None = None) -> ET.Element:
    """A child ``<tag>`` holding ``text``, marked ``xml:space="preserve"`` when blanks at its ends are part of
    it (the reader strips them otherwise, as a file's layout: :func:`dialeval.io.wochat.tag_text`)."""
    el = ET.SubElement(parent, tag, attrib or {})
    el.text = text or None
    if text and text != text.strip():
        el.set(XML_SPACE, "preserve")
    return el


def _add_tags(parent: ET.Element, tags: list[dict]) -> None:
    for t in tags:
        if "xml" in t:
            parent.append(safe_fromstring(t["xml"]))
        else:
            _text_element(parent, t["tag"], t.get("text"), t.get("attrib"))


def _dbdc_tags(meta: dict, fields: tuple[str, ...], kept: list[dict], lost: Counter, where: str) -> list[dict]:
    """A DBDC corpus's metadata ``fields`` (speaker-id, a turn's time, an annotation's comment...) as kept tags of
    the same name, which the DBDC writer reads back (:func:`dialeval.io.writers.dbdc_fields`); an empty one as
    an empty tag (the log had the field), a value that is no string or number counted in ``lost``."""
    have = {t.get("tag") for t in kept}
    out = []
    for k in fields:
        if k in have or k not in meta:
            continue
        text = carried_value(meta[k])
        if text is None:
            lost[f"DBDC {where} field {k!r} (not a string or a number)"] += 1
        else:
            out.append({"tag": k, "text": text})
    return out


def _dialogue_element(d: Dialogue, wid: str, src: tuple[str, dict] | None, binary: list[str], report: WriteReport,
                      file: str | None, fmt: str, lost: Counter | None = None) -> ET.Element:
    """``d`` as a ``<dialogue>`` element; ``fmt``: the corpus's format (a WOCHAT corpus's metadata is written back
    as it was read; a DBDC log's known fields as kept tags, a value of theirs that cannot be one counted in
    ``lost``)."""
    own, dbdc = fmt == "wochat", fmt == "dbdc"
    lost = Counter() if lost is None else lost
    roles = {role_of(t.sender) for t in d.turns} | set(d.meta.get("names") or {})
    for r in sorted(roles):  # each checked before _role_order reads it
        if not _SPEAKER.match(r):
            raise DialevalError(f"sender {r.lower()!r} has no WOCHAT speaker role; allowed are system, user, "
                                "user1, user2, ...", file=file, dialogue=d.id)
    roles = sorted(roles, key=_role_order)
    names = _names_of(d, roles)
    el = ET.Element("dialogue", {"id": wid})
    for r in roles:
        ET.SubElement(el, f"{r.lower()}_name").text = names[r] or None
    for key in DIALOGUE_KEYS if own else ():   # another format's field of that name is not WOCHAT's tag
        if d.meta.get(key):
            _text_element(el, key, str(d.meta[key]))
    if wid != d.id:
        _text_element(el, "source_id", d.id)
    kept = d.meta.get("tags", [])
    if dbdc:
        kept = _dbdc_tags(d.meta, DBDC_DIALOGUE_FIELDS, kept, lost, "dialogue") + kept
    _add_tags(el, kept)
    patterns = {r: name_pattern(n) for r, n in names.items() if n}
    src_name, mapping = src if src else (None, {})
    for pos, t in enumerate(d.turns):
        te = ET.SubElement(el, "turn", {"id": str(t.meta.get("id", pos + 1))})
        ET.SubElement(te, "speaker").text = role_of(t.sender)
        text = "\n".join(t.utterances)
        if len(t.utterances) > 1:
            lost["_joined"] += 1
        for r, pat in patterns.items():
            text, n = pat.subn(f"{r}_NAME", text)
            report.replaced_names += n
        if _CTRL.search(text):
            raise DialevalError("the utterance holds a control character or a lone surrogate, which XML 1.0 cannot "
                                "carry", file=file,
                                dialogue=d.id, field=f"turns[{pos}]")
        ue = ET.SubElement(te, "utterance")
        ue.text = text
        if EDGE_LAYOUT.search(text):   # line breaks at its ends are data here, not layout: the reader keeps them
            ue.set(XML_SPACE, "preserve")
        kept = t.meta.get("tags", [])
        if dbdc:
            kept = _dbdc_tags(t.meta, DBDC_TURN_FIELDS, kept, lost, "turn") + kept
        _add_tags(te, kept)
        report.turns += 1
        if src_name is None or src_name not in t.labels:
            continue
        labs = t.labels[src_name]
        ids = t.annotators or [str(a + 1) for a in range(len(labs))]
        ann_tags = t.meta.get("annotator_tags") or [[] for _ in labs]
        extra = t.meta.get("annotation_extra") if dbdc else None
        for a, (aid, lab) in enumerate(zip(ids, labs, strict=True)):
            if lab is None:
                continue
            if not str(aid).strip():
                raise DialevalError(f"annotator id {str(aid)!r} is not allowed: a WOCHAT <annotator> needs a non-blank "
                                    "id (its readers refuse an empty one)", file=file, dialogue=d.id,
                                    field=f"turns[{pos}].annotators[{a}]")
            ae = ET.SubElement(te, "annotator", {"id": str(aid)})
            ET.SubElement(ae, mapping[lab])
            for tag in binary:
                if (t.labels.get(tag.lower()) or [None] * len(labs))[a] == "yes":
                    ET.SubElement(ae, tag)
            kept = ann_tags[a] if a < len(ann_tags) else []
            if extra and a < len(extra) and isinstance(extra[a], dict):
                kept = _dbdc_tags(extra[a], DBDC_ANNOTATION_FIELDS, kept, lost, "annotation") + kept
            _add_tags(ae, kept)
            report.labels += 1
    return el


def _serialise(el: ET.Element, comment: str, file: str | None, dialogue: str | None = None) -> bytes:
    ET.indent(el, space="  ")
    body = ET.tostring(el, encoding="unicode", short_empty_elements=True).replace(" />", "/>")
    # A parser reads a raw CR (alone or before LF) as LF (XML 1.0 §2.11): an utterance's or a name's "\r\n"
    # would come back as "\n". ElementTree writes CR in attribute values as &#13; but leaves it raw in text; the
    # serialised tree has a raw CR nowhere else (tag names cannot hold one, the indentation is LF and spaces),
    # so every CR left is one of a text's and becomes the reference the parser reads back as CR.
    body = body.replace("\r", "&#13;")
    # a source path's control characters and undecodable bytes escaped; "--" may not appear in an XML comment
    comment = re.sub("-(?=-)", "- ", quote(comment, limit=len(comment)))
    found = _CTRL.search(body)
    if found:  # in an id, a name, an annotator id or a kept tag (utterances are checked where they are written)
        raise DialevalError(f"a text of the dialogue (an id, a speaker's name, an annotator id or a kept tag) holds "
                            f"{quote(found.group())} (a control character, or a lone surrogate: a JSON \\ud800 escape "
                            "reads as one), which XML 1.0 cannot carry", file=file, dialogue=dialogue)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<!-- {comment} -->\n{body}\n'.encode()


def write_wochat(corpus: Corpus, path: str | os.PathLike, *, scale: str | None = None,
                 label_map: dict[str, str] | None = None, ids: str = "renumber",
                 drop_labels: bool = False, sender_map: dict[str, str] | None = None) -> WriteReport:
    """Write a corpus as WOCHAT XML: one file (``*.xml``) or a new folder with one file per dialogue.

    Parameters
    ----------
    corpus : Corpus
    path : path
        Ending in ``.xml``: one file (root ``<dialogue>`` for one dialogue, ``<dialogues>`` for several).
        Otherwise a folder (created; it must not exist or be empty) with ``<id>.xml`` per dialogue.
    scale : str, optional
        The turn scale written as VALID/ACCEPTABLE/INVALID. Without it (and without ``label_map``) the
        known one is used: ``validity`` as is, or DBDC's ``breakdown`` with O, T, X -> VALID, ACCEPTABLE,
        INVALID in that order (:func:`known_maps`).
    label_map : dict, optional
        Level -> VALID/ACCEPTABLE/INVALID for any other turn scale, e.g. ConTurE's
        ``{"2": "VALID", "1": "ACCEPTABLE", "0": "INVALID"}``; never guessed from the order of levels.
    ids : {'renumber', 'strict'}, default 'renumber'
        A dialogue id that does not fit the WOCHAT pattern is renamed (its trailing number padded to 5
        digits, ``tt_001`` -> ``tt_00001``; the original kept in ``<source_id>``), or refused.
    drop_labels : bool, default False
        Labels WOCHAT cannot hold (dialogue-level ratings, other scales) are an error unless True.
    sender_map : dict, optional
        Renames senders first, e.g. ``{"customer": "user", "helpdesk": "system"}``; every sender must then be
        ``system``, ``user`` or ``user<n>``.

    Returns
    -------
    WriteReport
        Counts, the label mapping, renamed ids, replaced names and what was dropped (``.lines()``).

    Raises
    ------
    DialevalError
        Unrepresentable labels without ``drop_labels``, a sender with no WOCHAT role, an id off the pattern
        with ``ids='strict'``, a non-empty output folder.
    """
    if not isinstance(ids, str) or ids not in ID_POLICIES:
        raise DialevalError(f"ids policy {describe(ids)} is not allowed; allowed are " + ", ".join(ID_POLICIES))
    corpus, report = map_senders(corpus, sender_map, lambda s: bool(_SPEAKER.match(role_of(s))),
                                 "WOCHAT speakers are system, user, user1, user2, ...", "customer=user,helpdesk=system")
    src, binary = _plan_scales(corpus, scale, label_map, drop_labels, report)
    from dialeval import __version__
    what = f"written by dialeval {__version__} from {corpus.format} corpus {corpus.source or ''}".rstrip()
    if report.mapping:
        what += "; labels: " + ", ".join(f"{report.mapped_scale} {k} -> {v}" for k, v in report.mapping.items())
    what = what.replace("--", "- -")
    fitting = Counter(d.id for d in corpus.dialogues if ID_PATTERN.match(d.id))
    twice = next((i for i, n in fitting.items() if n > 1), None)
    if twice is not None:
        raise DialevalError("dialogue id met twice", file=corpus.source, dialogue=twice)
    used: set[str] = set(fitting)   # ids that fit are kept: a renamed one never takes one of theirs
    elems = []
    lost: Counter = Counter()
    for d in corpus.dialogues:
        wid = _wochat_id(d.id, used, ids, corpus.source)
        if wid != d.id and wid in used:
            raise DialevalError("dialogue id met twice", file=corpus.source, dialogue=d.id)
        used.add(wid)
        if wid != d.id:
            report.renamed_ids[d.id] = wid
        elems.append((wid, _dialogue_element(d, wid, src, binary, report, corpus.source, corpus.format, lost)))
        report.dialogues += 1
    report.note_joined(lost.pop("_joined", 0))
    report.dropped.extend(f"{what_} ({n} time(s))" for what_, n in lost.items())
    if corpus.format == "dbdc":   # its other fields: WOCHAT has no place for them (the known ones go as kept tags)
        report.dropped.extend(unheld_metadata(corpus, dbdc_fields_held=True))
    out = Path(path)
    if out.suffix.lower() == ".xml":
        if len(elems) == 1:
            root = elems[0][1]
        else:
            root = ET.Element("dialogues")
            root.extend(e for _, e in elems)
        write_bytes(out, _serialise(root, what, corpus.source, elems[0][0] if len(elems) == 1 else None))
        report.files = [str(out)]
    else:
        report.files = write_folder(out, [(f"{wid}.xml", _serialise(e, what, corpus.source, wid)) for wid, e in elems],
                                    one_file=".xml")
    return report
