"""``dialeval admin ...``: organiser commands, working on the service's database directly."""

from __future__ import annotations

from pathlib import Path

import typer

from dialeval.cli._common import OptionNamed, choice_enum, err, named_as_options, out, warn
from dialeval.cli.serve import DB_HELP
from dialeval.errors import DialevalError, describe
from dialeval.service.config import database_url, utcnow
from dialeval.service.errors import ServiceError
from dialeval.service.leaderboard.deadline import parse_deadline
from dialeval.service.leaderboard.quota import DAILY_LIMIT, TOTAL_LIMIT
from dialeval.service.leaderboard.runs import SUBTASKS

Subtask = choice_enum("Subtask", SUBTASKS)
admin_app = typer.Typer(help="Organiser commands: tasks, teams and tokens; chat collections; annotation projects.",
                        no_args_is_help=True)
DbOption = typer.Option(None, "--database-url", help=DB_HELP)


def _db(url: str | None, *, create: bool = True):
    """The service's database; ``create=False`` for a command that only reads or changes what is there (a
    missing SQLite file is then an error naming it, not a new empty database)."""
    # The service (SQLAlchemy, FastAPI) is imported when a command needs it, not at every CLI start.
    from dialeval.service.db import Database

    return Database(database_url(url), create=create)


def _service_call(fn, *args, **kwargs):
    """Run a service operation; its refusals become one-line CLI errors. The refusal stays the error's cause:
    an :class:`~dialeval.cli._common.OptionNamed` command names the option of a refused value from it."""
    try:
        return fn(*args, **kwargs)
    except ServiceError as e:
        raise DialevalError(e.message) from e


def command(name: str):
    """``@command("NAME")``: an organiser command on ``admin_app``, whose messages name the options its user typed
    and whose arguments may be negative numbers (:class:`~dialeval.cli._common.OptionNamed`)."""
    return admin_app.command(name, cls=OptionNamed)


@command("create-task")
def create_task_cmd(
    name: str = typer.Argument(..., help="Task name (A-Z a-z 0-9 . _ -), used in URLs."),
    subtask: Subtask = typer.Option(..., "--subtask", "--task", help="What the task scores: a declared task."),  # type: ignore[valid-type]
    gold: Path = typer.Option(..., help="Gold with annotations, any corpus dialeval reads: one file, or a ZIP "
                              "of its folder (DBDC); stays on the server."),
    public_fraction: float = typer.Option(0.5, help="Share of the test set scored before close, in (0, 1]."),
    seed: int | None = typer.Option(None, help="Only for a reproducible split (tests): anyone who knows the seed "
                                    "and the ids can recompute the hidden half. Default: the split is drawn from "
                                    "a secret the server generates and never shows."),
    daily_limit: int = typer.Option(DAILY_LIMIT, help="Scored runs per team per UTC day."),
    total_limit: int = typer.Option(TOTAL_LIMIT, help="Scored runs per team in all."),
    deadline: str | None = typer.Option(None, help="ISO time with zone after which runs are refused."),
    rank_by: str | None = typer.Option(None, help="Column picking a team's best run (default: the first "
                                       "column of the task's main measure)."),
    database_url_: str | None = DbOption,
) -> None:
    """Create a task from a gold file; prints the task as the API shows it."""
    from dialeval.service.leaderboard import tasks

    if gold.is_dir():
        raise DialevalError(f"--gold {gold} is a folder; give one gold file, or a ZIP of the folder (a DBDC gold "
                            "folder: zip it first)")
    if not gold.is_file():
        raise DialevalError(f"--gold {gold}: no such file")
    due = parse_deadline(deadline)  # before the database is opened (or created)
    db = _db(database_url_)
    with named_as_options({"public fraction": "--public-fraction", "seed": "--seed", "daily limit": "--daily-limit",
                           "total limit": "--total-limit", "rank-by column": "--rank-by"}):
        t = _service_call(tasks.create_task, db, name, subtask.value, gold.read_bytes(), gold.name, utcnow(),
                          public_fraction=public_fraction, seed=seed, daily_limit=daily_limit,
                          total_limit=total_limit, deadline=due, rank_by=rank_by)
    info = tasks.task_info(t)
    if t.deadline is not None and t.deadline <= utcnow():
        warn(f"task {t.name}: its deadline {t.deadline.isoformat()} has passed already: every upload will be "
             "refused (409)")
    split = "from the server's secret" if seed is None else f"from seed {seed}: reproducible, not secret"
    err.print(f"task {t.name}: {info['dialogues']} dialogues, {info['public_dialogues']} public before close "
              f"(split {split}); quota {daily_limit}/day, {total_limit} in all; ranked by {t.rank_by}", markup=False)
    out.print_json(data=info)


@command("close-task")
def close_task_cmd(name: str = typer.Argument(...), database_url_: str | None = DbOption) -> None:
    """Close a task: score every run on 100% of the test set; the leaderboard shows final scores."""
    from dialeval.service.leaderboard import tasks

    db = _db(database_url_, create=False)
    t = _service_call(tasks.close_task, db, name, utcnow())
    err.print(f"task {t.name} closed; final scores on all {t.n_dialogues} dialogues", markup=False)
    for sub_id, why in tasks.final_errors(db, t):
        err.print(f"run {sub_id} has no final score (off the final leaderboard): {why}", markup=False)


@command("export-matrix")
def export_matrix_cmd(name: str = typer.Argument(...),
                      out_dir: Path = typer.Option(..., "--out", help="Folder to write (created; must not hold "
                                                   "an earlier export)."),
                      database_url_: str | None = DbOption) -> None:
    """Write runs.txt, topics.txt, one COLUMN.matrix per score column and each run's file under --out."""
    from dialeval.service.leaderboard import export

    db = _db(database_url_, create=False)
    m = _service_call(export.export_matrix, db, name, out_dir, utcnow())
    err.print(f"{len(m['runs'])} runs x {m['task']['dialogues']} dialogues, {len(m['columns'])} matrices in "
              f"{out_dir}; compare them with: dialeval compare {out_dir}/*.json --gold GOLD", markup=False)


@command("create-admin-token")
def create_admin_token_cmd(label: str = typer.Option("", help="A note on who holds it."),
                           database_url_: str | None = DbOption) -> None:
    """Make an organiser token for /api/admin (printed once; only its hash is stored)."""
    from dialeval.service import teams

    print(_service_call(teams.create_admin_token, _db(database_url_), utcnow(), label))


@command("list-admin-tokens")
def list_admin_tokens_cmd(database_url_: str | None = DbOption) -> None:
    """The organiser tokens that work (id, label, creation time; never the token itself), as JSON."""
    from dialeval.service import teams

    out.print_json(data=teams.list_admin_tokens(_db(database_url_, create=False)))


@command("revoke-admin-token")
def revoke_admin_token_cmd(token_id: int = typer.Argument(..., help="Its id, as list-admin-tokens shows it."),
                           database_url_: str | None = DbOption) -> None:
    """Revoke an organiser token: it stops working at once."""
    from dialeval.service import teams

    gone = _service_call(teams.revoke_admin_token, _db(database_url_, create=False), token_id)
    label = f" ({gone['label']})" if gone["label"] else ""
    err.print(f"organiser token {gone['id']}{label}, made {gone['created_at']}, revoked", markup=False)


@command("new-team-token")
def new_team_token_cmd(name: str = typer.Argument(..., help="The team's name (case and width do not matter)."),
                       database_url_: str | None = DbOption) -> None:
    """Give a team a new token (a leaked one), printed once; its old token stops working at once."""
    from dialeval.service import teams

    team, token = _service_call(teams.new_team_token, _db(database_url_, create=False), name)
    err.print(f"team {team.name!r}: its new token (shown once; the old one no longer works):", markup=False)
    print(token)


@command("revoke-code")
def revoke_code_cmd(codes: list[str] = typer.Argument(..., help="Invitation codes, as they were printed."),
                    database_url_: str | None = DbOption) -> None:
    """Revoke invitation codes of any kind (team, chat collection, annotation): each stops working at once.

    What a code did stays: a team it registered keeps its token (see new-team-token); an annotator's finished
    items stay (see exclude-annotator)."""
    from dialeval.service import invitations

    db = _db(database_url_, create=False)
    now = utcnow()
    for i, code in enumerate(codes):
        try:
            inv = _service_call(invitations.revoke_code, db, code, now)
        except DialevalError as e:
            done = f"; the {i} before it {'were' if i > 1 else 'was'} revoked" if i else ""
            raise DialevalError(f"code {i + 1} ({describe(code[:8] + '...')}{done}): {e}") from e
        target = f" of {inv.target}" if inv.target else ""
        err.print(f"{inv.kind} code{target} ({code[:8]}...) revoked", markup=False)


@command("create-team")
def create_team_cmd(name: str = typer.Argument(...), affiliation: str = typer.Option(""),
                    database_url_: str | None = DbOption) -> None:
    """Register a team for someone (printed once: its token)."""
    from dialeval.service import teams

    team, token = _service_call(teams.register_team, _db(database_url_), name, affiliation, utcnow())
    err.print(f"team {team.name!r} registered; its token (shown once):", markup=False)
    print(token)


@command("invite-teams")
def invite_teams_cmd(count: int = typer.Argument(..., help="How many codes (1-10000)."),
                     label: str = typer.Option("", help="A note on whom they are for."),
                     database_url_: str | None = DbOption) -> None:
    """Make COUNT single-use team invitation codes (servers in 'invite' mode); printed once, stored hashed."""
    from dialeval.service import invitations

    codes = _service_call(invitations.create_invitations, _db(database_url_), "team", "", count, utcnow(),
                          label=label)
    err.print(f"{len(codes)} team invitation code(s), each registers one team (shown once):", markup=False)
    print("\n".join(codes))


@command("approve-team")
def approve_team_cmd(name: str = typer.Argument(..., help="The team's name (case and width do not matter)."),
                     database_url_: str | None = DbOption) -> None:
    """Approve a team (servers in 'approve' mode): its token may submit from now on."""
    from dialeval.service import teams

    team = _service_call(teams.approve_team, _db(database_url_, create=False), name, utcnow())
    err.print(f"team {team.name!r} approved", markup=False)


@command("list-teams")
def list_teams_cmd(database_url_: str | None = DbOption) -> None:
    """The teams (name, affiliation, registration time, approval), as JSON."""
    from dialeval.service import teams

    out.print_json(data=teams.list_teams(_db(database_url_, create=False)))


@command("list-tasks")
def list_tasks_cmd(database_url_: str | None = DbOption) -> None:
    """The tasks, as JSON."""
    from dialeval.service.leaderboard import tasks

    out.print_json(data=[tasks.task_info(t) for t in tasks.list_tasks(_db(database_url_, create=False))])


def register(app: typer.Typer) -> None:
    app.add_typer(admin_app, name="admin")
