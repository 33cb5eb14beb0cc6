"""``dialeval predict``, ``dialeval train`` and ``dialeval cv``: models of the annotators' distributions."""

from __future__ import annotations

import json
import math
import shlex
from enum import StrEnum
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from dialeval.cli._common import choice_enum, err, out
from dialeval.cli._corpus_io import FROM_HELP, InFormat, load
from dialeval.errors import DialevalError, describe
from dialeval.measures import get as get_measure
from dialeval.models import LANGUAGES
from dialeval.models import kinds as _kinds  # noqa: F401  (fills the registry the choices come from)
from dialeval.models.base import KINDS
from dialeval.models.data import SUBTASK_CHOICES

Kind = choice_enum("Kind", tuple(KINDS))
Subtask = choice_enum("Subtask", SUBTASK_CHOICES)


class CVFormat(StrEnum):
    table = "table"
    json = "json"
    md = "md"


def _value(choice: object) -> str:
    return str(getattr(choice, "value", choice))


def parse_params(items: list[str] | None) -> dict:
    """``["C=2", "analyzer=char"]`` → ``{"C": 2, "analyzer": "char"}`` (values read as JSON when they parse)."""
    params: dict = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise DialevalError(f"--param {describe(item)} is not allowed; allowed are key=value pairs, e.g. C=2")
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        params[key.strip()] = value
    return params


def params_for(kind: str, params: dict) -> dict:
    """The parameters of one kind: unscoped ``key`` ones, and ``kind.key`` ones of this kind (scope removed).

    Examples
    --------
    >>> params_for("linear", {"seed_like": 1, "linear.C": 4, "position.min_turns": 2})
    {'seed_like': 1, 'C': 4}
    """
    chosen = {}
    for key, value in params.items():
        scope, dot, name = key.partition(".")
        if not dot:
            chosen[key] = value
        elif scope not in KINDS:
            raise DialevalError(f"--param {key}: {describe(scope)} is not a model kind; allowed scopes are "
                                + ", ".join(KINDS))
        elif scope == kind:
            chosen[name] = value
    return chosen


def header(column: str) -> str:
    """``quality.nmd.A`` → ``NMD A``; ``nugget.jsd`` → ``JSD`` (names from the measure registry)."""
    parts = column.split(".")
    name = get_measure(parts[1]).name.upper()
    return f"{name} {parts[2]}" if len(parts) == 3 else name


def _fmt(v: float) -> str:
    return "nan" if math.isnan(v) else f"{v:.4f}"


def _half(interval: tuple[float, float]) -> str:
    """A symmetric interval as ``±half-width``."""
    lo, hi = interval
    return "nan" if math.isnan(lo) else f"±{(hi - lo) / 2:.4f}"


def fold_rows(result) -> tuple[list[str], list[list[str]]]:
    """Header and rows of one kind's CV table: one row per fold, the mean and the 95% t-interval (±half-width)."""
    head = ["fold", "n", "seconds", *[header(c) for c in result.columns]]
    rows = [[str(f + 1), str(n), f"{s:.1f}", *[_fmt(scores[c]) for c in result.columns]]
            for f, (scores, n, s) in enumerate(zip(result.folds, result.sizes, result.seconds, strict=True))]
    rows.append(["mean", str(result.n_dialogues), f"{sum(result.seconds):.1f}",
                 *[_fmt(result.mean[c]) for c in result.columns]])
    rows.append(["95% CI", "", "", *[_half(result.interval[c]) for c in result.columns]])
    return head, rows


def summary_rows(results: list) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the summary: each kind's mean over folds ± the half-width of its 95% interval."""
    cols = results[0].columns
    head = ["model", *[header(c) for c in cols]]
    rows = []
    for r in results:
        rows.append([r.kind, *[f"{_fmt(r.mean[c])} {_half(r.interval[c])}" for c in cols]])
    return head, rows


def _title(result, source: str) -> str:
    params = ", ".join(f"{k}={v}" for k, v in result.params.items())
    return (f"{result.kind}: {result.k}-fold CV on {source} ({result.n_dialogues} dialogues, subtasks "
            f"{'+'.join(result.subtasks)}, seed {result.seed}{', ' + params if params else ''}); lower is better; "
            "n and seconds of the mean row are totals")


def _console() -> Console:
    """The output console; when stdout is not a terminal, wide enough for a full table (files, pipes)."""
    return out if out.is_terminal else Console(highlight=False, soft_wrap=True, width=max(out.width, 160))


def _rich(title: str, head: list[str], rows: list[list[str]], rule_after: int | None = None) -> Table:
    table = Table(title=title, title_justify="left")
    for i, h in enumerate(head):
        table.add_column(h, justify="left" if i == 0 else "right")
    for i, row in enumerate(rows):
        table.add_row(*row, end_section=i == rule_after)
    return table


def _markdown(title: str, head: list[str], rows: list[list[str]]) -> str:
    lines = [f"### {title}", "", "| " + " | ".join(head) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def register(app: typer.Typer) -> None:
    @app.command("predict")
    def predict_cmd(
        dialogues: Path = typer.Argument(..., help="STC-3/DialEval dialogues (JSON); annotations are ignored."),
        out_path: Path = typer.Option(..., "--out", help="Run file to write (JSON submission)."),
        model: str | None = typer.Option(None, "--model", help="A model folder saved by `dialeval train`. "
                                         "Default: the shipped multilingual model (Chinese and English)."),
        subtask: Subtask = typer.Option("both", "--subtask", help="What to predict."),  # type: ignore[valid-type]
        from_: InFormat | None = typer.Option(None, "--from", help=FROM_HELP),  # type: ignore[valid-type]
    ) -> None:
        """Predict the annotators' distributions of DIALOGUES (DQ and/or ND) and write them as a run file."""
        from dialeval.models import predict

        if model in LANGUAGES and not Path(model).exists():
            raise DialevalError(f"--model {model}: no such model folder; the shipped model serves "
                                f"{' and '.join(LANGUAGES)} alike, so leave --model out to use it")
        source = load(dialogues, from_) if from_ is not None else dialogues
        records = predict(source, model=model, subtask=_value(subtask), out=out_path)
        err.print(f"wrote predictions for {len(records)} dialogue(s) ({_value(subtask)}) to {out_path}", markup=False)

    @app.command("train")
    def train_cmd(
        data: list[Path] = typer.Argument(..., help="Annotated STC-3/DialEval dataset(s) (JSON); several files "
                                          "are trained on together (e.g. the Chinese and English files)."),
        out_dir: Path = typer.Option(..., "--out", help="Folder to save the model to (model.json, arrays.npz)."),
        kind: Kind = typer.Option("neural", "--model", help="Model kind."),  # type: ignore[valid-type]
        subtask: Subtask = typer.Option("both", "--subtask", help="What the model learns."),  # type: ignore[valid-type]
        seed: int = typer.Option(0, "--seed", help="Random seed: same seed and data, same model."),
        param: list[str] | None = typer.Option(None, "--param", help="A hyper-parameter, key=value or "
                                               "kind.key=value (repeat)."),
    ) -> None:
        """Train a model of kind --model on DATA and save it to --out (load it with `dialeval predict --model`)."""
        from dialeval.models import train

        model = train([str(d) for d in data], kind=_value(kind), subtask=_value(subtask), seed=seed,
                      params=params_for(_value(kind), parse_params(param)))
        model.info["command"] = shlex.join(["dialeval", "train", *map(str, data), "--out", str(out_dir), "--model",
                                             _value(kind), "--subtask", _value(subtask), "--seed", str(seed),
                                             *[a for p in param or [] for a in ("--param", p)]])
        folder = model.save(out_dir)
        trained = model.info.get("trained_on", {})
        err.print(f"saved {model.kind} model ({'+'.join(model.subtasks)}, seed {seed}) trained on "
                  f"{trained.get('dialogues', '?')} dialogues to {folder}", markup=False)

    @app.command("cv")
    def cv_cmd(
        data: list[Path] = typer.Argument(..., help="Annotated STC-3/DialEval dataset(s) (JSON). With several "
                                          "files, each fold's model trains on all of them and each is scored apart."),
        folds: int = typer.Option(5, "--folds", help="Number of folds (fold = sha256 of the dialogue id mod k)."),
        kinds: list[Kind] = typer.Option(["neural"], "--model", help="Model kind (repeat to compare several)."),  # type: ignore[valid-type]
        subtask: Subtask = typer.Option("both", "--subtask", help="What to cross-validate."),  # type: ignore[valid-type]
        seed: int = typer.Option(0, "--seed", help="Seed of every fold's model (the folds never depend on it)."),
        param: list[str] | None = typer.Option(None, "--param", help="A hyper-parameter (repeat): key=value "
                                               "applies to every --model, kind.key=value to one kind."),
        runs_out: Path | None = typer.Option(None, "--runs-out", help="Write cv-<kind>.json (all held-out "
                                             "predictions) and cv-<kind>-folds/fold-<f>.json here."),
        format: CVFormat = typer.Option(CVFormat.table, "--format", help="table, json or md (stdout)."),
        json_out: Path | None = typer.Option(None, "--json-out", help="Also write the results as JSON to this file."),
    ) -> None:
        """K-fold cross-validation of model kinds on DATA, scored per fold with the task's measures.

        Prints per kind: each fold's NMD and RSNOD (A, S, E), JSD and RNSS, their mean over folds and a 95%
        t-interval; with several kinds, a summary of the means.
        """
        from dialeval.models import read_dialogues
        from dialeval.models.base import kind_class
        from dialeval.models.cv import cross_validate_many

        params = parse_params(param)
        names = list(dict.fromkeys(_value(x) for x in kinds))
        for k in names:  # check every kind's settings before any work
            kind_class(k)(_value(subtask), seed, **params_for(k, params))
        corpora = [read_dialogues(d) for d in data]
        by_file: list[list] = [[] for _ in data]  # by_file[i]: the results of every kind on data[i]
        for k in names:
            for i, r in enumerate(cross_validate_many(corpora, k, folds=folds, subtask=_value(subtask), seed=seed,
                                                      params=params_for(k, params), out_dir=runs_out)):
                by_file[i].append(r)
        results = [r for rs in by_file for r in rs]
        doc = json.dumps({"source": [str(d) for d in data], "results": [r.to_dict() for r in results]}, indent=2)
        if json_out is not None:
            from dialeval.io.atomic import write_text

            write_text(json_out, doc + "\n")
        if format == CVFormat.json:
            print(doc)
            return
        console = _console()

        def show(title: str, head: list[str], rows: list[list[str]], rule_after: int | None = None) -> None:
            if format == CVFormat.md:
                console.print(_markdown(title, head, rows), markup=False)
            else:
                console.print(_rich(title, head, rows, rule_after=rule_after))

        trained = " + ".join(d.name for d in data)
        for path, rs in zip(data, by_file, strict=True):
            for r in rs:
                head, rows = fold_rows(r)
                show(_title(r, path.name) + (f"; each fold trained on {trained}" if len(data) > 1 else ""),
                     head, rows, rule_after=len(rows) - 3)
        for path, rs in zip(data, by_file, strict=True):
            if len(rs) > 1 or len(data) > 1:
                show(f"Summary: {folds}-fold CV on {path.name}"
                     + (f" (each fold trained on {trained})" if len(data) > 1 else "")
                     + ", mean over folds ± half-width of the 95% t-interval; lower is better", *summary_rows(rs))
        if runs_out is not None:
            err.print(f"wrote held-out runs to {runs_out} (compare them: dialeval compare {runs_out} --gold "
                      f"{data[0]})", markup=False)
