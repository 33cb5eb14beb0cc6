"""``dialeval admin create-collection / invite / export-chats``: chat collection (COLLECT.md, WOCHAT task 1).

The commands join the ``admin`` group (they work on the service's database directly, like the others there).
"""

from __future__ import annotations

from pathlib import Path

import typer

from dialeval.cli._common import err, out, refuse_existing_file
from dialeval.cli.admin import DbOption, _db, _service_call, command
from dialeval.errors import DialevalError
from dialeval.service.config import utcnow


@command("create-collection")
def create_collection_cmd(
    name: str = typer.Argument(..., help="Collection name (A-Z a-z 0-9 . _ -), used in URLs."),
    engine_spec: str | None = typer.Option(None, "--engine", help="The chat engine: builtin:retrieval[:CORPUS_FILE], "
                                           "builtin:echo, openai:http://HOST:PORT/v1 (with --engine-model) or "
                                           "http(s)://HOST/PATH."),
    engine_model: str = typer.Option("", help="Model name sent to an openai: engine."),
    engine_name: str | None = typer.Option(None, help="The engine's name in the logs (<system_name>, dialogue ids "
                                           "NAME00000...); default: the builtin engine's name, else 'bot'."),
    timeout_s: float = typer.Option(30.0, "--engine-timeout", help="Seconds to wait for a reply before the page "
                                    "offers Retry."),
    max_turns: int = typer.Option(20, help="Turns of a chat in all (participant and engine), 2-1000."),
    human_human: bool = typer.Option(False, "--human-human", help="People chat with each other (paired as they "
                                     "arrive) instead of with an engine."),
    database_url_: str | None = DbOption,
) -> None:
    """Create a chat collection; then make invitation codes with `dialeval admin invite NAME`."""
    from dialeval.service.collection import chats

    c = _service_call(chats.create_collection, _db(database_url_), name, engine_spec, utcnow(),
                      engine_model=engine_model, engine_name=engine_name, max_turns=max_turns,
                      human_human=human_human, timeout_s=timeout_s)
    what = "human-human" if c.human_human else f"engine {c.engine_spec} named {c.engine_name}"
    err.print(f"collection {c.name}: {what}, at most {c.max_turns} turns per chat; participants join at "
              f"/collections/{c.name} with a code from: dialeval admin invite {c.name} --count N", markup=False)


def invitation_kind(db, name: str) -> str:
    """The kind of invitation ``invite NAME`` makes: that of the collection or annotation project called NAME."""
    from dialeval.service.annotation.projects import get_project
    from dialeval.service.collection import chats
    from dialeval.service.errors import NotFound

    for kind, find in (("collection", chats.get_collection), ("annotation", get_project)):
        try:
            find(db, name)
            return kind
        except NotFound:
            pass
    raise DialevalError(f"no collection or annotation project named {name!r}; create it first (dialeval admin "
                        "create-collection or create-annotation)")


@command("invite")
def invite_cmd(name: str = typer.Argument(..., help="The collection or annotation project the codes open."),
               count: int = typer.Option(1, help="How many codes (one per person), 1-10000."),
               label: str = typer.Option("", help="A note kept with the codes (e.g. the group they went to)."),
               database_url_: str | None = DbOption) -> None:
    """Make invitation codes, printed once, one a line (only their hashes are stored)."""
    from dialeval.service import invitations

    db = _db(database_url_, create=False)
    kind = invitation_kind(db, name)
    codes = _service_call(invitations.create_invitations, db, kind, name, count, utcnow(), label=label)
    err.print(f"{len(codes)} {kind} code(s) for {name} (shown this once; each is one person's key):", markup=False)
    print("\n".join(codes))


@command("export-chats")
def export_chats_cmd(name: str = typer.Argument(...),
                     out_dir: Path = typer.Option(..., "--out", help="New folder for the WOCHAT XML files "
                                                  "(one ID.xml per chat)."),
                     unfinished: bool = typer.Option(False, "--unfinished", help="Also the chats still open "
                                                     "(participants who left without ending them)."),
                     force: bool = typer.Option(False, "--force", help="Replace the file --out names if it exists "
                                                "(a path ending in .xml writes one file; a folder is never "
                                                "replaced)."),
                     database_url_: str | None = DbOption) -> None:
    """Write the collection's ended chats as WOCHAT XML (read back by any dialeval command)."""
    from dialeval.service.collection.export import export_chats

    refuse_existing_file(out_dir, force=force)
    report = _service_call(export_chats, _db(database_url_, create=False), name, out_dir, unfinished=unfinished)
    for line in report.lines():
        err.print(line, markup=False)


@command("collection-status")
def collection_status_cmd(name: str = typer.Argument(...), database_url_: str | None = DbOption) -> None:
    """A collection's settings, its chats by status, turns, and invitation codes made and used, as JSON."""
    from dialeval.service.collection import chats

    out.print_json(data=_service_call(chats.collection_status, _db(database_url_, create=False), name))


def register(app: typer.Typer) -> None:
    """The commands are on ``admin_app`` already (added when this module is imported)."""
