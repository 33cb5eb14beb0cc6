"""WOCHAT chat-session logs with turn-level subjective annotations (FORMATS.md §2): read and write XML.

One ``<dialogue id="IRIS00042">`` per session: ``<system_name>``/``<user_name>`` (human-machine) or
``<user1_name>``, ``<user2_name>``, ... (human-human), ``<timestamp>``, then ``<turn id="1">`` with
``<speaker>``, ``<utterance>`` and one ``<annotator id="...">`` per annotator holding empty tags: exactly one
of ``<VALID/>``, ``<ACCEPTABLE/>``, ``<INVALID/>`` (ordinal, in that order) and optionally ``<POSITIVE/>``,
``<NEGATIVE/>``, ``<OFFENSIVE/>``, ``<SWEARLANG/>``, ``<ISMACHINE/>``.

Rules checked on reading (each violation is a :class:`~dialeval.DialevalError` naming file, dialogue, turn):

- the dialogue id is a name (starting with a letter) followed by exactly 5 digits, ``00000``-``99999``;
- ``<speaker>`` is one of the roles declared by the ``*_name`` tags (``SYSTEM``, ``USER``, ``USER1``...);
- utterances contain no declared name (case-insensitive, whole word): it must read ``SYSTEM_NAME`` etc.
  (``names="replace"`` replaces instead, ``names="keep"`` lets it be);
- each annotator gives exactly one of VALID / ACCEPTABLE / INVALID; annotator ids are unique per turn;
- other tags in a turn (timestamps, context, metadata) and in an annotator are kept in ``meta``.

The guidelines print the tags as ``</VALID>``; that spelling is not well-formed XML, but the reader accepts
it and records each place in ``corpus.meta["notices"]``. The writer always emits ``<VALID/>``.

XML is parsed with :mod:`defusedxml`: entity declarations (a "billion laughs" file), external entities and
network access are refused, and files over ``max_bytes`` are not read.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring as safe_fromstring

from dialeval.corpus import Corpus, Dialogue, Scale, Turn
from dialeval.errors import DialevalError, describe
from dialeval.io._files import MAX_BYTES, as_path, files_in, read_bounded

VALIDITY = "validity"
VALIDITY_TAGS = ("VALID", "ACCEPTABLE", "INVALID")
OPTIONAL_TAGS = ("POSITIVE", "NEGATIVE", "OFFENSIVE", "SWEARLANG", "ISMACHINE")
BINARY_LEVELS = ("no", "yes")
NAME_POLICIES = ("error", "replace", "keep")
ID_POLICIES = ("renumber", "strict")
ID_PATTERN = re.compile(r"^(?P<name>[^\W\d][\w.-]*?)(?<!\d)(?P<number>\d{5})$")
ID_RULE = "a chatbot name (or 'human') followed by a 5-digit number 00000-99999, e.g. 'IRIS00042'"
_NAME_TAG = re.compile(r"^(system|user\d*)_name$")
_SPEAKER = re.compile(r"^(SYSTEM|USER\d*)$")
_GUIDELINE_TAG = re.compile(rb"<(/?)\s*(" + b"|".join(t.encode() for t in VALIDITY_TAGS + OPTIONAL_TAGS)
                            + rb")\s*(/?)>")
_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_EDGE_WS = re.compile(r"^\s*\n\s*|\s*\n\s*$")
_DIALOGUE_KEYS = ("timestamp", "source_id")


def validity_scale() -> Scale:
    """VALID > ACCEPTABLE > INVALID, an ordinal turn scale."""
    return Scale(VALIDITY, VALIDITY_TAGS, "ordinal", "turn", None,
                 "WOCHAT: VALID (semantically and pragmatically valid), ACCEPTABLE (pragmatically acceptable), "
                 "INVALID (definitely invalid)")


def binary_scale(tag: str) -> Scale:
    """The per-annotator yes/no scale of an optional WOCHAT tag (``POSITIVE`` -> scale ``positive``)."""
    return Scale(tag.lower(), BINARY_LEVELS, "nominal", "turn", None, f"WOCHAT optional tag <{tag}/>: given or not")


def role_of(sender: str) -> str:
    """The WOCHAT speaker role of a corpus sender (``system`` -> ``SYSTEM``)."""
    return sender.upper()


def name_pattern(name: str) -> re.Pattern:
    """Whole-word, case-insensitive occurrences of a declared speaker name."""
    return re.compile(r"(?<!\w)" + re.escape(name) + r"(?!\w)", re.IGNORECASE)


# ---------------------------------------------------------------------------------------------- reading


def fix_guideline_tags(data: bytes) -> tuple[bytes, list[tuple[int, str]]]:
    """Rewrite the guidelines' ``</VALID>`` spelling (an end tag with no start) as ``<VALID/>``.

    A ``</VALID>`` that closes an open ``<VALID>`` is left alone. Returns the new bytes and the (line, tag)
    of every rewrite.

    Examples
    --------
    >>> fix_guideline_tags(b"<annotator id='a'>\\n</VALID> </POSITIVE></annotator>")
    (b"<annotator id='a'>\\n<VALID/> <POSITIVE/></annotator>", [(2, 'VALID'), (2, 'POSITIVE')])
    """
    if b"</" not in data or not _GUIDELINE_TAG.search(data):
        return data, []
    out, fixes, stack = [], [], []
    last, line, line_pos = 0, 1, 0
    for m in _GUIDELINE_TAG.finditer(data):
        closing, tag, selfclose = m.group(1), m.group(2), m.group(3)
        if not closing:
            if not selfclose:
                stack.append(tag)
            continue
        if not selfclose and stack and stack[-1] == tag:
            stack.pop()
            continue
        line += data.count(b"\n", line_pos, m.start())
        line_pos = m.start()
        out.append(data[last:m.start()])
        out.append(b"<" + tag + b"/>")
        last = m.end()
        fixes.append((line, tag.decode()))
    out.append(data[last:])
    return b"".join(out), fixes


def parse_xml(data: bytes, file: str | None) -> ET.Element:
    """Parse XML safely: no entity declarations, no external entities, no network."""
    try:
        return safe_fromstring(data)
    except DefusedXmlException as e:
        raise DialevalError(f"refused unsafe XML ({type(e).__name__}: {e}); entity declarations, external "
                            "entities and DTD tricks such as 'billion laughs' are not allowed", file=file) from None
    except ET.ParseError as e:
        line, col = getattr(e, "position", (0, 0))
        raise DialevalError(f"not well-formed XML at line {line}, column {col + 1}: {e}", file=file) from None


@dataclass
class _ReadState:
    file: str
    names: str
    notices: list[str]
    used_optional: set[str] = field(default_factory=set)


def read_wochat(source: str | Path, *, names: str = "error", max_bytes: int = MAX_BYTES) -> Corpus:
    """Read WOCHAT XML (a file with one ``<dialogue>`` or a root holding several, or a folder of ``*.xml``).

    Parameters
    ----------
    source : path
    names : {'error', 'replace', 'keep'}, default 'error'
        What to do with a declared speaker name found in an utterance (the guidelines require its tag,
        e.g. ``SYSTEM_NAME``): raise, replace it by the tag (noted in ``meta["notices"]``), or keep it.
    max_bytes : int
        Size limit of one file (checked before parsing).

    Returns
    -------
    Corpus
        ``format="wochat"``; scale ``validity`` (VALID, ACCEPTABLE, INVALID; ordinal, turn level) and one
        yes/no scale per optional tag used anywhere in the corpus (an annotator who does not give the tag
        counts as "no"). Senders are the roles in lower case (``system``, ``user``, ``user1``...).
        ``dialogue.meta`` keeps ``names`` (role -> declared name), ``timestamp``, ``source_id`` and other
        tags; ``turn.meta`` keeps the turn ``id`` and any extra tags; ``corpus.meta["notices"]`` lists
        where the reader accepted ``</VALID>`` or replaced a name.

    Raises
    ------
    DialevalError
        Unsafe or malformed XML, or any rule of the module docstring broken; the message names the file,
        the dialogue id and the turn.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "d.xml"
    >>> _ = p.write_text('''<dialogue id="IRIS00001"><system_name>IRIS</system_name><user_name>Ann</user_name>
    ...   <turn id="1"><speaker>USER</speaker><utterance>hi SYSTEM_NAME</utterance></turn>
    ...   <turn id="2"><speaker>SYSTEM</speaker><utterance>hello</utterance>
    ...     <annotator id="a1"></VALID></annotator><annotator id="a2"><INVALID/></annotator></turn>
    ... </dialogue>''')
    >>> c = read_wochat(p)
    >>> c.dialogues[0].turns[1].labels, c.dialogues[0].turns[1].annotators
    ({'validity': ['VALID', 'INVALID']}, ['a1', 'a2'])
    >>> c.meta["notices"][0].endswith("read </VALID> as <VALID/> (the guidelines' spelling)")
    True
    """
    if names not in NAME_POLICIES:
        raise DialevalError(f"names policy {describe(names)} is not allowed; allowed are " + ", ".join(NAME_POLICIES))
    path = as_path(source, "WOCHAT XML")
    files = files_in(path, ["*.xml"], "WOCHAT XML files") if path.is_dir() else [path]
    notices: list[str] = []
    dialogues: list[Dialogue] = []
    seen: dict[str, str] = {}
    used: set[str] = set()
    for f in files:
        st = _ReadState(str(f), names, notices)
        data, fixes = fix_guideline_tags(read_bounded(f, max_bytes))
        notices.extend(f"{f}:{line}: read </{tag}> as <{tag}/> (the guidelines' spelling)" for line, tag in fixes)
        root = parse_xml(data, str(f))
        elems = [root] if root.tag == "dialogue" else list(root.iter("dialogue"))
        if not elems:
            raise DialevalError(f"no <dialogue> element (the root is <{root.tag}>)", file=str(f))
        for el in elems:
            dlg = _read_dialogue(el, st)
            if dlg.id in seen:
                raise DialevalError(f"dialogue id met twice (also in {seen[dlg.id]})", file=str(f), dialogue=dlg.id)
            seen[dlg.id] = str(f)
            dialogues.append(dlg)
        used |= st.used_optional
    scales = {VALIDITY: validity_scale()}
    for tag in OPTIONAL_TAGS:
        if tag in used:
            scales[tag.lower()] = binary_scale(tag)
    _fill_binary(dialogues, [t for t in OPTIONAL_TAGS if t in used])
    return Corpus(dialogues, scales, "wochat", str(path), meta={"notices": notices})


def _fill_binary(dialogues: list[Dialogue], tags: list[str]) -> None:
    """Turn each annotated turn's per-annotator optional tags into yes/no labels."""
    for d in dialogues:
        for t in d.turns:
            given = t.meta.pop("_optional", None)
            if given is None:
                continue
            for tag in tags:
                t.labels[tag.lower()] = ["yes" if tag in g else "no" for g in given]


def _text(el: ET.Element) -> str:
    return _EDGE_WS.sub("", el.text or "")


def _as_tag(el: ET.Element) -> dict:
    """An extra element kept as data: tag, attributes, text and (if nested) its XML."""
    out: dict = {"tag": el.tag, "attrib": dict(el.attrib), "text": (el.text or "").strip()}
    if len(el):
        out["xml"] = ET.tostring(el, encoding="unicode").strip()
    return out


def _read_dialogue(el: ET.Element, st: _ReadState) -> Dialogue:
    file = st.file
    did = el.get("id")
    if not did:
        raise DialevalError("<dialogue> has no id attribute", file=file)
    if not ID_PATTERN.match(did):
        raise DialevalError(f"dialogue id {did!r} does not follow the WOCHAT pattern: {ID_RULE}", file=file,
                            dialogue=did, field="id")
    names: dict[str, str] = {}
    meta: dict = {}
    extra: list[dict] = []
    turn_elems: list[ET.Element] = []
    for child in el:
        m = _NAME_TAG.match(child.tag)
        if m:
            role = m.group(1).upper()
            if role in names:
                raise DialevalError(f"<{child.tag}> is declared twice", file=file, dialogue=did, field=child.tag)
            names[role] = (child.text or "").strip()
        elif child.tag == "turn":
            turn_elems.append(child)
        elif child.tag in _DIALOGUE_KEYS and not len(child):
            meta[child.tag] = (child.text or "").strip()
        else:
            extra.append(_as_tag(child))
    if not turn_elems:
        raise DialevalError("the dialogue has no <turn>", file=file, dialogue=did)
    patterns = {role: name_pattern(n) for role, n in names.items() if n}
    turns, prev_id = [], None
    for te in turn_elems:
        turn = _read_turn(te, did, names, patterns, st)
        tid = turn.meta["id"]
        if prev_id is not None and tid <= prev_id:
            raise DialevalError(f"turn id {tid} comes after turn id {prev_id}; turn ids must increase",
                                file=file, dialogue=did, field=f"turn {tid}")
        prev_id = tid
        turns.append(turn)
    meta["names"] = names
    if extra:
        meta["tags"] = extra
    return Dialogue(did, turns, meta=meta)


def _read_turn(te: ET.Element, did: str, names: dict[str, str], patterns: dict[str, re.Pattern],
               st: _ReadState) -> Turn:
    file = st.file
    raw_id = te.get("id")
    if raw_id is None or not raw_id.strip().isdigit():
        raise DialevalError(f"turn id {describe(raw_id)} is not allowed; a turn needs id=\"N\", N = 0, 1, 2, ...",
                            file=file, dialogue=did, field="turn")
    tid = int(raw_id)
    where = f"turn {tid}"
    speaker = utterance = None
    annotators: list[ET.Element] = []
    extra: list[dict] = []
    for child in te:
        if child.tag == "speaker":
            if speaker is not None:
                raise DialevalError("two <speaker> tags", file=file, dialogue=did, field=where)
            speaker = (child.text or "").strip()
        elif child.tag == "utterance":
            if utterance is not None:
                raise DialevalError("two <utterance> tags", file=file, dialogue=did, field=where)
            utterance = _text(child)
        elif child.tag == "annotator":
            annotators.append(child)
        else:
            extra.append(_as_tag(child))
    if speaker is None:
        raise DialevalError("the turn has no <speaker>", file=file, dialogue=did, field=where)
    if utterance is None:
        raise DialevalError("the turn has no <utterance>", file=file, dialogue=did, field=where)
    if speaker not in names:
        declared = ", ".join(names) or "(none: add <system_name>/<user_name> or <user1_name>, <user2_name>...)"
        raise DialevalError(f"speaker {speaker!r} is not declared; declared roles are {declared}", file=file,
                            dialogue=did, field=f"{where}.speaker")
    utterance = _check_names(utterance, names, patterns, did, where, st)
    turn = Turn(speaker.lower(), [utterance], meta={"id": tid})
    if extra:
        turn.meta["tags"] = extra
    if annotators:
        _read_annotators(annotators, turn, did, where, st)
    return turn


def _check_names(text: str, names: dict[str, str], patterns: dict[str, re.Pattern], did: str, where: str,
                 st: _ReadState) -> str:
    if st.names == "keep":
        return text
    for role, pat in patterns.items():
        m = pat.search(text)
        if m is None:
            continue
        tag = f"{role.lower()}_name"
        if st.names == "error":
            raise DialevalError(f"the utterance contains the {role} name {m.group(0)!r} declared in <{tag}>; "
                                f"WOCHAT utterances must read {role}_NAME instead (names='replace' replaces it)",
                                file=st.file, dialogue=did, field=f"{where}.utterance")
        text, n = pat.subn(f"{role}_NAME", text)
        st.notices.append(f"{st.file}: dialogue {did}: {where}: replaced {n} occurrence(s) of the {role} name "
                          f"by {role}_NAME")
    return text


def _read_annotators(elems: list[ET.Element], turn: Turn, did: str, where: str, st: _ReadState) -> None:
    file = st.file
    labels: list[str | None] = []
    ids: list[str] = []
    optional: list[set[str]] = []
    extras: list[list[dict]] = []
    for el in elems:
        aid = el.get("id")
        if not aid:
            raise DialevalError("an <annotator> has no id attribute", file=file, dialogue=did, field=where)
        if aid in ids:
            raise DialevalError(f"annotator {aid!r} appears twice in this turn", file=file, dialogue=did,
                                field=where)
        given: list[str] = []
        opt: set[str] = set()
        extra: list[dict] = []
        for child in el:
            if child.tag in VALIDITY_TAGS or child.tag in OPTIONAL_TAGS:
                if (child.text or "").strip() or len(child):
                    raise DialevalError(f"annotator {aid!r}: <{child.tag}> must be an empty tag, <{child.tag}/>",
                                        file=file, dialogue=did, field=where)
                if child.tag in VALIDITY_TAGS:
                    given.append(child.tag)
                elif child.tag in opt:
                    raise DialevalError(f"annotator {aid!r} gives <{child.tag}/> twice", file=file,
                                        dialogue=did, field=where)
                else:
                    opt.add(child.tag)
            else:
                extra.append(_as_tag(child))
        allowed = ", ".join(f"<{t}/>" for t in VALIDITY_TAGS)
        if not given:
            raise DialevalError(f"annotator {aid!r} gives none of {allowed}; exactly one is required", file=file,
                                dialogue=did, field=where)
        if len(given) > 1:
            raise DialevalError(f"annotator {aid!r} gives " + " and ".join(f"<{t}/>" for t in given)
                                + f"; exactly one of {allowed} is allowed", file=file, dialogue=did, field=where)
        labels.append(given[0])
        ids.append(aid)
        optional.append(opt)
        extras.append(extra)
        st.used_optional |= opt
    turn.labels[VALIDITY] = labels
    turn.annotators = ids
    turn.meta["_optional"] = optional
    if any(extras):
        turn.meta["annotator_tags"] = extras


# ---------------------------------------------------------------------------------------------- writing


@dataclass
class WriteReport:
    """What a writer did that the reader of its output should know (printed by ``dialeval corpus convert``)."""

    dialogues: int = 0
    turns: int = 0
    labels: int = 0
    mapping: dict[str, str] = field(default_factory=dict)
    mapped_scale: str | None = None
    renamed_ids: dict[str, str] = field(default_factory=dict)
    replaced_names: int = 0
    dropped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"wrote {self.dialogues} dialogue(s), {self.turns} turn(s), {self.labels} label(s) to "
               + (self.files[0] if len(self.files) == 1 else f"{len(self.files)} files")]
        if self.mapping:
            what = "senders mapped: " if self.mapped_scale == "senders" else \
                f"labels of scale {self.mapped_scale!r} mapped in order: "
            out.append(what + ", ".join(f"{k} -> {v}" for k, v in self.mapping.items()))
        if self.renamed_ids:
            ex = ", ".join(f"{a} -> {b}" for a, b in list(self.renamed_ids.items())[:3])
            out.append(f"{len(self.renamed_ids)} dialogue id(s) renamed to fit the WOCHAT pattern ({ID_RULE}); "
                       f"the original id is kept in <source_id>: {ex}" + (", ..." if len(self.renamed_ids) > 3 else ""))
        if self.replaced_names:
            out.append(f"{self.replaced_names} occurrence(s) of declared speaker names replaced by their tag "
                       "(SYSTEM_NAME, USER_NAME...) as the guidelines require")
        if self.dropped:
            out.append("dropped (not representable): " + "; ".join(self.dropped))
        return out + self.notes


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
                                + ", ".join(cands) + "; choose one with scale=")
        return (cands[0], known[cands[0]]) if cands else None
    if scale is None:
        cands = [s.name for s in corpus.scales.values() if s.level == "turn" and set(s.levels) == set(label_map)]
        if len(cands) != 1:
            raise DialevalError("give scale= with label_map=: " + (f"{len(cands)} turn scales have the levels "
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
            raise DialevalError("cannot write as WOCHAT XML, which holds per-turn VALID/ACCEPTABLE/INVALID and "
                                "the optional yes/no tags only: the corpus has labels on " + ", ".join(other)
                                + "; pass drop_labels=True (--drop-labels) to write it without them",
                                file=corpus.source)
        report.dropped.append("labels of scale(s) " + ", ".join(other))
    if src is not None:
        report.mapped_scale, report.mapping = src
    return src, binary


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


def _add_tags(parent: ET.Element, tags: list[dict]) -> None:
    for t in tags:
        if "xml" in t:
            parent.append(safe_fromstring(t["xml"]))
        else:
            ET.SubElement(parent, t["tag"], t.get("attrib", {})).text = t.get("text") or None


def _dialogue_element(d: Dialogue, wid: str, src: tuple[str, dict] | None, binary: list[str], report: WriteReport,
                      file: str | None) -> ET.Element:
    roles = sorted({role_of(t.sender) for t in d.turns} | set(d.meta.get("names") or {}), key=_role_order)
    for r in roles:
        if not _SPEAKER.match(r):
            raise DialevalError(f"sender {r.lower()!r} has no WOCHAT speaker role; allowed are system, user, "
                                "user1, user2, ...", file=file, dialogue=d.id)
    names = _names_of(d, roles)
    el = ET.Element("dialogue", {"id": wid})
    for r in roles:
        ET.SubElement(el, f"{r.lower()}_name").text = names[r] or None
    for key in _DIALOGUE_KEYS:
        if d.meta.get(key):
            ET.SubElement(el, key).text = str(d.meta[key])
    if wid != d.id:
        ET.SubElement(el, "source_id").text = d.id
    _add_tags(el, d.meta.get("tags", []))
    patterns = {r: name_pattern(n) for r, n in names.items() if n}
    src_name, mapping = src if src else (None, {})
    for pos, t in enumerate(d.turns):
        te = ET.SubElement(el, "turn", {"id": str(t.meta.get("id", pos + 1))})
        ET.SubElement(te, "speaker").text = role_of(t.sender)
        text = "\n".join(t.utterances)
        for r, pat in patterns.items():
            text, n = pat.subn(f"{r}_NAME", text)
            report.replaced_names += n
        if _CTRL.search(text):
            raise DialevalError("the utterance holds a control character that XML 1.0 cannot carry", file=file,
                                dialogue=d.id, field=f"turns[{pos}]")
        ET.SubElement(te, "utterance").text = text
        _add_tags(te, t.meta.get("tags", []))
        report.turns += 1
        if src_name is None or src_name not in t.labels:
            continue
        labs = t.labels[src_name]
        ids = t.annotators or [str(a + 1) for a in range(len(labs))]
        ann_tags = t.meta.get("annotator_tags") or [[] for _ in labs]
        for a, (aid, lab) in enumerate(zip(ids, labs, strict=True)):
            if lab is None:
                continue
            ae = ET.SubElement(te, "annotator", {"id": str(aid)})
            ET.SubElement(ae, mapping[lab])
            for tag in binary:
                if (t.labels.get(tag.lower()) or [None] * len(labs))[a] == "yes":
                    ET.SubElement(ae, tag)
            _add_tags(ae, ann_tags[a] if a < len(ann_tags) else [])
            report.labels += 1
    return el


def _serialise(el: ET.Element, comment: str) -> bytes:
    ET.indent(el, space="  ")
    body = ET.tostring(el, encoding="unicode", short_empty_elements=True).replace(" />", "/>")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<!-- {comment} -->\n{body}\n'.encode()


def write_wochat(corpus: Corpus, path: str | os.PathLike, *, scale: str | None = None,
                 label_map: dict[str, str] | None = None, ids: str = "renumber",
                 drop_labels: bool = False) -> WriteReport:
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
    if ids not in ID_POLICIES:
        raise DialevalError(f"ids policy {describe(ids)} is not allowed; allowed are " + ", ".join(ID_POLICIES))
    report = WriteReport()
    src, binary = _plan_scales(corpus, scale, label_map, drop_labels, report)
    from dialeval import __version__
    what = f"written by dialeval {__version__} from {corpus.format} corpus {corpus.source or ''}".rstrip()
    if report.mapping:
        what += "; labels: " + ", ".join(f"{report.mapped_scale} {k} -> {v}" for k, v in report.mapping.items())
    what = what.replace("--", "- -")
    used: set[str] = set()
    elems = []
    for d in corpus.dialogues:
        wid = _wochat_id(d.id, used, ids, corpus.source)
        if wid in used:
            raise DialevalError("dialogue id met twice", file=corpus.source, dialogue=d.id)
        used.add(wid)
        if wid != d.id:
            report.renamed_ids[d.id] = wid
        elems.append((wid, _dialogue_element(d, wid, src, binary, report, corpus.source)))
        report.dialogues += 1
    out = Path(path)
    if out.suffix.lower() == ".xml":
        if len(elems) == 1:
            root = elems[0][1]
        else:
            root = ET.Element("dialogues")
            root.extend(e for _, e in elems)
        _atomic_write(out, _serialise(root, what))
        report.files = [str(out)]
    else:
        report.files = _write_folder(out, [(f"{wid}.xml", _serialise(e, what)) for wid, e in elems])
    return report


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _write_folder(folder: Path, files: list[tuple[str, bytes]]) -> list[str]:
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise DialevalError("the output folder exists and is not empty; give a new folder or a path ending "
                            "in .xml", file=str(folder))
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        for name, data in files:
            (tmp / name).write_bytes(data)
        if folder.exists():
            folder.rmdir()
        os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [str(folder / name) for name, _ in files]
