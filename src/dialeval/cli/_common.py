"""Shared CLI helpers: one-line errors, warnings, rich consoles, choices from the registries."""

from __future__ import annotations

import os
import re
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from enum import Enum
from pathlib import Path

from rich.console import Console
from typer.core import TyperCommand

# markup=False: what users wrote (team, run and file names, scale names) is printed as it is, never read as rich
# markup ("[red]" styled it; a team named "[/x]" stopped `dialeval leaderboard` with a MarkupError)
out = Console(highlight=False, markup=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, markup=False, soft_wrap=True)
tables = Console(highlight=False, markup=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
"""Console for tables on stdout: the terminal's width, or 160 columns when stdout is a file or a pipe (every
command's tables print through it, so that a table written to a file does not wrap at 80 columns)."""
NARROW = 120
"""Below this width a table caps its long columns (80 columns fit, long cells fold); at or above it, none."""


def warn(message: str) -> None:
    err.print(f"warning: {message}", markup=False)


@contextmanager
def warnings_as_lines(*categories: type[Warning]) -> Iterator[None]:
    """Inside the block, a warning of one of ``categories`` is printed at once as one ``warning:`` line (each
    distinct message once, from wherever it comes); other warnings are shown as Python shows them."""
    with warnings.catch_warnings():
        show = warnings.showwarning
        said: set[str] = set()

        def one_line(message, category, filename, lineno, file=None, line=None) -> None:
            if issubclass(category, categories):
                if str(message) not in said:
                    said.add(str(message))
                    warn(str(message))
            else:
                show(message, category, filename, lineno, file, line)

        warnings.showwarning = one_line
        for c in categories:
            warnings.simplefilter("always", c)
        yield


def warn_coverage(file: object, extra: list[str], missing: list[str], *, strict: bool, worst: str,
                  items_missing: dict[str, int] | None = None) -> None:
    """Warn about dialogues of a run that are not in the gold, and (unless strict) gold dialogues it lacks and
    gold items (``items_missing``: scale -> count, e.g. turns) it lacks in the dialogues it has. Both warnings
    name the first ids (escaped, :func:`dialeval.errors.quote`); an extra id that equals a missing one only after
    Unicode normalisation is said to be one (:func:`dialeval.coverage.normalisation_note`)."""
    from dialeval.coverage import normalisation_note
    from dialeval.errors import first_few as first

    if extra:
        warn(f"{file}: {len(extra)} dialogue(s) not in the gold, counted as extra: {first(extra)}"
             + normalisation_note(extra, missing))
    if strict:
        return
    if missing:
        warn(f"{file}: {len(missing)} gold dialogue(s) missing from the run were not scored (use --strict to score "
             f"them as {worst}): {first(missing)}")
    gaps = {scale: n for scale, n in (items_missing or {}).items() if n}
    if gaps:
        warn(f"{file}: gold items missing from dialogues the run predicts were not scored: "
             + ", ".join(f"{n} of {scale}" for scale, n in gaps.items()) + f" (use --strict to score them as {worst})")


def _resolved(path: Path, name: str) -> Path:
    """``path`` with its links followed; a loop of links is an error naming it (``Path.resolve`` raises a
    RuntimeError)."""
    from dialeval.errors import DialevalError

    try:
        return path.resolve()
    except (RuntimeError, OSError):
        raise DialevalError(f"{name} {path} is a loop of symbolic links; give a file") from None


def outputs_apart(inputs: Iterable[object], outputs: dict[str, object], *,
                  folders: Iterable[str] | Mapping[str, Callable[[str], bool]] = ()) -> None:
    """An error, before any work, when an output would destroy an input or another output: it names a file that
    is an input (``evaluate run.json gold.json --per-dialogue run.json``) or a file of an input folder
    (``predict logs/ --out logs/x.log.json``); it is an input folder (``train data/ --out data``); an output
    folder (``folders``: the outputs written as a folder of files named after the inputs) holds an input file
    (``predict shards/b.jsonl --out shards``), or, for an output folder whose file names are known (``folders``
    as a mapping to a test of a file name: ``compare``'s report, its Discpower files), an input of a name it
    writes or removes there (``compare runs/comparison.json --out runs``); or it is the same path as another
    output (``predict --out y.json --scores y.json``). ``outputs``: how the user gave each (``--per-dialogue``,
    ``DST``) -> its path, or None. A new file inside an input folder (a plot, a CSV) is allowed.

    Raises
    ------
    DialevalError
        Naming the output, its path and the input or output it would overwrite.
    """
    from dialeval.errors import DialevalError

    given = [Path(os.fspath(i)) for i in inputs if isinstance(i, str | os.PathLike)]
    given = [(i, _resolved(i, "input")) for i in given if i.exists()]
    owns = dict(folders) if isinstance(folders, Mapping) else dict.fromkeys(folders, lambda _name: True)
    seen: dict[Path, str] = {}
    for name, value in outputs.items():
        if not isinstance(value, str | os.PathLike):
            continue
        out_path = Path(value)
        here = _resolved(out_path, name)
        if (other := seen.setdefault(here, name)) != name:
            raise DialevalError(f"{name} {out_path} is also given as {other}; each output needs its own path")
        for i, there in given:
            if out_path.is_file() and os.path.samefile(out_path, i):
                raise DialevalError(f"{name} {out_path} is also an input of this command ({i}); writing it "
                                    "would overwrite that input: give another path")
            if out_path.is_file() and i.is_dir() and there in here.parents:
                raise DialevalError(f"{name} {out_path} is a file of the input folder {i}; writing it would "
                                    "overwrite that input: give another path")
            if i.is_dir() and here == there:
                raise DialevalError(f"{name} {out_path} is the input folder; writing there would overwrite or "
                                    "add to that input: give another folder")
            if name in owns and i.is_file() and here == there.parent and owns[name](there.name):
                if isinstance(folders, Mapping):
                    raise DialevalError(f"{name} {out_path} holds the input {i}, a file it writes or removes there: "
                                        "give another folder")
                raise DialevalError(f"{name} {out_path} is the folder of the input {i}; writing there could "
                                    "overwrite it: give another folder")


def refuse_existing_file(path: str | os.PathLike, *, force: bool, flag: str = "--force") -> None:
    """An error, before any work, when the output ``path`` is an existing file and ``force`` is not set: a
    command that writes there would replace it (a folder is left to the writer, which refuses a non-empty one).

    Raises
    ------
    DialevalError
        Naming the file and the flag that allows replacing it.
    """
    from dialeval.errors import DialevalError

    if not force and Path(path).is_file():
        raise DialevalError(f"exists already; give another path, or {flag} to replace it", file=str(path))


def choice_enum(name: str, values: list[str] | tuple[str, ...]) -> type[Enum]:
    """An Enum for typer choices, generated from a registry list (never a second list by hand)."""
    return Enum(name, {v.replace("-", "_").upper() or "NONE": v for v in values}, type=str)  # type: ignore[return-value]


WIDTH = 80
"""Tables and the lines under them are laid out to fit a terminal of this many columns."""


def wrap(text: str, width: int = WIDTH) -> str:
    """``text`` wrapped to ``width`` columns (continuation lines indented by two spaces)."""
    return "\n".join(textwrap.wrap(text, width, subsequent_indent="  ", break_on_hyphens=False)) or text


def measure_legend(names: object) -> str:
    """The long name of each measure once, under a table that shows short labels (``JSD``): one line each.

    Examples
    --------
    >>> print(measure_legend(["jsd", "nmd", "jsd"]))
    JSD: Jensen-Shannon divergence (bits)
    NMD: normalised match distance
    """
    from dialeval.measures import get as get_measure

    return "\n".join(wrap(f"{m.upper()}: {get_measure(m).title}") for m in dict.fromkeys(names))


NEGATIVE_NUMBER = re.compile(r"-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
"""A command-line word that is a negative number (``-1``, ``-0.5``, ``-1e3``), not an option."""


def given_as(e: BaseException, command: object) -> str | None:
    """How the user of ``command`` gave the value that ``e`` refuses, or None.

    ``e`` (or the error it was raised from) refuses the value of one parameter of a library function when it
    has ``param``, the parameter's name, and ``detail``, what is wrong with the value
    (:class:`dialeval.service.errors.InvalidValue`). The command's parameter of that name (the name of its
    Python argument, e.g. ``timeout`` declared as ``--assignment-timeout``) is shown as the user gave it: an
    option by its long name (``--overlap``), an argument by its metavar (``COUNT``). So the names are mapped in
    one place, the command's declarations, never in a second list.
    """
    for err_ in (e, e.__cause__):
        param, detail = getattr(err_, "param", None), getattr(err_, "detail", None)
        if not (isinstance(param, str) and isinstance(detail, str)):
            continue
        for p in getattr(command, "params", ()):
            if p.name != param:
                continue
            if p.param_type_name == "argument":  # as the usage line shows it
                return f"{p.metavar or (p.name or '').upper()} {detail}"
            names = [o for o in p.opts if o.startswith("--")] or list(p.opts)
            return f"{names[0]} {detail}"
    return None


@contextmanager
def named_as_options(names: dict[str, str]) -> Iterator[None]:
    """Within the block, a library's refusal of one value (:func:`dialeval.errors.refused`) whose name is a key
    of ``names`` reads as the option its user typed: ``{"B =": "-B"}`` turns ``B = 0 is not allowed; ...`` into
    ``-B 0 is not allowed; ...``. Each command lists, around the calls that check its options, which of the
    library's names are its options (``alpha`` is ``--nugget-alpha`` around compare's scoring, ``--alpha``
    around its significance settings)."""
    from dialeval.errors import DialevalError

    try:
        yield
    except DialevalError as e:
        option = names.get(getattr(e, "what", None))  # type: ignore[arg-type]
        if option is None:
            raise
        raise DialevalError(f"{option} {e.detail}") from None  # type: ignore[attr-defined]


class OptionNamed(TyperCommand):
    """A command whose messages name what its user typed, and whose arguments may be negative numbers.

    - A refusal of one value (an error with ``param`` and ``detail``, see :func:`given_as`) names the option or
      argument that gave it: ``--overlap 0 is not allowed; ...`` where the library says ``overlap 0 ...``.
    - A negative number where an option could start is an argument, as argparse reads it: ``invite-teams -1``
      gives COUNT -1, refused with what is allowed, instead of click's ``No such option: -1``. (An option's value
      was always read as given: ``--count -1``.)

    Use it as ``@app.command("name", cls=OptionNamed)``.
    """

    def make_parser(self, ctx):
        parser = super().make_parser(ctx)
        process = getattr(parser, "_process_opts", None)  # click's parser, the one place options are told apart
        if not callable(process) or not getattr(parser, "allow_interspersed_args", False):
            return parser  # another click: a negative number stays an unknown option
        declared = {o for p in self.params for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))}

        def process_opts(arg: str, state) -> None:
            if NEGATIVE_NUMBER.fullmatch(arg) and arg not in declared:
                state.largs.append(arg)  # what click does with any other argument
            else:
                process(arg, state)

        parser._process_opts = process_opts
        return parser

    def invoke(self, ctx):
        from dialeval.errors import DialevalError

        try:
            return super().invoke(ctx)
        except DialevalError as e:
            named = given_as(e, self)
            if named is None:
                raise
            raise DialevalError(named) from None
