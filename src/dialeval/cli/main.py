"""Entry point: builds the typer app from the command modules and turns user errors into one line."""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import re
import sys

import click
import typer

from dialeval.cli._common import warnings_as_lines
from dialeval.errors import DialevalError, DialevalWarning, describe, quote

HELP_OPTIONS = ("-h", "--help")

app = typer.Typer(
    name="dialeval",
    help="Evaluate dialogue systems against the distribution of many annotators' judgements.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": list(HELP_OPTIONS)},
)

# Each module adds its commands to `app` through its `register(app)`; a new command group is one more
# line in this tuple (module names under dialeval.cli), nothing else.
COMMAND_MODULES: tuple[str, ...] = (
    "evaluate",
    "measures",
    "demo",
    "compare",
    "stats",
    "corpus",
    "gold",
    "correlate",
    "serve",
    "admin",
    "collect",
    "annotate",
    "client",
    "models",
    "summarize",
)

for _name in COMMAND_MODULES:
    importlib.import_module(f"dialeval.cli.{_name}").register(app)


def _print_version(value: bool) -> None:
    if value:
        from dialeval import __version__
        typer.echo(f"dialeval {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", help="Print the version and exit.", is_eager=True,
                                       callback=_print_version)) -> None:
    """Evaluate dialogue systems against the distribution of many annotators' judgements."""


# Typer >= 0.2x vendors click (its exceptions derive from typer.TyperException); older typers raise click's own.
_USAGE_ERRORS: tuple[type[BaseException], ...] = (typer.TyperException, click.exceptions.ClickException)
_ABORTS: tuple[type[BaseException], ...] = (typer.Abort, click.exceptions.Abort)
_EXITS: tuple[type[BaseException], ...] = (typer.Exit, click.exceptions.Exit)


def _fail(message: str) -> int:
    """Print ``error: MESSAGE`` on one line: each line break, with the spaces around it, becomes one space; other
    runs of spaces stay (a value quoted in the message, such as an id of two spaces, is shown as it is)."""
    print(f"error: {_LINE_BREAK.sub(' ', str(message).strip())}", file=sys.stderr)
    return 2


_LINE_BREAK = re.compile(r"[ \t]*(?:\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029])\s*")
"""A line break (any that ``str.splitlines`` knows) and the blanks around it."""


_INVALID = re.compile(r"Invalid value for '(?P<name>[^']+)'(?: / '[^']+')*: (?:Value error, )?(?P<rest>.*)", re.S)
"""A parser's refusal of an option's value (an option with aliases is named ``'--alpha' / '--nugget-alpha'``)."""
_NOT_A_CHOICE = re.compile(r"(?P<value>'.*'|\".*\") is not one of (?P<choices>'.*')\.?", re.S)
_PARSED_AS = {"int_parsing": "integers", "float_parsing": "numbers", "bool_parsing": "true or false"}
"""What an option of a number type allows, by the type of the error its parser raised."""


def _usage_message(e: BaseException) -> str:
    """A usage error's one-line message. A value an option cannot take is said as the rest of dialeval says it,
    ``--to: 'dstc9' is not allowed; allowed are stc3, wochat, dbdc`` or ``--folds: 'x' is not allowed; allowed
    are integers``, instead of the parser's ``Invalid value for '--to': Value error, 'dstc9' is not one of
    'stc3', 'wochat', 'dbdc'.`` or ``... Input should be a valid integer ...``; other messages pass as they are."""
    fmt = getattr(e, "format_message", None)
    message = fmt() if callable(fmt) else str(e)
    head = _INVALID.fullmatch(message.strip())
    if head is None:
        return message
    choice = _NOT_A_CHOICE.fullmatch(head["rest"])
    if choice:
        allowed = ", ".join(re.findall(r"'([^']*)'", choice["choices"]))
        value = quote(choice["value"])  # the parser's repr of the value, quotes included
        return f"{head['name']}: {value} is not allowed; allowed are {allowed}"
    errors = getattr(e.__cause__, "errors", None)  # the parser's own record of the value it refused
    refused = next(iter(errors()), {}) if callable(errors) else {}
    allowed = _PARSED_AS.get(refused.get("type"))
    if allowed and "input" in refused:
        return f"{head['name']}: {describe(refused['input'])} is not allowed; allowed are {allowed}"
    return message


LONG_CHOICES = 22
"""A choice option whose ``<a|b|c>`` is longer than this shows ``<choice>`` (its help lists the choices)."""


def _tidy_help(cmd: click.Command) -> click.Command:
    """Help that reads as a command line: a flag shows no value (Typer >= 0.2x prints ``--strict <bool>``), an
    argument shows its NAME (not ``{name}``), and a long list of choices shows ``<choice>`` with the choices in
    its help text (a narrow terminal broke ``<stc3|wochat|...>`` mid-word)."""
    for p in cmd.params:
        if p.param_type_name == "argument" and p.metavar is None:
            p.metavar = (p.name or "").upper()  # the usage line adds "..." to one of several values
        elif getattr(p, "is_flag", False) and not getattr(p, "count", False):
            p.metavar = ""
        elif p.metavar is None and (choices := _choices(p)) \
                and len("|".join(choices)) + (8 if getattr(p, "multiple", False) else 2) > LONG_CHOICES:  # <list[..]>
            p.metavar = "<choice>"
            help_text = getattr(p, "help", None) or ""
            if not all(c in help_text for c in choices):
                p.help = f"{help_text.rstrip()} Choices: {', '.join(choices)}.".lstrip()
    if cmd.help:
        cmd.help = reflow(cmd.help)
    try:  # the help option is made (and cached) on first use: made here, it is tidied like the other flags
        ctx = cmd.context_class(cmd, help_option_names=list(HELP_OPTIONS))
        helper = cmd.get_help_option(ctx)
        if helper is not None and getattr(helper, "is_flag", False):
            helper.metavar = ""
    except (AttributeError, TypeError):  # a click or typer without this API: their help shows no value anyway
        pass
    for sub in getattr(cmd, "commands", {}).values():
        _tidy_help(sub)
    return cmd


def reflow(text: str) -> str:
    r"""A docstring's paragraphs each made one line, so that the terminal wraps them at its own width (the source's
    line breaks showed mid-sentence); a paragraph of list items or indented lines is kept as written.

    >>> reflow("Score a run\nagainst gold.\n\n- one\n- two")
    'Score a run against gold.\n\n- one\n- two'
    """
    paragraphs = [p.strip("\n") for p in inspect.cleandoc(text).split("\n\n")]
    return "\n\n".join(p if any(line.startswith((" ", "\t", "- ", "* ")) or line[:2].rstrip(".").isdigit()
                                for line in p.splitlines())
                       else " ".join(p.split("\n")) for p in paragraphs if p)


def _choices(p: click.Parameter) -> list[str]:
    """The values a choice parameter allows (Typer >= 0.2x keeps them on a type descriptor, click on the type)."""
    desc = getattr(p, "type_descriptor", None)
    given = desc.choices if getattr(desc, "is_choice", False) else getattr(getattr(p, "type", None), "choices", None)
    return [str(getattr(c, "value", c)) for c in given or ()]


INTERRUPTED = 130
"""The exit status of a run stopped by Ctrl-C (128 + SIGINT, as shells report it), after ``error: interrupted``."""
BROKEN_PIPE = 141
"""The exit status when the reader of the output went away (``dialeval measures | head -1``): 128 + SIGPIPE,
silent, as Unix tools end then."""


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return the exit status (0 ok, 1 a failed check, 2 a user error, :data:`INTERRUPTED`,
    :data:`BROKEN_PIPE`)."""
    try:
        with warnings_as_lines(DialevalWarning):  # dialeval's own warnings read as `warning: ...` lines
            rv = _tidy_help(typer.main.get_command(app)).main(args=argv, prog_name="dialeval", standalone_mode=False)
    except DialevalError as e:
        return _fail(str(e))
    except _EXITS as e:
        rv = int(getattr(e, "exit_code", 0) or 0)
    except _ABORTS:
        return _fail("aborted")
    except _USAGE_ERRORS as e:
        message = _usage_message(e)
        if not message.strip() and type(e).__name__ == "NoArgsIsHelpError":
            return 0  # a bare `dialeval` (or command group): the help was printed, nothing went wrong
        return _fail(message)
    except BrokenPipeError:
        return _broken_pipe()
    except OSError as e:   # a path that exists as the wrong kind, a full disk, a refused connection
        return _fail(f"{e.filename}: {e.strerror}" if e.filename else str(e))
    except KeyboardInterrupt:
        rv = INTERRUPTED
    except MemoryError:
        return _fail("not enough memory for this run (fewer resamples, runs or dialogues may fit)")
    except SystemExit as e:   # click's and rich's answer to a broken pipe: exit 1, stdout muted first
        if e.code == 1 and _stdout_muted():
            return _broken_pipe()
        raise
    if rv == INTERRUPTED:   # Ctrl-C, as typer reports it: said, not silent (a folder --out resumes when run again)
        print("error: interrupted", file=sys.stderr)
    return rv if isinstance(rv, int) else 0


def _stdout_muted() -> bool:
    """Whether stdout was muted after a broken pipe: click wraps it (``PacifyFlushWrapper``, typer's vendored click
    too), rich points its descriptor at the null device."""
    if type(sys.stdout).__name__ == "PacifyFlushWrapper":
        return True
    try:
        return os.path.samestat(os.fstat(sys.stdout.fileno()), os.stat(os.devnull))
    except (OSError, ValueError, AttributeError):   # no descriptor (a captured stdout)
        return False


def _broken_pipe() -> int:
    """The reader of the output went away: end quietly (nothing more can be shown), as Unix tools do."""
    with contextlib.suppress(OSError):   # later flushes of the closed stdout fail too: send them nowhere
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return BROKEN_PIPE


def main() -> None:
    sys.exit(run())
