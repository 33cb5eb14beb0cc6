"""The one registry of annotation schemes: what annotators label, derived from the corpus model's scales.

A scheme lists its **controls**. A control is one scale (:class:`dialeval.corpus.Scale`, taken from the
reader of that format, never redeclared) shown either as a *choice* (exactly one level, required, one
keyboard key per level) or as a *flag* (an optional yes/no tag toggled by one key). Each control applies
at the scale's level (the dialogue, or each turn of the senders the scale and the scheme allow).

==========  ======================================================================================
scheme      controls
==========  ======================================================================================
wochat      per system turn (each turn for human-human): VALID/ACCEPTABLE/INVALID (keys 1 2 3) and
            the optional tags POSITIVE (p), NEGATIVE (n), OFFENSIVE (o), SWEARLANG (s), ISMACHINE (i,
            only when speaker identities are hidden)
stc3        per dialogue A, S, E on 2..-2 (keys 2 1 0 -1 -2, typed as written); per turn the nugget type
            of its sender (keys 1-4)
dbdc        per system turn O / T / X (keys 1 2 3)
conture     per system turn 0 / 1 / 2 (keys 0 1 2)
==========  ======================================================================================

CLI choices (``--scheme``), the page's controls and keys, the checks of a saved label and the export all
come from :data:`SCHEMES`.

**Hidden speakers** (``--hide-speakers``): a scheme that labels the system's turns only would show its
controls on those turns only, and so tell the annotator which speaker is the machine (the judgement
ISMACHINE asks of them). With speakers hidden every turn of both speakers shows the same controls, each
required alike (:meth:`Scheme.units`); the scheme's data stay the labels of the turns it labels
(:meth:`Scheme.data_units`: the system turns), the others being the price of not giving the answer away.
STC-3 labels every turn already, with each sender's own nugget types, so its page still differs by sender.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dialeval.corpus import Dialogue, Scale
from dialeval.errors import DialevalError, describe
from dialeval.io import conture, dbdc, stc3, wochat

DIGITS = "123456789"
DIALOGUE = -1
"""The ``turn`` index of a dialogue-level label (turns are 0, 1, ...)."""


@dataclass(frozen=True)
class Control:
    """One scale as a page control: a required choice (a key per level) or an optional flag (one key).

    ``hidden_only``: offered only when speaker identities are hidden from annotators (WOCHAT's ISMACHINE).
    """

    scale: Scale
    keys: tuple[str, ...]
    flag: bool = False
    hidden_only: bool = False
    title: str = ""
    meanings: tuple[tuple[str, str], ...] = ()
    """What levels whose names do not say it mean (STC-3's nugget types), shown on the page: (level, meaning)."""

    @property
    def name(self) -> str:
        return self.scale.name

    @property
    def required(self) -> bool:
        return not self.flag

    def info(self) -> dict:
        """What the page needs: name, title, levels with their keys, flag or choice, level, sender."""
        meaning = dict(self.meanings)
        levels = [{"value": v, "key": k, **({"description": meaning[v]} if v in meaning else {})}
                  for v, k in zip(self.scale.levels, self.keys, strict=False)] \
            if not self.flag else [{"value": "yes", "key": self.keys[0]}]
        return {"scale": self.name, "title": self.title or self.name, "flag": self.flag,
                "level": self.scale.level, "sender": self.scale.sender, "levels": levels,
                "description": self.scale.description}


@dataclass(frozen=True)
class Scheme:
    """An annotation scheme: its controls, the export format it maps onto, the senders whose turns it labels.

    ``turn_senders``: turns of these senders are labelled when the dialogue has any of them; otherwise
    (e.g. human-human chats) every turn is. ``sender_map`` renames a corpus's senders to the ones the
    scheme's scales name (STC-3: user -> customer, system -> helpdesk). ``wochat_map``: the levels as
    VALID/ACCEPTABLE/INVALID when written as WOCHAT XML (a scale WOCHAT's writer does not know already).
    """

    name: str
    title: str
    format: str
    controls: tuple[Control, ...]
    turn_senders: tuple[str, ...] | None = None
    sender_map: tuple[tuple[str, str], ...] = ()
    wochat_map: tuple[tuple[str, str], ...] = ()

    def controls_at(self, level: str, *, hidden: bool) -> list[Control]:
        return [c for c in self.controls if c.scale.level == level and (hidden or not c.hidden_only)]

    def scales(self, *, hidden: bool = True) -> dict[str, Scale]:
        return {c.name: c.scale for c in self.controls if hidden or not c.hidden_only}

    def senders(self, dialogue: Dialogue) -> list[str]:
        smap = dict(self.sender_map)
        return [smap.get(t.sender, t.sender) for t in dialogue.turns]

    def labelled_turns(self, senders: list[str]) -> list[int]:
        """Positions of the turns annotators label (those with at least one turn control)."""
        pick = self.turn_senders
        if pick is not None and len(set(senders)) > 1 and not any(s in pick for s in senders):
            pick = None  # a chat between people (user1, user2): every turn; a lone speaker's turns: none
        turn_controls = [c for c in self.controls if c.scale.level == "turn"]
        return [i for i, s in enumerate(senders) if (pick is None or s in pick)
                and any(c.scale.applies_to(s) for c in turn_controls)]

    def units(self, senders: list[str], *, hidden: bool) -> list[tuple[int, list[Control]]]:
        """Every unit the page shows controls on (``DIALOGUE`` or a turn position), with its controls, in page
        order; a label may be saved on each, and each required control must be labelled before a submit.

        With speakers shown, these are the :meth:`data_units`. With speakers hidden (``hidden``), a scheme that
        labels the turns of some senders only (the system's, in a human-machine chat) shows the same controls
        on *every* turn: controls on one speaker's turns only would tell the annotator which speaker is the
        machine, the very judgement ISMACHINE asks of them. The labels given on the other turns are saved
        as given but are not the scheme's data (:meth:`data_units`).

        >>> w = SCHEMES["wochat"]
        >>> [(u, len(cs)) for u, cs in w.units(["user", "system", "user"], hidden=False)]
        [(1, 5)]
        >>> [(u, len(cs)) for u, cs in w.units(["user", "system", "user"], hidden=True)]
        [(0, 6), (1, 6), (2, 6)]
        """
        out = self.data_units(senders, hidden=hidden)
        turns = [(u, cs) for u, cs in out if u != DIALOGUE]
        if not hidden or not turns or len(turns) == len(senders):
            return out
        same = turns[0][1]
        if any(cs != same for _u, cs in turns):  # the controls themselves differ by sender (STC-3's nuggets)
            return out
        return [(u, cs) for u, cs in out if u == DIALOGUE] + [(i, same) for i in range(len(senders))]

    def data_units(self, senders: list[str], *, hidden: bool) -> list[tuple[int, list[Control]]]:
        """The units whose labels are the scheme's data (what an export writes): the dialogue for its
        dialogue-level controls and each turn the scheme labels (:meth:`labelled_turns`), with the controls of
        that turn's sender, whether or not speakers are hidden.

        >>> [(u, len(cs)) for u, cs in SCHEMES["wochat"].data_units(["user", "system", "user"], hidden=True)]
        [(1, 6)]
        """
        out = []
        dlg = self.controls_at("dialogue", hidden=hidden)
        if dlg:
            out.append((DIALOGUE, dlg))
        for i in self.labelled_turns(senders):
            cs = [c for c in self.controls_at("turn", hidden=hidden) if c.scale.applies_to(senders[i])]
            out.append((i, cs))
        return out

    def info(self, *, hidden: bool) -> dict:
        return {"name": self.name, "title": self.title, "format": self.format,
                "controls": [c.info() for c in self.controls if hidden or not c.hidden_only]}


def level_keys(levels: tuple[str, ...]) -> tuple[str, ...]:
    """The keys that choose each level: the level itself when every level is a one-digit integer, else 1, 2, ...

    A numbered scale is typed as written, so the key never names another level (ConTurE's ``0 1 2`` are the
    keys 0 1 2, not 1 2 3; STC-3's ``2 1 0 -1 -2`` are typed as such, a negative level as ``-`` then its
    digit); any other scale is chosen by position.

    >>> level_keys(("2", "1", "0", "-1", "-2"))
    ('2', '1', '0', '-1', '-2')
    >>> level_keys(("O", "T", "X"))
    ('1', '2', '3')
    """
    if all(re.fullmatch(r"-?[0-9]", v) for v in levels) and len(set(levels)) == len(levels):
        return tuple(levels)
    if len(levels) > len(DIGITS):
        raise DialevalError(f"a choice of {len(levels)} levels has no key for each; allowed are up to {len(DIGITS)}")
    return tuple(DIGITS[:len(levels)])


def _choice(scale: Scale, title: str = "", meanings: tuple[tuple[str, str], ...] = ()) -> Control:
    return Control(scale, level_keys(tuple(scale.levels)), title=title, meanings=meanings)


NUGGET_MEANINGS = (
    ("CNUG0", "trigger nugget: the customer states the problem"),
    ("CNUG", "regular nugget: the customer's turn helps towards solving the problem"),
    ("CNUG*", "goal nugget: the customer confirms the problem is solved"),
    ("CNaN", "not a nugget: the customer's turn does not help towards a solution"),
    ("HNUG", "regular nugget: the helpdesk's turn helps towards solving the problem"),
    ("HNUG*", "goal nugget: the helpdesk states the solution"),
    ("HNaN", "not a nugget: the helpdesk's turn does not help towards a solution"),
)
"""STC-3's nugget types as the annotate page explains them (``../shared/spec/FORMATS.md``)."""


def _flags() -> tuple[Control, ...]:
    return tuple(Control(wochat.binary_scale(tag), (tag[0].lower(),), flag=True, hidden_only=tag == "ISMACHINE",
                         title=tag) for tag in wochat.OPTIONAL_TAGS)


def _stc3_controls() -> tuple[Control, ...]:
    scales = stc3.stc3_scales()
    quality = [_choice(scales[k], f"{k}: {stc3.QUALITY_NAMES[k]}") for k in stc3.QUALITY_KEYS]
    nuggets = [_choice(scales[stc3.NUGGET_SCALE[s]], f"nugget type ({s})", NUGGET_MEANINGS) for s in stc3.SENDERS]
    return tuple(quality + nuggets)


SCHEMES: dict[str, Scheme] = {s.name: s for s in (
    Scheme("wochat", "WOCHAT turn validity and tags", "wochat",
           (_choice(wochat.validity_scale(), "validity"), *_flags()), ("system",)),
    Scheme("stc3", "STC-3 / DialEval quality (A, S, E) and nugget types", "stc3", _stc3_controls(),
           None, (("user", "customer"), ("system", "helpdesk"))),
    Scheme("dbdc", "DBDC dialogue breakdown (O, T, X)", "dbdc",
           (_choice(dbdc.breakdown_scale(), "breakdown"),), ("system",)),
    Scheme("conture", "ConTurE overall impression (0, 1, 2)", "wochat",
           (_choice(conture.impression_scale(), "overall impression"),), ("system",),
           wochat_map=(("2", "VALID"), ("1", "ACCEPTABLE"), ("0", "INVALID"))),
)}
"""Every annotation scheme, declared once."""


def get_scheme(name: str) -> Scheme:
    """The scheme called ``name``; a DialevalError naming the allowed ones otherwise."""
    if not isinstance(name, str) or name not in SCHEMES:
        raise DialevalError(f"annotation scheme {describe(name)} is not allowed; allowed are " + ", ".join(SCHEMES))
    return SCHEMES[name]
