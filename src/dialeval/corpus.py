"""The corpus model every format maps onto: corpus → dialogue → turn.

Labels are kept per annotator, "as is": a dialogue or a turn holds, for each label scale, the list of
labels its annotators gave (``None`` where an annotator gave none). Each scale declares its levels and
whether they are ordered (ordinal) or not (nominal), at which level it applies (dialogue or turn) and,
optionally, to which sender's turns (STC-3 customers and helpdesk agents have different nugget types).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from dialeval.errors import DialevalError, describe, quote

ScaleKind = Literal["ordinal", "nominal"]
ScaleLevel = Literal["dialogue", "turn"]


@dataclass(frozen=True)
class Scale:
    """A label set: its name, its levels (in order for an ordinal scale) and where it applies.

    Examples
    --------
    >>> s = Scale("A", ("2", "1", "0", "-1", "-2"), "ordinal")
    >>> s.index("0"), len(s)
    (2, 5)
    """

    name: str
    levels: tuple[str, ...]
    kind: ScaleKind
    level: ScaleLevel = "dialogue"
    sender: str | None = None
    description: str = ""
    values: tuple[float, ...] | None = None
    panel: bool = False
    """Whether every item's labels come from one fixed panel of annotators, listed in one order: the j-th label
    of every item is the same person's (STC-3: its 19 annotators). False: who labelled may differ by item."""

    def __post_init__(self) -> None:
        levels = self.levels
        if isinstance(levels, str) or not isinstance(levels, tuple | list) \
                or not all(isinstance(lv, str) for lv in levels):
            raise DialevalError(f"scale {self.name!r}: levels {describe(levels)} are not allowed; allowed is a "
                                "tuple of labels (strings), e.g. ('O', 'T', 'X')")
        object.__setattr__(self, "levels", tuple(levels))
        if self.values is not None:
            if not isinstance(self.values, tuple | list) or not all(
                    isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in self.values):
                raise DialevalError(f"scale {self.name!r}: values {describe(self.values)} are not allowed; allowed "
                                    "is one finite number per level")
            object.__setattr__(self, "values", tuple(self.values))
        if self.kind not in ("ordinal", "nominal"):
            raise DialevalError(f"scale {self.name!r}: kind {describe(self.kind)} is not allowed; "
                                "allowed are 'ordinal', 'nominal'")
        if self.level not in ("dialogue", "turn"):
            raise DialevalError(f"scale {self.name!r}: level {describe(self.level)} is not allowed; "
                                "allowed are 'dialogue', 'turn'")
        if len(self.levels) < 2 or len(set(self.levels)) != len(self.levels):
            raise DialevalError(f"scale {self.name!r}: levels {describe(self.levels)} must be at least "
                                "two distinct labels")
        if self.values is not None and len(self.values) != len(self.levels):
            raise DialevalError(f"scale {self.name!r}: {len(self.values)} numeric values for "
                                f"{len(self.levels)} levels; give one value per level")
        object.__setattr__(self, "_pos", {lv: i for i, lv in enumerate(self.levels)})

    def __len__(self) -> int:
        return len(self.levels)

    def index(self, label: str) -> int:
        """Position of ``label`` among the levels; a :class:`DialevalError` if it is not one."""
        try:
            return self._pos[label]  # type: ignore[attr-defined]
        except (KeyError, TypeError):
            raise DialevalError(f"label {describe(label)} is not on scale {self.name!r}; allowed are "
                                + ", ".join(self.levels)) from None

    def applies_to(self, sender: str | None) -> bool:
        return self.sender is None or self.sender == sender

    def numeric(self) -> tuple[float, ...]:
        """The number of each level (``values``, else the levels read as numbers), for means of ratings.

        Raises
        ------
        DialevalError
            If the scale declares no values and its levels are not numbers (e.g. O, T, X).

        Examples
        --------
        >>> Scale("likeable", ("1", "2", "3"), "ordinal").numeric()
        (1.0, 2.0, 3.0)
        """
        if self.values is not None:
            return tuple(float(v) for v in self.values)
        try:
            return tuple(float(lv) for lv in self.levels)
        except ValueError:
            raise DialevalError(f"scale {self.name!r} has levels {', '.join(self.levels)}, which are not "
                                "numbers, and declares no numeric values; a mean rating is undefined") from None


@dataclass
class Turn:
    """One turn (for STC-3: an utterance block, all consecutive posts of one sender)."""

    sender: str
    utterances: list[str]
    labels: dict[str, list[str | None]] = field(default_factory=dict)
    annotators: list[str] | None = None
    meta: dict = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n".join(u for u in self.utterances if u)


@dataclass(repr=False)
class Dialogue:
    """One dialogue: its id, turns and dialogue-level labels per annotator."""

    id: str
    turns: list[Turn]
    labels: dict[str, list[str | None]] = field(default_factory=dict)
    annotators: list[str] | None = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.turns, list) or not all(isinstance(t, Turn) for t in self.turns):
            raise DialevalError(f"dialogue {describe(self.id)}: turns {describe(self.turns)} are not allowed; "
                                "allowed is a list of Turn")

    def __repr__(self) -> str:
        """A summary, not the text: ``Dialogue('d1', 7 turns, labels A, S, E)``."""
        labels = list(self.labels) + list(dict.fromkeys(k for t in self.turns for k in t.labels))
        return (f"Dialogue({quote(self.id)!r}, {len(self.turns)} turns"
                + (f", labels {', '.join(labels)}" if labels else "") + ")")


@dataclass(repr=False)
class Corpus:
    """A list of dialogues with the scales their labels use.

    ``scales`` maps a scale name to its :class:`Scale`; ``format`` names the format it was read from.
    """

    dialogues: list[Dialogue]
    scales: dict[str, Scale] = field(default_factory=dict)
    format: str = "unknown"
    source: str | None = None
    language: str | None = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.dialogues, list) or not all(isinstance(d, Dialogue) for d in self.dialogues):
            raise DialevalError(f"dialogues {describe(self.dialogues)} are not allowed; allowed is a list of "
                                "Dialogue", file=self.source)
        if not isinstance(self.scales, dict) or not all(isinstance(v, Scale) for v in self.scales.values()):
            raise DialevalError(f"scales {describe(self.scales)} are not allowed; allowed is a dict of scale name "
                                "-> Scale", file=self.source)

    def __repr__(self) -> str:
        """A summary, not the dialogues: ``Corpus(stc3 'train.json', 1672 dialogues, 6939 turns, scales A, S)``."""
        return (f"Corpus({self.format}" + (f" {quote(self.source)!r}" if self.source else "")
                + f", {len(self.dialogues)} dialogues, {sum(len(d.turns) for d in self.dialogues)} turns"
                + (f", scales {', '.join(self.scales)}" if self.scales else "")
                + (f", language {self.language}" if self.language else "") + ")")

    def __len__(self) -> int:
        return len(self.dialogues)

    def __iter__(self) -> Iterator[Dialogue]:
        return iter(self.dialogues)

    def ids(self) -> list[str]:
        return [d.id for d in self.dialogues]

    def scales_at(self, level: ScaleLevel) -> list[Scale]:
        return [s for s in self.scales.values() if s.level == level]

    def is_annotated(self) -> bool:
        """True when any dialogue or turn carries a label."""
        for d in self.dialogues:
            if any(d.labels.values()):
                return True
            if any(any(t.labels.values()) for t in d.turns):
                return True
        return False

    def subset(self, ids: Sequence[str]) -> Corpus:
        """The dialogues with these ids, in the given order."""
        by_id = {d.id: d for d in self.dialogues}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise DialevalError(f"{len(missing)} id(s) not in the corpus, e.g. {missing[:3]}",
                                file=self.source)
        return Corpus([by_id[i] for i in ids], dict(self.scales), self.format, self.source,
                      self.language, dict(self.meta))


def joint_scales(corpora: Sequence[Corpus]) -> dict[str, Scale]:
    """The scales of corpora read together (trained on together, or one file's scales after another's): each
    name once, in order of appearance; an error when two declare one name with other levels.

    >>> a = Corpus([], {"q": Scale("q", ("1", "2"), "ordinal")}, source="a.json")
    >>> b = Corpus([], {"r": Scale("r", ("x", "y"), "nominal")}, source="b.json")
    >>> list(joint_scales([a, b]))
    ['q', 'r']
    """
    out: dict[str, Scale] = {}
    for c in corpora:
        for name, sc in c.scales.items():
            if name in out and out[name].levels != sc.levels:
                raise DialevalError(f"scale {name!r} has levels {', '.join(out[name].levels)} in one file and "
                                    f"{', '.join(sc.levels)} in another; they cannot be trained on together",
                                    file=c.source)
            out.setdefault(name, sc)
    return out


BLOCK_CONFLICTS = ("error", "last")


def rename_senders(corpus: Corpus, sender_map: dict[str, str]) -> Corpus:
    """The corpus with each turn's sender renamed by ``sender_map`` (a sender not in it kept as it is); the turns,
    labels and metadata are the same objects.

    Examples
    --------
    >>> c = Corpus([Dialogue("d", [Turn("customer", ["hi"]), Turn("helpdesk", ["yo"])])])
    >>> [t.sender for t in rename_senders(c, {"customer": "user"}).dialogues[0].turns]
    ['user', 'helpdesk']
    """
    if not sender_map:
        return corpus
    return replace(corpus, dialogues=[replace(d, turns=[replace(t, sender=sender_map.get(t.sender, t.sender))
                                                        for t in d.turns]) for d in corpus.dialogues])


def merge_blocks(corpus: Corpus, *, on_conflict: str = "error") -> Corpus:
    """The corpus with each run of consecutive turns by one sender merged into one turn (an utterance block).

    Utterances are concatenated in order; ``turn.meta["merged"]`` lists the positions of the merged turns.
    A block gets the labels of the one turn in it that has labels. When several turns of a block have
    labels, ``on_conflict`` decides: ``"error"`` (default) raises, ``"last"`` keeps the last labelled turn's.

    Examples
    --------
    >>> c = Corpus([Dialogue("d", [Turn("user", ["hi"]), Turn("user", ["there"]), Turn("system", ["yo"])])])
    >>> [(t.sender, t.utterances) for t in merge_blocks(c).dialogues[0].turns]
    [('user', ['hi', 'there']), ('system', ['yo'])]
    """
    if not isinstance(on_conflict, str) or on_conflict not in BLOCK_CONFLICTS:
        raise DialevalError(f"on_conflict {describe(on_conflict)} is not allowed; allowed are "
                            + ", ".join(BLOCK_CONFLICTS))
    out = []
    for d in corpus.dialogues:
        blocks: list[Turn] = []
        for pos, t in enumerate(d.turns):
            if blocks and blocks[-1].sender == t.sender:
                b = blocks[-1]
                b.utterances.extend(t.utterances)
                b.meta["merged"].append(pos)
                if any(t.labels.values()):
                    if any(b.labels.values()) and on_conflict == "error":
                        raise DialevalError(f"turns {b.meta['merged'][0]}-{pos} form one block of sender "
                                            f"{t.sender!r} and more than one of them has labels; pass "
                                            "on_conflict='last' to keep the last one's", file=corpus.source,
                                            dialogue=d.id, field=f"turns[{pos}]")
                    b.labels, b.annotators = dict(t.labels), t.annotators
            else:
                blocks.append(Turn(t.sender, list(t.utterances), dict(t.labels), t.annotators,
                                   {**t.meta, "merged": [pos]}))
        out.append(Dialogue(d.id, blocks, dict(d.labels), d.annotators, dict(d.meta)))
    return Corpus(out, dict(corpus.scales), corpus.format, corpus.source, corpus.language,
                  {**corpus.meta, "blocks": True})


def expect_corpus(value: object, what: str = "corpus") -> Corpus:
    """``value`` if it is a :class:`Corpus`, else an error saying what was received (a function that takes a
    corpus raised an AttributeError for ``None`` or a path)."""
    if not isinstance(value, Corpus):
        hint = "; read it first with dialeval.read_corpus(path)" if isinstance(value, str | bytes) or hasattr(
            value, "__fspath__") else ""
        raise DialevalError(f"{what} must be a dialeval.Corpus; received {describe(value)}{hint}")
    return value
