"""Service tasks for every declared task, not only STC-3's: DBDC breakdown (gold as a ZIP of its folder, runs
as dialeval's per-item JSON or a ZIP of DBDC3 labels) and WOCHAT validity (gold as one XML file); hostile
archives.

Samples: 12 real DBDC3 English eval dialogues (6 CIC, 6 IRIS), and the same dialogues written as WOCHAT XML by
dialeval's writer. Expected scores are closed forms: the gold as a run scores 0; a uniform run's JSD and MSE
are computed here from the gold distributions by hand.
"""

from __future__ import annotations

import io
import json
import shutil
import stat
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from service_support import Service

import dialeval
from dialeval.distributions import gold_distributions
from dialeval.io.turnruns import run_document, write_dbdc_labels


def zip_folder(folder: Path, *, arcroot: str = "eval") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                z.write(f, f"{arcroot}/{f.relative_to(folder).as_posix()}")
    return buf.getvalue()


@pytest.fixture(scope="module")
def dbdc_eval(shared_data, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dbdc") / "eval"
    for folder in ("CIC_50", "IRIS_50"):
        (out / folder).mkdir(parents=True)
        for f in sorted(shared_data("dbdc3", "en", "eval", folder).glob("*.log.json"))[:6]:
            shutil.copy(f, out / folder / f.name)
    return out


@pytest.fixture(scope="module")
def gold_dists(dbdc_eval):
    return gold_distributions(dialeval.read_corpus(dbdc_eval))


@pytest.fixture
def svc(sqlite_url):
    s = Service(sqlite_url)
    yield s
    s.close()


def admin_token(s: Service) -> str:
    from dialeval.service import teams
    return teams.create_admin_token(s.db, s.clock(), "lead")


def create(s: Service, name: str, key: str, data: bytes, filename: str, **form):
    return s.client.post("/api/admin/tasks", data={"name": name, "subtask": key, "seed": "5", **form},
                         files={"gold": (filename, data, "application/octet-stream")},
                         headers={"Authorization": f"Bearer {admin_token(s)}"})


def uniform_records(dists) -> list[dict]:
    levels = dists["breakdown"].scale.levels
    doc = run_document(dists)
    for rec in doc:
        for t in rec["turns"]:
            t["breakdown"] = {lv: 1 / len(levels) for lv in levels}
    return doc


def closed_form_uniform(dists, ids: list[str]) -> dict[str, float]:
    """JSD and MSE of the uniform run, per turn then per dialogue then over ``ids``, written out by hand."""
    d = dists["breakdown"]
    by_dialogue: dict[str, list[tuple[float, float]]] = {}
    for i, p in zip(d.ids, d.probs, strict=True):
        q = np.full(len(p), 1 / len(p))
        m = (p + q) / 2
        kl = lambda a, b: sum(x * np.log2(x / y) for x, y in zip(a, b, strict=True) if x > 0)  # noqa: E731
        mse = float(((p - q) ** 2).mean())  # MSE: the mean over the L bins
        by_dialogue.setdefault(i, []).append(((kl(p, m) + kl(q, m)) / 2, mse))
    per = [np.mean(by_dialogue[i], axis=0) for i in ids]
    return {"breakdown/jsd": float(np.mean([x[0] for x in per])), "breakdown/mse": float(np.mean([x[1] for x in per]))}


def test_dbdc_task_from_a_zip_scores_json_and_zip_runs(svc, dbdc_eval, gold_dists, tmp_path):
    r = create(svc, "bd", "dbdc-breakdown", zip_folder(dbdc_eval), "eval.zip", public_fraction="0.5")
    assert r.status_code == 201, r.text
    info = r.json()
    assert info["task"] == "dbdc-breakdown" and info["dialogues"] == 12 and info["public_dialogues"] == 6
    assert info["columns"] == ["breakdown/jsd", "breakdown/mse", "breakdown/nmd", "breakdown/rsnod"]
    assert info["rank_by"] == "breakdown/jsd" and "labels.json" in info["run_layout"]
    token = svc.team()

    perfect = svc.submit(token, json.dumps(run_document(gold_dists)).encode(), task="bd")
    assert perfect.status_code == 201, perfect.text
    assert all(abs(v) < 1e-12 for v in perfect.json()["scores"].values())

    write_dbdc_labels(uniform_records(gold_dists), str(tmp_path / "labels"))
    uni = svc.submit(token, zip_folder(tmp_path / "labels", arcroot="run"), task="bd", filename="run.zip")
    assert uni.status_code == 201, uni.text
    from dialeval.service.leaderboard.tasks import get_task
    expect = closed_form_uniform(gold_dists, list(get_task(svc.db, "bd").public_ids))
    for col, v in expect.items():   # public means are shown at 4 decimals (runs.PUBLIC_DIGITS)
        assert uni.json()["scores"][col] == round(v, 4)

    board = svc.client.get("/api/tasks/bd/leaderboard?per=run").json()
    assert [c["label"] for c in board["columns"]] == ["JSD", "MSE", "NMD", "RSNOD"]
    assert [row["id"] for row in board["rows"]] == [perfect.json()["id"], uni.json()["id"]]  # lower is better
    page = svc.client.get("/tasks/bd")
    assert page.status_code == 200 and "Dialogue breakdown" in page.text and "labels.json" in page.text

    # after close: final scores on 100%, from the stored zip too
    close = svc.client.post("/api/admin/tasks/bd/close", headers={"Authorization": f"Bearer {admin_token(svc)}"})
    assert close.status_code == 200
    final = svc.client.get("/api/tasks/bd/leaderboard?per=run").json()
    scores = {row["id"]: row["scores"] for row in final["rows"]}
    full = closed_form_uniform(gold_dists, list(dict.fromkeys(gold_dists["breakdown"].ids)))
    for col, v in full.items():
        assert scores[uni.json()["id"]][col] == pytest.approx(v, abs=1e-12)


def test_export_names_turn_columns_as_files(svc, dbdc_eval, gold_dists, tmp_path):
    from dialeval.service.leaderboard.export import export_matrix
    assert create(svc, "bd", "dbdc-breakdown", zip_folder(dbdc_eval), "eval.zip").status_code == 201
    token = svc.team()
    write_dbdc_labels(uniform_records(gold_dists), str(tmp_path / "labels"))
    assert svc.submit(token, zip_folder(tmp_path / "labels"), task="bd", filename="u.zip").status_code == 201
    assert svc.submit(token, json.dumps(run_document(gold_dists)).encode(), task="bd").status_code == 201
    manifest = export_matrix(svc.db, "bd", tmp_path / "out", svc.clock())
    out = tmp_path / "out"
    assert (out / "breakdown.jsd.matrix").is_file() and not (out / "breakdown").exists()
    runs = (out / "runs.txt").read_text().split()
    assert len(runs) == 2 and all(json.loads((out / f"{r}.json").read_text()) for r in runs)  # zip -> JSON
    assert manifest["columns"][0] == "breakdown/jsd"


def test_wochat_task_from_one_xml_file(svc, dbdc_eval, tmp_path):
    from dialeval.io.wochat_writer import write_wochat
    write_wochat(dialeval.read_corpus(dbdc_eval), tmp_path / "gold.xml")
    data = (tmp_path / "gold.xml").read_bytes()
    assert create(svc, "wv", "quality", data, "gold.xml").json()["detail"].endswith(
        "the gold has no labels of task 'quality' (its tasks: wochat-validity)")
    r = create(svc, "wv", "wochat-validity", data, "gold.xml")
    assert r.status_code == 201, r.text
    gold = gold_distributions(dialeval.read_corpus(tmp_path / "gold.xml"))
    ok = svc.submit(svc.team(), json.dumps(run_document(gold)).encode(), task="wv")
    assert ok.status_code == 201 and all(abs(v) < 1e-12 for v in ok.json()["scores"].values())


def test_a_run_that_leaves_out_turns_is_a_422(svc, dbdc_eval, gold_dists):
    """The scorer skips an item a run leaves out: a run without its hardest turns ranked above the complete one."""
    assert create(svc, "bd", "dbdc-breakdown", zip_folder(dbdc_eval), "eval.zip").status_code == 201
    doc = run_document(gold_dists)
    total = sum(len(rec["turns"]) for rec in doc)
    del doc[3]["turns"][-1]
    del doc[7]["turns"][0]
    r = svc.submit(svc.team(), json.dumps(doc).encode(), task="bd")
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == (f"run.json: the run lacks 2 of the test set's {total} items of scale 'breakdown' "
                                  f"(the first in dialogue {doc[3]['id']}); a run must predict every item the test "
                                  "set labels")


def test_stc3_run_for_a_turn_task_is_a_422_naming_the_problem(svc, dbdc_eval):
    assert create(svc, "bd", "dbdc-breakdown", zip_folder(dbdc_eval), "eval.zip").status_code == 201
    r = svc.submit(svc.team(), task="bd")  # the STC-3 run of task t1
    assert r.status_code == 422 and "run.json" in r.json()["detail"]


def _zip(members: dict[str, bytes], *, link: str | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
        if link:
            info = zipfile.ZipInfo(link)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(info, "/etc/passwd")
    return buf.getvalue()


@pytest.mark.parametrize(("data", "words"), [
    (_zip({"../evil.log.json": b"{}"}), "'..'"),
    (_zip({"/abs.log.json": b"{}"}), "relative paths"),
    (_zip({"a\\b.log.json": b"{}"}), "backslashes"),
    (_zip({"ok.log.json": b"{}"}, link="x.log.json"), "is a link"),
    (b"PK\x03\x04" + b"\x00" * 40, "not a readable ZIP"),
    (_zip({}), "cannot tell the format"),
    (_zip({"a.txt": b"hello"}), "cannot tell the format"),
])
def test_hostile_gold_archives_are_refused_without_a_5xx(svc, data, words, tmp_path):
    r = create(svc, "bad", "dbdc-breakdown", data, "g.zip")
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert words in detail and "/tmp" not in detail and "dialeval-upload" not in detail
    assert "--from" not in detail  # the service's hint, not the command line's
    if words == "cannot tell the format":
        assert "a ZIP of the folder" in detail
    assert not (tmp_path.parent / "evil.log.json").exists()


def test_archive_limits(svc, monkeypatch):
    from dialeval.service.leaderboard import uploaded
    monkeypatch.setattr(uploaded, "MAX_MEMBERS", 3)
    monkeypatch.setattr(uploaded.unpack, "__kwdefaults__", {"max_members": 3, "max_bytes": 100})
    many = _zip({f"{i}.log.json": b"{}" for i in range(4)})
    assert "at most 3" in create(svc, "bad", "dbdc-breakdown", many, "g.zip").json()["detail"]
    monkeypatch.setattr(uploaded, "SMALL_UNPACKED", 50)
    big = _zip({"a.log.json": b" " * 1000})
    assert "more than 100 bytes" in create(svc, "bad", "dbdc-breakdown", big, "g.zip").json()["detail"]


def test_a_zip_bomb_run_stops_early(svc, dbdc_eval):
    from dialeval.service.leaderboard.uploaded import SMALL_UNPACKED
    assert create(svc, "bd", "dbdc-breakdown", zip_folder(dbdc_eval), "eval.zip").status_code == 201
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("run/CIC0201.labels.json", b" " * (SMALL_UNPACKED + 1))  # 16 MiB of spaces: ~16 KB zipped
    assert len(buf.getvalue()) < 100_000
    r = svc.submit(svc.team(), buf.getvalue(), task="bd", filename="bomb.zip")
    assert r.status_code == 422 and f"more than {SMALL_UNPACKED} bytes" in r.json()["detail"]


def test_a_bad_member_is_named_inside_the_archive(svc, dbdc_eval):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for f in sorted(dbdc_eval.rglob("*.log.json"))[:2]:
            z.write(f, f"eval/{f.name}")
        z.writestr("eval/broken.log.json", b"{not json")
    detail = create(svc, "bad", "dbdc-breakdown", buf.getvalue(), "g.zip").json()["detail"]
    assert detail.startswith("g.zip/eval/broken.log.json") and "dialeval-upload" not in detail


def test_every_declared_task_key_is_a_choice(svc):
    from dialeval.service.leaderboard.runs import SUBTASKS
    from dialeval.tasks import KEYS, TASKS
    assert SUBTASKS == KEYS and {t.key for t in TASKS.values()} == set(KEYS)
    r = create(svc, "x", "no-such-task", b"[]", "g.json")
    assert r.status_code == 422 and all(k in r.json()["detail"] for k in KEYS)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(members=st.dictionaries(st.text(min_size=1, max_size=40), st.binary(max_size=64), max_size=5))
def test_any_archive_is_a_201_or_a_422(svc, members):
    try:
        data = _zip(members)
    except (ValueError, UnicodeEncodeError, IndexError):
        return  # zipfile itself cannot write such a name
    r = create(svc, "fz", "dbdc-breakdown", data, "g.zip")
    assert r.status_code in (201, 422), r.text
    assert "dialeval-upload" not in r.text


@pytest.mark.parametrize("members", [{".": b""}, {"a": b"x", "a/b": b"y"}, {"a/b": b"y", "a": b"x"}])
def test_archive_members_that_clash_on_disk_are_a_422_that_names_no_server_path(svc, members):
    """Found by the property test above: a member named '.' (the archive's root) and a member under a name
    another member took as a file made the scratch folder's path show in the message."""
    r = create(svc, "fz", "dbdc-breakdown", _zip(members), "g.zip")
    assert r.status_code in (201, 422), r.text
    assert "dialeval-upload" not in r.text and "/tmp" not in r.text


@pytest.mark.parametrize("gold", [b"[" * 50_000 + b"]" * 50_000, b'{"a":' * 50_000 + b"1" + b"}" * 50_000])
def test_deeply_nested_gold_is_a_422(svc, gold):
    r = create(svc, "deep", "dbdc-breakdown", gold, "g.json")
    assert r.status_code == 422, r.text


def test_a_gold_name_too_long_for_the_file_system_is_a_422(svc):
    r = create(svc, "long", "wochat-validity", b"<dialogues/>", "\u00e9" * 200 + ".xml")  # 405 bytes in UTF-8
    assert r.status_code == 422 and "at most 255 bytes" in r.json()["detail"]


def test_a_full_disk_is_a_503_not_a_422(svc, monkeypatch):
    import errno

    def full(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full)
    r = create(svc, "full", "wochat-validity", b"<dialogues/>", "g.xml")
    assert r.status_code == 503 and "try again later" in r.json()["detail"]


def test_a_zip_for_a_dialogue_level_task_says_what_the_task_takes(svc):
    """A ZIP sent to an STC-3 task was unpacked and read as DBDC3 labels files ("the folder holds no DBDC3 labels
    files"); it is now refused with the layout the task takes."""
    r = svc.submit(svc.team(), _zip({"run.json": b"[]"}), task="t1", filename="run.zip")
    assert r.status_code == 422, r.text
    assert "a ZIP archive is a run of a task scored per turn" in r.json()["detail"]
    assert "STC-3/DialEval submission format" in r.json()["detail"]
