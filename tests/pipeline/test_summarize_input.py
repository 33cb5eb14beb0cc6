"""dialeval summarize refuses what it cannot summarise truthfully, each time in one located line.

Every case here was accepted silently (exit 0, a wrong table) or ended in a traceback before: meta that is not
an object, a day that is no date, a timestamp beyond the calendar, a repeated id, a probability written as a
string or a boolean, an empty input, a null quality, a nugget entry holding both senders' types, errors naming
a bare file name without its line, a table that did not say what it read. Expected numbers are worked out by
hand (closed forms), never taken from summarize itself.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import dialeval.summarize as summ
from dialeval import __version__
from dialeval.cli.main import run
from dialeval.errors import DialevalError
from dialeval.summarize import day_of, group_of, summarize

LEVELS = ("2", "1", "0", "-1", "-2")
ONE = dict(zip(LEVELS, (1, 0, 0, 0, 0), strict=True))   # all mass on 2: E = 2
Q = {"A": ONE, "S": ONE, "E": ONE}
C = ("CNUG0", "CNUG", "CNUG*", "CNaN")
H = ("HNUG", "HNUG*", "HNaN")
DAY_ALLOWED = ("allowed are ISO 8601 dates or date-times (2026-11-24, 2026-11-24T10:00:00Z), seconds since "
               "1970-01-01 UTC (numbers, years 1 to 9999) or null")


def rec(i: str = "d0", **kw) -> dict:
    return {"id": i, "quality": Q, **kw}


def write(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def cli_error(args: list[str], capsys) -> str:
    """The one error line of a refused command (exit 2, no traceback)."""
    assert run(["summarize", *args]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and captured.err.startswith("error: "), captured.err
    assert "Traceback" not in captured.err
    return captured.err[len("error: "):-1]


# --- D1: meta that is not an object, timestamps beyond the calendar --------------------------------------------

@pytest.mark.parametrize(("meta", "shown"), [("x", "'x'"), ([1], "[1]"), (3, "3")])
def test_meta_that_is_not_an_object_is_one_located_line(tmp_path, capsys, meta, shown):
    f = write(tmp_path / "m1.jsonl", [rec("d0", meta=meta)])
    assert cli_error([str(f)], capsys) == (
        f"{f}: line 1: dialogue d0: meta {shown} is not allowed; allowed are objects of the input dialogue's other "
        'fields ({"system": "a", "day": "2026-11-24"}) or null')


@pytest.mark.parametrize(("stamp", "shown"), [(1e20, "1e+20"), (-1e15, "-1000000000000000.0"),
                                              (253402300800, "253402300800"), (-62135596801, "-62135596801")])
def test_timestamp_beyond_years_1_to_9999_is_refused(tmp_path, capsys, stamp, shown):
    f = write(tmp_path / "t.jsonl", [rec("d0", meta={"system": "a"}), rec("d1", meta={"timestamp": stamp})])
    assert cli_error([str(f), "--by", "day"], capsys) == (
        f"{f}: line 2: dialogue d1: meta.timestamp {shown} is not allowed; {DAY_ALLOWED}")


def test_timestamps_at_the_calendar_edges():
    # 253402300799 s = 2932896 days * 86400 + 86399: 9999-12-31T23:59:59; -62135596800 s: 0001-01-01T00:00:00
    assert day_of({"timestamp": 253402300799}) == "9999-12-31"
    assert day_of({"timestamp": -62135596800}) == "0001-01-01"
    assert day_of({"timestamp": 365 * 86400}) == "1971-01-01" and day_of({"timestamp": -1}) == "1969-12-31"
    assert day_of({"timestamp": 86400 - 0.5}) == "1970-01-01"
    for bad in (float("nan"), float("inf"), True, [0], {"s": 0}):
        with pytest.raises(DialevalError, match=r"^meta.timestamp .* is not allowed; allowed are ISO 8601"):
            day_of({"timestamp": bad})


# --- D2: days parsed as ISO dates -------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["yesterday at noon", "2024-13-45", "2024-02-30", "24-01-01", "2024-01-01 at 10",
                                  ""])
def test_a_day_that_is_no_iso_date_is_refused(tmp_path, capsys, text):
    f = write(tmp_path / "d.jsonl", [rec("d0", meta={"day": "2024-01-01"}), rec("d1", meta={"day": text})])
    assert cli_error([str(f), "--by", "day"], capsys) == (
        f"{f}: line 2: dialogue d1: meta.day {text!r} is not allowed; {DAY_ALLOWED}")
    with pytest.raises(DialevalError):   # also when grouping by another field: the day makes the time series
        summarize(f, by="system")


def test_iso_dates_and_date_times_give_their_date_as_written():
    assert day_of({"day": "2026-11-24"}) == "2026-11-24"
    assert day_of({"time": "2026-11-24T23:30:00-05:00"}) == "2026-11-24"   # as written, not moved to UTC
    assert day_of({"date": "2026-11-24 10:00:00Z"}) == "2026-11-24"
    assert day_of({"day": "20261124"}) == "2026-11-24"   # the basic format: its first 10 characters were no date
    # ISO week 2026-W48: 2026-01-01 is a Thursday, so week 1 starts on Monday 2025-12-29; + 47 weeks
    # (329 days) is Monday 2026-11-23, and day 2 of the week is Tuesday 2026-11-24
    assert day_of({"day": "2026-W48-2"}) == "2026-11-24"
    assert day_of({"day": None, "date": "2026-01-02"}) == "2026-01-02"   # a null day field counts as not given
    assert day_of({"system": "a"}) is None
    with pytest.raises(DialevalError, match=r"^meta 'x' is not allowed"):
        day_of("x")  # type: ignore[arg-type]


def test_days_group_by_their_parsed_date(tmp_path):
    f = write(tmp_path / "d.jsonl", [rec("d0", meta={"day": "2026-01-01T10:00:00Z"}),
                                     rec("d1", meta={"day": "2026-01-01"}), rec("d2", meta={"day": "20260102"})])
    s = summarize(f, by="day")
    assert [(g["group"], g["dialogues"]) for g in s["groups"]] == [("2026-01-01", 2), ("2026-01-02", 1)]


def test_group_fields_holding_objects_are_refused(tmp_path, capsys):
    assert group_of({"n": 3}, "n") == "3" and group_of({"b": True}, "b") == "true" and group_of({}, "x") == "(none)"
    f = write(tmp_path / "g.jsonl", [rec("d0", meta={"system": "a"}), rec("d1", meta={"system": {"name": "a"}})])
    assert cli_error([str(f)], capsys) == (
        f"{f}: line 2: dialogue d1: meta.system {{'name': 'a'}} is not allowed; allowed are text, numbers, true, "
        "false or null (a dialogue without the field)")


# --- D2: duplicate ids ------------------------------------------------------------------------------------------

def test_a_repeated_id_in_one_file_is_refused_naming_both_lines(tmp_path, capsys):
    f = write(tmp_path / "dup.jsonl", [rec("d0"), rec("d1"), rec("d0")])
    assert cli_error([str(f)], capsys) == (
        f"{f}: line 3: dialogue d0: id: duplicate dialogue id: given first at {f}: line 1; ids must be unique "
        "across the predictions (every shard)")


def test_a_repeated_id_across_shards_is_refused_naming_both_files(tmp_path, capsys):
    folder = tmp_path / "pred"
    folder.mkdir()
    write(folder / "one.jsonl", [rec("a"), rec("b")])
    write(folder / "two.jsonl", [rec("c"), rec("b")])
    assert cli_error([str(folder)], capsys) == (
        f"{folder / 'two.jsonl'}: line 2: dialogue b: id: duplicate dialogue id: given first at "
        f"{folder / 'one.jsonl'}: line 2; ids must be unique across the predictions (every shard)")


@pytest.mark.parametrize("block", [2, 3, 1000])
def test_ids_sharing_a_hash_are_told_apart(tmp_path, monkeypatch, block):
    """Ids are kept as hashes: with every hash equal (and blocks of 2 or 3 dialogues, so that earlier blocks'
    ids are read again from their lines), distinct ids all count, and a real repeat is still found."""
    monkeypatch.setattr(summ, "hash", lambda _: 7, raising=False)
    monkeypatch.setattr(summ, "_BLOCK", block)
    f = write(tmp_path / "p.jsonl", [rec(f"d{i}") for i in range(7)])
    assert summarize(f)["dialogues"] == 7
    write(f, [rec(f"d{i}") for i in range(7)] + [rec("d2")])
    with pytest.raises(DialevalError) as e:
        summarize(f)
    assert str(e.value).startswith(f"{f}: line 8: dialogue d2: id: duplicate dialogue id: given first at {f}: line 3")


# --- D2: strings and booleans are not probabilities -------------------------------------------------------------

@pytest.mark.parametrize(("value", "shown"), [("0.3", "'0.3'"), (True, "True"), (False, "False"), (None, "None"),
                                              ([0.3], "[0.3]")])
def test_a_probability_that_is_not_a_number_is_refused(tmp_path, capsys, value, shown):
    good = rec("d0")
    bad = rec("d1", quality={**Q, "S": {**ONE, "-1": value}})
    f = write(tmp_path / "v.jsonl", [good, bad])
    assert cli_error([str(f)], capsys) == f"{f}: line 2: dialogue d1: quality.S.-1: value {shown} is not a number"
    nug = rec("d1", nugget=[dict.fromkeys(C, 0.25), {**dict.fromkeys(H, 0.5), "HNaN": value}])
    write(f, [good, nug])
    assert cli_error([str(f)], capsys) == f"{f}: line 2: dialogue d1: nugget[1].HNaN: value {shown} is not a number"


def test_a_bad_value_read_the_slow_way_is_located_too(tmp_path, capsys):
    """A quality missing a level is read as evaluate reads it (the missing level 0), with the same checks."""
    f = write(tmp_path / "v.jsonl", [rec("d0"), rec("d1", quality={**Q, "A": {"2": "1"}})])
    assert cli_error([str(f)], capsys) == f"{f}: line 2: dialogue d1: quality.A.2: value '1' is not a number"
    write(f, [rec("d0"), rec("d1", quality={**Q, "A": {"2": 1, "3": 0}})])
    assert cli_error([str(f)], capsys) == (f"{f}: line 2: dialogue d1: quality.A: unknown bin name '3'; allowed are "
                                           "2, 1, 0, -1, -2")
    # a missing level counts as 0: A of d1 is all on 0 (E[A] = 0), so the mean E[A] is (2 + 0) / 2 = 1
    write(f, [rec("d0"), rec("d1", quality={**Q, "A": {"0": 2.0}})])
    assert summarize(f)["groups"][0]["quality"]["A"]["expected"] == 1.0


# --- D2: an empty input -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["", "\n\n", "  \r\n\t\n"])
def test_an_empty_or_blank_file_is_an_error(tmp_path, capsys, text):
    f = tmp_path / "e.jsonl"
    f.write_text(text)
    assert cli_error([str(f)], capsys) == (
        f"{f}: no prediction to summarize: this file is empty or blank; summarize reads JSON Lines, one prediction "
        "{id, quality?, nugget?} per line, what `dialeval predict --out FOLDER` writes")


def test_a_folder_of_empty_shards_is_an_error(tmp_path, capsys):
    folder = tmp_path / "pred"
    folder.mkdir()
    (folder / "a.jsonl").write_text("")
    (folder / "b.jsonl").write_text("\n")
    assert cli_error([str(folder)], capsys).startswith(
        f"{folder}: no prediction to summarize: its 2 shard(s) are empty or blank;")


# --- D2: a null or wrong-typed quality --------------------------------------------------------------------------

def test_a_null_subtask_is_refused_where_it_is(tmp_path, capsys):
    """Skipped, a null quality left its dialogue in the group's count: the mean distribution summed to less than
    1. Refused where it is, as dialeval evaluate refuses it."""
    nug = [dict.fromkeys(C, 0.25)]
    f = write(tmp_path / "q.jsonl", [rec("d0", nugget=nug), {"id": "d1", "quality": None, "nugget": nug}])
    assert cli_error([str(f)], capsys) == (
        f"{f}: line 2: dialogue d1: quality None is not allowed; allowed are an object with keys A, S, E, or no "
        "'quality' key in any prediction")
    write(f, [rec("d0"), rec("d1", nugget=None)])
    assert cli_error([str(f)], capsys).startswith(f"{f}: line 2: dialogue d1: nugget None is not allowed;")
    write(f, [{"id": "d0", "quality": None}])
    assert cli_error([str(f)], capsys).startswith(f"{f}: line 1: dialogue d0: quality None is not allowed;")


def test_quality_given_by_some_predictions_only_is_refused(tmp_path, capsys):
    nug = [dict(zip(H, (1, 0, 0), strict=True))]
    f = write(tmp_path / "q.jsonl", [rec("d0"), {"id": "d1", "nugget": nug}])
    assert cli_error([str(f)], capsys) == (
        f"{f}: line 2: dialogue d1: quality: this prediction gives no quality but the first ({f}: line 1, dialogue "
        "d0) gives it; every prediction gives quality or none does, as dialeval evaluate reads a run")
    write(f, [{"id": "d0", "nugget": nug}, rec("d1", nugget=nug)])
    assert "this prediction gives quality but the first" in cli_error([str(f)], capsys)
    # no quality at all: fine, nugget shares only (one helpdesk turn each, all on HNUG)
    write(f, [{"id": "d0", "nugget": nug}, {"id": "d1", "nugget": nug}])
    g = summarize(f)["groups"][0]
    assert g["dialogues"] == 2 and "quality" not in g and g["nugget"]["helpdesk"]["HNUG"] == 1.0


@pytest.mark.parametrize(("quality", "message"), [
    ("x", "quality: expected an object with keys A, S, E, received 'x'"),
    ([1, 2, 3], "quality: expected an object with keys A, S, E, received [1, 2, 3]"),
    ({**Q, "s": ONE}, "quality: quality key 's' is not allowed; did you mean 'S'?; allowed are A, S, E"),
    ({"A": ONE, "S": ONE}, "quality: quality key E is missing; A, S and E are all required"),
    ({**Q, "E": "x"}, "quality.E: expected an object of bin: probability, received 'x'"),
])
def test_a_wrong_typed_quality_is_refused(tmp_path, capsys, quality, message):
    f = write(tmp_path / "q.jsonl", [rec("d0"), rec("d1", quality=quality)])
    assert cli_error([str(f)], capsys) == f"{f}: line 2: dialogue d1: {message}"


# --- D2: a nugget entry holding both senders' types -------------------------------------------------------------

def test_a_turn_mixing_customer_and_helpdesk_types_is_refused(tmp_path, capsys):
    mixed = {**dict(zip(C, (1, 0, 0, 0), strict=True)), "HNUG": 1}
    f = write(tmp_path / "n.jsonl", [rec("d0", nugget=[dict.fromkeys(H, 1), mixed])])
    assert cli_error([str(f)], capsys) == (
        f"{f}: line 1: dialogue d0: nugget[1]: this turn mixes customer types (CNUG0, CNUG, CNUG*, CNaN) and helpdesk "
        "types (HNUG); a turn is one sender's: allowed are the customer types CNUG0, CNUG, CNUG*, CNaN or the "
        "helpdesk types HNUG, HNUG*, HNaN")
    write(f, [rec("d0", nugget=[{"CNUG": 1, "HNaN": 1, "HNUG*": 0}])])   # 3 keys: used to be read as helpdesk
    assert "nugget[0]: this turn mixes customer types (CNUG) and helpdesk types (HNaN, HNUG*)" in cli_error(
        [str(f)], capsys)


@pytest.mark.parametrize(("nugget", "message"), [
    (5, "nugget: expected a list with one entry per turn, received 5"),
    ({"a": 1}, "nugget: expected a list with one entry per turn, received {'a': 1}"),
    (["CNUG0"], "nugget[0]: expected an object of nugget type: probability, received 'CNUG0'; allowed are the "
                "customer types CNUG0, CNUG, CNUG*, CNaN or the helpdesk types HNUG, HNUG*, HNaN"),
    ([{}], "nugget[0]: no nugget type given; allowed are the customer types CNUG0, CNUG, CNUG*, CNaN or the helpdesk "
           "types HNUG, HNUG*, HNaN"),
    ([{"HNUG": 1, "HNUG*": 0, "HNaN": 0, "HNUGX": 1}], "nugget[0]: unknown bin name 'HNUGX'; did you mean 'HNUG'?; "
                                                       "allowed are HNUG, HNUG*, HNaN"),
])
def test_a_wrong_nugget_entry_is_refused(tmp_path, capsys, nugget, message):
    f = write(tmp_path / "n.jsonl", [rec("d0", nugget=nugget)])
    assert cli_error([str(f)], capsys) == f"{f}: line 1: dialogue d0: {message}"


def test_a_turn_of_one_sender_with_bins_left_out_counts_them_as_0(tmp_path):
    """As dialeval evaluate reads a run: customer turns (1, 0, 0, 0) and (0, 0.5, 0, 0.5) given as partial
    objects: the mean over the two turns is (0.5, 0.25, 0, 0.25)."""
    f = write(tmp_path / "n.jsonl", [rec("d0", nugget=[{"CNUG0": 2}, {"CNUG": 1, "CNaN": 1}])])
    assert summarize(f)["groups"][0]["nugget"]["customer"] == {"CNUG0": 0.5, "CNUG": 0.25, "CNUG*": 0.0,
                                                               "CNaN": 0.25}


# --- D2: every per-record error names the file as given and the line ---------------------------------------------

@pytest.mark.parametrize(("bad", "where"), [
    (rec("d1", quality={**Q, "A": {**ONE, "2": -1}}), "dialogue d1: quality.A.2: value -1.0 is not allowed"),
    (rec("d1", quality={**Q, "E": dict.fromkeys(LEVELS, 0)}), "dialogue d1: quality.E: all-zero distribution"),
    (rec("d1", nugget=[dict.fromkeys(C, 0.25), dict.fromkeys(H, 0)]), "dialogue d1: nugget[1]: all-zero"),
    (rec("d1", nugget=[dict.fromkeys(C, -0.5)]), "dialogue d1: nugget[0].CNUG0: value -0.5 is not allowed"),
    ({"id": "d1"}, "dialogue d1: no quality and no nugget"),
    ({"id": 5, "quality": Q}, "expected a prediction"),
    ('{"id": "d1", ', "not valid JSON"),
])
def test_every_record_error_names_the_file_as_given_and_the_line(tmp_path, capsys, bad, where):
    folder = tmp_path / "pred"
    folder.mkdir()
    f = folder / "neg.jsonl"
    f.write_text(json.dumps(rec("d0")) + "\n" + (bad if isinstance(bad, str) else json.dumps(bad)) + "\n")
    for given in (folder, f):   # the folder or its shard: the shard's path as reached from what was given
        assert cli_error([str(given)], capsys).startswith(f"{f}: line 2: {where}")


def test_a_damaged_gzip_shard_is_one_line(tmp_path, capsys):
    data = gzip.compress(b"".join(json.dumps(rec(f"d{i}")).encode() + b"\n" for i in range(200)))
    f = tmp_path / "p.jsonl.gz"
    f.write_bytes(data[: len(data) // 2])
    assert cli_error([str(f)], capsys).startswith(f"{f}: not readable: not a complete gzip file:")


# --- D2: the table says what it read and which dialeval made it --------------------------------------------------

def test_the_table_names_its_source_and_version(tmp_path, capsys):
    folder = tmp_path / "pred"
    folder.mkdir()
    write(folder / "one.jsonl", [rec("d0", meta={"system": "a"})])
    assert run(["summarize", str(folder)]) == 0
    assert last_line(capsys.readouterr().out) == f"predictions: {folder}; dialeval {__version__}"
    manifest = {"shards": [{"output": "one.jsonl"}],
                "model": {"name": "shipped", "kind": "prior", "subtasks": ["quality"], "sha256": "0" * 64}}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    assert run(["summarize", str(folder)]) == 0
    assert last_line(capsys.readouterr().out) == (f"predictions: {folder}; model: shipped (prior); dialeval "
                                                  f"{__version__}")
    assert run(["summarize", str(folder), "--format", "json"]) == 0   # the JSON had it already
    assert json.loads(capsys.readouterr().out)["settings"]["model"]["name"] == "shipped"


def last_line(out: str) -> str:
    """The last line of the output: one line however long the path (not wrapped: a path stays whole)."""
    return out.rstrip("\n").splitlines()[-1]
