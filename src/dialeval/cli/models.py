"""``dialeval predict``, ``dialeval train`` and ``dialeval cv``: models of the annotators' distributions."""

from __future__ import annotations

import json
import math
import os
import shlex
from enum import StrEnum
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from dialeval.cli._common import choice_enum, err, outputs_apart, tables, warn, warnings_as_lines
from dialeval.cli._corpus_io import FROM_HELP, NAMES_HELP, InFormat, NamePolicy, fmt_num, load
from dialeval.errors import DialevalError, describe
from dialeval.io.atomic import check_output_file, check_output_folder, make_folder, output_format
from dialeval.io.jsonarray import json_text
from dialeval.measures import get as get_measure
from dialeval.models import kinds as _kinds  # noqa: F401  (fills the registry the choices come from)
from dialeval.models.base import KINDS, check_model_folder
from dialeval.models.data import SUBTASK_CHOICES
from dialeval.models.leakage import RepeatedDialoguesWarning
from dialeval.report.labels import directions_text

Kind = choice_enum("Kind", tuple(KINDS))


def params_epilog() -> str:
    """Each kind's --param names, from the kinds' declarations (shown under train's and cv's help)."""
    from dialeval.models.base import COMMON_DEFAULTS, kind_class

    kinds = "; ".join(f"{k}: {', '.join(kind_class(k).defaults)}" for k in KINDS if kind_class(k).defaults)
    return f"--param names: every kind: {', '.join(COMMON_DEFAULTS)}; {kinds}."
Subtask = choice_enum("Subtask", SUBTASK_CHOICES)


class PredictTo(StrEnum):
    run = "run"
    dbdc = "dbdc"


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
        if key.strip() in params:
            raise DialevalError(f"--param {key.strip()} is given twice ({describe(params[key.strip()])} and "
                                f"{describe(value)}); give each parameter once")
        params[key.strip()] = value
    return params


def check_scopes(params: dict, kinds: list[str]) -> None:
    """An error for a ``kind.key`` parameter of a kind this command does not run (it would be ignored).

    >>> check_scopes({"linear.C": 4}, ["neural"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dialeval.errors.DialevalError: --param linear.C applies to kind linear, which this command does not run ...
    """
    for key in params:
        scope, dot, _ = key.partition(".")
        if dot and scope in KINDS and scope not in kinds:
            raise DialevalError(f"--param {key} applies to kind {scope}, which this command does not run "
                                f"(--model {', '.join(kinds)})")


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
    """``quality.nmd.A`` → ``NMD A``; ``nugget.jsd`` → ``JSD``; ``breakdown/jsd`` → ``breakdown JSD``
    (names from the measure registry)."""
    if "/" in column:
        scale, m = column.rsplit("/", 1)
        return f"{scale} {get_measure(m).name.upper()}"
    parts = column.split(".")
    name = get_measure(parts[1]).name.upper()
    return f"{name} {parts[2]}" if len(parts) == 3 else name


def _fmt(v: float) -> str:
    return fmt_num(v, 4)


def _half(interval: tuple[float, float]) -> str:
    """A symmetric interval as ``±half-width`` (``n/a`` when undefined, e.g. with one value)."""
    lo, hi = interval
    return "n/a" if not (math.isfinite(lo) and math.isfinite(hi)) else f"±{(hi - lo) / 2:.4f}"


def fold_rows(result) -> tuple[list[str], list[list[str]]]:
    """Header and rows of one kind's CV table: one row per fold, the mean and the 95% t-interval (±half-width)."""
    head = ["fold", "n", "seconds", *[header(c) for c in result.columns]]
    rows = [[str(f + 1), str(n), f"{s:.1f}", *[_fmt(scores[c]) for c in result.columns]]
            for f, (scores, n, s) in enumerate(zip(result.folds, result.sizes, result.seconds, strict=True))]
    rows.append(["mean", str(result.n_dialogues), f"{sum(result.seconds):.1f}",
                 *[_fmt(result.mean[c]) for c in result.columns]])
    rows.append(["95% CI", "", "", *[_half(result.interval[c]) for c in result.columns]])
    return head, rows


WIDE = 12
"""Score columns above which a CV table is printed transposed (a row per scale and measure: DSTC9 has 44)."""


def transposed(head: list[str], rows: list[list[str]]) -> tuple[list[str], list[list[str]]]:
    """The table with rows and columns swapped: the first column's cells become the header."""
    return [head[0], *[r[0] for r in rows]], [[h, *[r[j] for r in rows]] for j, h in enumerate(head) if j]


def summary_rows(results: list) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the summary: each kind's mean over folds ± the half-width of its 95% interval."""
    cols = results[0].columns
    head = ["model", *[header(c) for c in cols]]
    rows = []
    for r in results:
        rows.append([r.kind, *[f"{_fmt(r.mean[c])} {_half(r.interval[c])}" for c in cols]])
    return head, rows


def _title(result, source: str, wide: bool = False) -> str:
    params = ", ".join(f"{k}={v}" for k, v in result.params.items())
    what = f"subtasks {'+'.join(result.subtasks)}" if result.subtasks else \
        "scales " + ", ".join(dict.fromkeys(c.rsplit("/", 1)[0] for c in result.columns))
    return (f"{result.kind}: {result.k}-fold CV on {source} ({result.n_dialogues} dialogues, {what}, "
            f"seed {result.seed}{', ' + params if params else ''}); {directions_text(result.columns)}; "
            f"n and seconds of the mean {'column' if wide else 'row'} are totals")


def _fits(console: Console, head: list[str], rows: list[list[str]]) -> bool:
    """Whether the table's cells fit the console's width uncut."""
    from rich.measure import Measurement

    wide_open = console.options.update_width(10_000)  # measured unbounded: a table's measure is cut to the width
    return Measurement.get(console, wide_open, _rich("", head, rows)).maximum <= console.width


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


def _turn_corpus(source: str, from_) -> bool:
    """Whether ``source`` is one corpus of a turn-level format (DBDC, WOCHAT, ConTurE, DSTC9), not STC-3 shards."""
    from dialeval.io.detect import detect

    if from_ is not None:
        return _value(from_) != "stc3"
    try:
        return Path(source).exists() and detect(source) != "stc3"
    except DialevalError:    # JSON Lines, gzip, globs: the streaming reader's shards
        return False


def _predicted_scales(records: list[dict]) -> str:
    """``scales a, b``: the scales of a per-item run's dialogues and turns, in order of appearance."""
    return "scales " + ", ".join(dict.fromkeys(k for r in records for item in (r, *r.get("turns", []))
                                               for k, v in item.items() if isinstance(v, dict) and k != "labels"))


def _turn_scores(records: list[dict], source: Path) -> list[dict]:
    """``--scores``: each predicted turn's score; an error naming the predicted scales when none has one."""
    from dialeval.models.transfer import turn_scores

    scores = turn_scores(records)
    if records and not any(r["turns"] for r in scores):
        from dialeval.tasks import TASKS

        ordered = ", ".join(s for t in TASKS.values() if t.good_to_bad for s in t.scales)
        raise DialevalError("--scores: the predictions have no turn-level scale ordered from good to bad "
                            f"({ordered}), so no turn score; this model predicts {_predicted_scales(records)}",
                            file=str(source))
    return scores


def check_subtask(subtask: str, corpora: list) -> None:
    """An error for ``--subtask quality``/``nugget`` on a corpus without STC-3's subtasks (it would be ignored)."""
    from dialeval.models.data import has_subtasks

    if subtask != "both":
        for c in corpora:
            if not has_subtasks(c):
                raise DialevalError(f"--subtask {subtask} applies to STC-3 dialogues (DQ and ND); {c.source} is a "
                                    f"{c.format} corpus, whose scales are learnt and predicted all at once: leave "
                                    "--subtask out")


def _predict_one(source: Path, out_path: Path, model: str | None, subtask: str, to: PredictTo,
                 scores_out: Path | None, from_, names) -> None:
    """One input predicted in this process: a run file, DBDC3 labels files and/or turn scores."""
    from dialeval.models import predict
    from dialeval.models.data import has_subtasks
    from dialeval.models.leakage import TrainingDataWarning

    corpus = load(source, from_, names)
    check_subtask(subtask, [corpus])
    turn_level = not has_subtasks(corpus)
    if (to == PredictTo.dbdc or scores_out is not None) and not turn_level:
        given = " and ".join(o for o, on in (("--to dbdc", to == PredictTo.dbdc), ("--scores", scores_out)) if on)
        raise DialevalError(f"{given}: for turn-level scales (DBDC, WOCHAT, ConTurE); these are STC-3 dialogues, "
                            "predicted as a run (leave it out)")
    if to == PredictTo.dbdc:  # before the work: the run holds the corpus's own turn scales, when it has any
        from dialeval.io.dbdc import BREAKDOWN

        own = [s.name for s in corpus.scales_at("turn")]
        if own and BREAKDOWN not in own:
            raise DialevalError(f"--to dbdc writes DBDC3's O/T/X {BREAKDOWN} scale only, and the run would hold this "
                                f"corpus's turn-level scale(s) {', '.join(map(repr, own))}: leave --to dbdc out to "
                                "write the run in dialeval's layout", file=str(source))
    with warnings_as_lines(TrainingDataWarning):
        records = predict(corpus, model=model, subtask=subtask)
    scores = _turn_scores(records, source) if scores_out is not None else None  # refused before anything is written
    if scores_out is not None:  # its folders are made, as --out's are, before either file is written
        make_folder(scores_out.parent, "--scores")
    if to == PredictTo.run:
        from dialeval.io.runs import write_run

        make_folder(out_path.parent, "--out")  # a run file's folders are made, as a folder --out's are
        write_run(records, str(out_path))
    if to == PredictTo.dbdc:
        from dialeval.io.turnruns import write_dbdc_labels

        files = write_dbdc_labels(records, str(out_path))
        err.print(f"wrote {len(files)} DBDC3 labels file(s) to {out_path}", markup=False)
    if scores_out is not None:
        from dialeval.io.atomic import write_text

        write_text(scores_out, json_text(scores, indent=None) + "\n")
        err.print(f"wrote turn scores to {scores_out}", markup=False)
    what = subtask if not turn_level else _predicted_scales(records)
    if to == PredictTo.run:
        err.print(f"wrote predictions for {len(records)} dialogue(s) ({what}) to {out_path}", markup=False)


def _say_runs(runs_out: Path | None, data: list[Path], corpora: list) -> None:
    """Where cv wrote the held-out runs, and the compare command of each file's."""
    if runs_out is None:
        return
    from dialeval.models.cv import folder_names

    subs = [runs_out] if len(data) == 1 else [runs_out / n for n in folder_names(corpora)]
    err.print(f"wrote held-out runs to {runs_out} (compare them: "
              + "; ".join(f"dialeval compare {sub} --gold {d}" for sub, d in zip(subs, data, strict=True)) + ")",
              markup=False)


def register(app: typer.Typer) -> None:
    @app.command("predict")
    def predict_cmd(
        dialogues: list[str] = typer.Argument(..., help="Dialogues of any corpus dialeval reads (STC-3, DBDC, "
                                              "WOCHAT, ConTurE, DSTC9; annotations are not used, but are read "
                                              "and checked as any reader does). With a folder "
                                              "--out: STC-3 JSON arrays or JSON Lines, gzip'ed or not; files, "
                                              "folders or glob patterns."),
        out_given: str = typer.Option(..., "--out", help="One run file: a name ending in .json, or any name for "
                                      "one corpus other than STC-3. With --to dbdc: a folder of DBDC3 "
                                      "*.labels.json. Otherwise a folder: one JSONL shard per input shard plus "
                                      "manifest.json (resumable; STC-3)."),
        model: str | None = typer.Option(None, "--model", help="A model folder saved by `dialeval train`. "
                                         "Default: the shipped multilingual STC-3 model for STC-3 dialogues, "
                                         "the shipped English open-domain model (breakdown) for any other."),
        subtask: Subtask = typer.Option("both", "--subtask", help="STC-3 only: what to predict."),  # type: ignore[valid-type]
        to: PredictTo = typer.Option(PredictTo.run, "--to", help="run (dialeval's layout) or dbdc (DBDC3's "
                                     "*.labels.json with the hard label; turn scale breakdown only)."),
        scores_out: Path | None = typer.Option(None, "--scores", help="Also write each turn's score (expected "
                                               "value, 0 worst .. 2 best) as JSON for `dialeval correlate --scores`."),
        from_: InFormat | None = typer.Option(None, "--from", help=FROM_HELP + " (single-input output only)"),  # type: ignore[valid-type]
        names: NamePolicy = typer.Option("error", "--wochat-names", help=NAMES_HELP),  # type: ignore[valid-type]
        scheduler: str | None = typer.Option(None, "--scheduler", help="Predict on Dask: local (a LocalCluster) "
                                             "or a scheduler address tcp://HOST:8786. Default: in this process."),
        workers: int | None = typer.Option(None, "--workers", help="Worker processes of --scheduler local "
                                         "(default: $DIALEVAL_THREADS, else one per CPU)."),
        fail_fast: bool = typer.Option(False, "--fail-fast", help="Stop at the first invalid dialogue (default: "
                                       "write it to OUT/rejects/ and go on)."),
    ) -> None:
        """Predict the annotators' distributions of DIALOGUES.

        STC-3 dialogues: DQ and/or ND. Any other corpus: the distribution of each turn-level scale the model
        knows (or a compatible one: breakdown O/T/X = validity VALID/ACCEPTABLE/INVALID = impression 2/1/0).

        With a folder --out (STC-3): streamed, shard by shard, in bounded memory; re-running resumes (finished
        shards are skipped); the output is byte-identical in-process and on a Dask cluster.
        """
        if out_given == "":  # Path("") is the current folder
            raise DialevalError("--out '' is empty; give a run file (NAME.json) or a folder for the output shards")
        out_path = Path(out_given)   # a str option: Path() drops the trailing "/" that says "a folder"
        outputs_apart(dialogues, {"--out": out_path, "--scores": scores_out},
                      folders=["--out"] if out_path.suffix.lower() != ".json" else [])
        if scores_out is not None:
            check_output_file(scores_out)
            output_format(scores_out, ("json",), what="--scores")
        if model is not None and not Path(model).exists():
            hint = f" ({model!r} is a model kind: train it first with `dialeval train --model {model}`)" \
                if model in KINDS else ""
            raise DialevalError(f"--model {model}: no such model folder; give a folder saved by `dialeval train`, "
                                "or leave --model out for the shipped default (STC-3 dialogues, Chinese or "
                                "English: the multilingual model; any other corpus: the English open-domain one)"
                                + hint)
        single = to == PredictTo.dbdc or scores_out is not None or (
            out_path.suffix.lower() == ".json" and not out_path.is_dir()) or (
            len(dialogues) == 1 and scheduler is None and workers is None and _turn_corpus(dialogues[0], from_))
        if single:
            if len(dialogues) != 1 or scheduler is not None or workers is not None:
                raise DialevalError(f"--out {out_path}: a run file (or --to dbdc / --scores) is written from one "
                                    f"input in this process (received {len(dialogues)} input(s)"
                                    + (", --scheduler/--workers" if scheduler or workers else "")
                                    + "); for several inputs or --scheduler give a folder --out")
            if to == PredictTo.dbdc and out_path.is_dir() and any(out_path.iterdir()):
                raise DialevalError("the output folder exists and is not empty (an earlier run's *.labels.json "
                                    "would be scored with these); give a new folder", file=str(out_path))
            if to != PredictTo.dbdc:
                if out_given.endswith(("/", os.sep)):
                    why = "with --scores, one input's" if scores_out is not None else \
                        "one corpus other than STC-3: its"
                    raise DialevalError(f"--out {out_given} ends in / (a folder), but {why} predictions are one "
                                        "run file; give a file name such as "
                                        f"{out_path / (Path(dialogues[0]).stem or 'run')}.json")
                check_output_file(out_path)
            _predict_one(Path(dialogues[0]), out_path, model, _value(subtask), to, scores_out, from_, names)
            return
        if from_ is not None:
            raise DialevalError("--from is for a single input written to a run file (--out NAME.json); a folder "
                                "--out reads STC-3 arrays and JSON Lines")
        from dialeval.pipeline import Plan, run_plan

        plan = Plan(dialogues, out_path, model, _value(subtask))
        manifest = run_plan(plan, scheduler=scheduler, workers=workers, fail_fast=fail_fast)
        t = manifest["totals"]
        err.print(f"wrote {t['shards'] - plan.skipped} shard(s) to {out_path} ({plan.skipped} already done, "
                  "skipped); "
                  f"{t['dialogues']} dialogue(s) in all its shards, {t['rejected']} rejected"
                  + (f" (see {out_path / 'rejects'})" if t["rejected"] else ""), markup=False)
        if t["in_training"]:
            from dialeval.models.leakage import message

            examples = [i for e in manifest["shards"] for i in e.get("in_training_examples", [])]
            warn(message(t["in_training"], t["dialogues"], examples) + f" (counted in {out_path / 'manifest.json'})")

    @app.command("train", epilog=params_epilog())
    def train_cmd(
        data: list[Path] = typer.Argument(..., help="Annotated corpus/corpora: STC-3 (JSON), or any "
                                          "corpus with turn or dialogue labels (DBDC, WOCHAT, ConTurE, DSTC9); "
                                          "several files "
                                          "are trained on together (e.g. the Chinese and English files)."),
        out_dir: Path = typer.Option(..., "--out", help="Folder to save the model to (model.json, arrays.npz)."),
        kind: Kind = typer.Option("neural", "--model", help="Model kind."),  # type: ignore[valid-type]
        subtask: Subtask = typer.Option("both", "--subtask", help="STC-3 only: what the model learns."),  # type: ignore[valid-type]
        seed: int = typer.Option(0, "--seed", help="Random seed: same seed and data, same model."),
        param: list[str] | None = typer.Option(None, "--param", help="A hyper-parameter, key=value or "
                                               "kind.key=value (repeat)."),
        from_: InFormat | None = typer.Option(None, "--from", help=FROM_HELP),  # type: ignore[valid-type]
        names: NamePolicy = typer.Option("error", "--wochat-names", help=NAMES_HELP),  # type: ignore[valid-type]
    ) -> None:
        """Train a model of kind --model on DATA and save it to --out (load it with `dialeval predict --model`)."""
        from dialeval.models import train

        given = parse_params(param)
        check_scopes(given, [_value(kind)])
        params = params_for(_value(kind), given)
        outputs_apart(data, {"--out": out_dir}, folders=["--out"])
        check_output_folder(out_dir, "a model")  # before the training, not after it
        check_model_folder(out_dir)
        corpora = [load(d, from_, names) for d in data]
        check_subtask(_value(subtask), corpora)
        with warnings_as_lines(RepeatedDialoguesWarning):
            model = train(corpora, kind=_value(kind), subtask=_value(subtask), seed=seed, params=params)
        reading = [*(["--from", _value(from_)] if from_ is not None else []),
                   *(["--wochat-names", _value(names)] if _value(names) != "error" else [])]
        model.info["command"] = shlex.join(["dialeval", "train", *map(str, data), "--out", str(out_dir), "--model",
                                             _value(kind), "--subtask", _value(subtask), "--seed", str(seed),
                                             *[a for p in param or [] for a in ("--param", p)], *reading])
        replacing = (Path(out_dir) / "model.json").is_file()
        folder = model.save(out_dir)
        trained = model.info.get("trained_on", {})
        what = (f"scale{'s' * (len(model.scales) > 1)} " + ", ".join(model.scales)) if model.scales \
            else "subtasks " + ", ".join(model.subtasks)
        n = trained.get("dialogues", "?")
        err.print(f"saved a {model.kind} model of {what} (seed {seed}), trained on {n} dialogue{'s' * (n != 1)}, "
                  f"to {folder}" + (" (replacing the model saved there; its other files are kept)" if replacing
                                    else ""), markup=False)

    @app.command("cv", epilog=params_epilog())
    def cv_cmd(
        data: list[Path] = typer.Argument(..., help="Annotated corpus/corpora (STC-3, DBDC, WOCHAT, "
                                          "ConTurE, DSTC9...). With several files, each fold's model trains on all "
                                          "of them and each is scored apart."),
        folds: int = typer.Option(5, "--folds", help="Number of folds (fold = sha256 of the dialogue id mod k)."),
        kinds: list[Kind] = typer.Option(["neural"], "--model", help="Model kind (repeat to compare several)."),  # type: ignore[valid-type]
        subtask: Subtask = typer.Option("both", "--subtask", help="STC-3 only: what to cross-validate."),  # type: ignore[valid-type]
        seed: int = typer.Option(0, "--seed", help="Seed of every fold's model (the folds never depend on it)."),
        param: list[str] | None = typer.Option(None, "--param", help="A hyper-parameter (repeat): key=value "
                                               "applies to every --model, kind.key=value to one kind."),
        runs_out: Path | None = typer.Option(None, "--runs-out", help="Write cv-<kind>.json (all held-out "
                                             "predictions) here, and fold-<f>.json in cv-<kind>-folds/; with several "
                                             "files, in one sub-folder per file (named after it)."),
        format: CVFormat = typer.Option(CVFormat.table, "--format", help="table, json or md (stdout)."),
        json_out: Path | None = typer.Option(None, "--json-out", help="Also write the results as JSON to this file."),
        from_: InFormat | None = typer.Option(None, "--from", help=FROM_HELP),  # type: ignore[valid-type]
        wochat_names: NamePolicy = typer.Option("error", "--wochat-names", help=NAMES_HELP),  # type: ignore[valid-type]
    ) -> None:
        """K-fold cross-validation of model kinds on DATA, scored per fold with the task's measures.

        Prints per kind: each fold's scores with the measures of the corpus's tasks (STC-3: NMD and RSNOD of
        A, S, E, JSD and RNSS of ND; DBDC, WOCHAT, ConTurE, DSTC9: each scale's measures), their mean over folds
        and a 95% t-interval; with several kinds, a summary of the means.
        """
        from dialeval.models.base import kind_class
        from dialeval.models.cv import check_folds, cross_validate_many

        outputs_apart(data, {"--json-out": json_out, "--runs-out": runs_out})
        if json_out is not None:  # every output checked before the folds are trained, not after
            check_output_file(json_out)
        if runs_out is not None:
            check_output_folder(runs_out, "the held-out runs")

        params = parse_params(param)
        names = list(dict.fromkeys(_value(x) for x in kinds))
        check_scopes(params, names)
        for k in names:  # check every kind's settings before any work
            kind_class(k)(_value(subtask), seed, **params_for(k, params))
        check_folds(folds, name="--folds")
        corpora = [load(d, from_, wochat_names) for d in data]
        for d, c in zip(data, corpora, strict=True):  # before any fold is built (--folds may be any integer)
            check_folds(folds, len(c), name="--folds", file=str(d))
        check_subtask(_value(subtask), corpora)
        by_file: list[list] = [[] for _ in data]  # by_file[i]: the results of every kind on data[i]
        with warnings_as_lines(RepeatedDialoguesWarning):  # said once, not once per kind
            for k in names:
                for i, r in enumerate(cross_validate_many(corpora, k, folds=folds, subtask=_value(subtask),
                                                          seed=seed, params=params_for(k, params), out_dir=runs_out)):
                    by_file[i].append(r)
        results = [r for rs in by_file for r in rs]
        doc = json_text({"source": [str(d) for d in data], "results": [r.to_dict() for r in results]})
        if json_out is not None:
            from dialeval.io.atomic import write_text

            write_text(json_out, doc + "\n")
        if format == CVFormat.json:
            typer.echo(doc)
            _say_runs(runs_out, data, corpora)
            return
        console = tables  # the terminal's width, or 160 columns into a file or a pipe

        def show(title: str, head: list[str], rows: list[list[str]], rule_after: int | None = None) -> None:
            if format == CVFormat.md:
                console.print(_markdown(title, head, rows), markup=False)
            else:
                console.print(_rich(title, head, rows, rule_after=rule_after))

        trained = " + ".join(d.name for d in data)

        def too_wide(rs: list) -> bool:  # STC-3's 8 scores do not fit 80 columns as columns: a row per score
            return len(rs[0].columns) > WIDE or (format == CVFormat.table and not _fits(console, *fold_rows(rs[0])))

        wide_of = [too_wide(rs) for rs in by_file]   # each file's own scales (ConTurE has 13, DBDC 1)
        for path, rs, wide in zip(data, by_file, wide_of, strict=True):
            for r in rs:
                head, rows = fold_rows(r)
                rule = len(rows) - 3
                if wide:  # a row per score: the folds, the mean and the interval as columns
                    (head, rows), rule = transposed(head, rows), 1
                show(_title(r, path.name, wide) + (f"; each fold trained on {trained}" if len(data) > 1 else ""),
                     head, rows, rule_after=rule)
        for path, rs, wide in zip(data, by_file, wide_of, strict=True):
            if len(rs) > 1 or len(data) > 1:
                head, rows = summary_rows(rs)
                show(f"Summary: {folds}-fold CV on {path.name}"
                     + (f" (each fold trained on {trained})" if len(data) > 1 else "")
                     + ", mean over folds ± half-width of the 95% t-interval; "
                     + directions_text([c for r in rs for c in r.columns]),
                     *(transposed(head, rows) if wide else (head, rows)))
        _say_runs(runs_out, data, corpora)
