"""Entry point: builds the typer app from the command modules and turns user errors into one line."""

from __future__ import annotations

import importlib
import re
import sys

import click
import typer

from dialeval.errors import DialevalError, describe, quote

app = typer.Typer(
    name="dialeval",
    help="Evaluate dialogue systems against the distribution of many annotators' judgements.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
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
    print(f"error: {' '.join(str(message).split())}", file=sys.stderr)
    return 2


_INVALID = re.compile(r"Invalid value for '(?P<name>[^']+)': (?:Value error, )?(?P<rest>.*)", re.S)
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


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return the exit status (0 ok, 1 a failed check, 2 a user error)."""
    try:
        rv = app(args=argv, prog_name="dialeval", standalone_mode=False)
    except DialevalError as e:
        return _fail(str(e))
    except _EXITS as e:
        return int(getattr(e, "exit_code", 0) or 0)
    except _ABORTS:
        return _fail("aborted")
    except _USAGE_ERRORS as e:
        message = _usage_message(e)
        if not message.strip() and type(e).__name__ == "NoArgsIsHelpError":
            return 0  # a bare `dialeval` (or command group): the help was printed, nothing went wrong
        return _fail(message)
    except OSError as e:   # a path that exists as the wrong kind, a full disk, a refused connection
        return _fail(f"{e.filename}: {e.strerror}" if e.filename else str(e))
    except KeyboardInterrupt:
        return _fail("interrupted")
    return rv if isinstance(rv, int) else 0


def main() -> None:
    sys.exit(run())
