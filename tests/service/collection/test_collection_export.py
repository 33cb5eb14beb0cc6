"""WOCHAT export of a collection (COLLECT.md): ids in start order, declared roles, name replacement (a name
is replaced, a word containing it is not), timestamps; the reader's checks pass on every file and
read_corpus gives back exactly collection_corpus; the admin commands."""

from __future__ import annotations

import json
import re

import pytest
from collection_support import Chats

import dialeval
from dialeval.cli.main import run as cli
from dialeval.io.wochat import read_wochat
from dialeval.service.collection.export import collection_corpus, export_chats


def _chat(ch, code, name, lines, collection="c1", end=True):
    sid = ch.start(code, name, collection).json()["id"]
    for text in lines:
        assert ch.say(code, sid, text, collection).status_code == 201
    if end:
        ch.end(code, sid, collection)
    return sid


def _strip_source(c):
    return [(d.id, d.meta, [(t.sender, t.utterances, t.meta, t.labels) for t in d.turns]) for d in c.dialogues]


def test_export_follows_the_wochat_rules_and_reads_back(ch, tmp_path):
    a, b, c = ch.collection("c1", "builtin:echo", n_codes=3, engine_name="Iris")
    _chat(ch, a, "Ann", ["about you Iris, you are very funny indeed", "IRIS! Irish coffee, iris-like? ann."])
    ch.tick(60)
    _chat(ch, b, "", ["no name here"], end=False)  # never ended: not exported (its number stays reserved)
    ch.tick(60)
    _chat(ch, c, "Bob Smith", ["I am bob smith, not Bob Smithson. <script>alert('Iris')</script>"])
    report = export_chats(ch.db, "c1", tmp_path / "out")
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files == ["Iris00000.xml", "Iris00002.xml"]
    assert report.dialogues == 2 and report.turns == 6
    xml = (tmp_path / "out" / "Iris00000.xml").read_text()
    assert "<system_name>Iris</system_name>" in xml and "<user_name>Ann</user_name>" in xml
    assert "<timestamp>2026-03-01T12:00:00Z</timestamp>" in xml
    assert set(re.findall(r"<speaker>(.*?)</speaker>", xml)) == {"USER", "SYSTEM"}
    utts = re.findall(r"<utterance>(.*?)</utterance>", xml)
    assert utts[0] == "about you SYSTEM_NAME, you are very funny indeed"
    assert utts[1] == "You said: about you SYSTEM_NAME, you are very funny indeed"
    assert utts[2] == "SYSTEM_NAME! Irish coffee, SYSTEM_NAME-like? USER_NAME."
    assert utts[3] == "You said: SYSTEM_NAME! Irish coffee, SYSTEM_NAME-like? USER_NAME."
    xml2 = (tmp_path / "out" / "Iris00002.xml").read_text()
    assert "<user_name>Bob Smith</user_name>" in xml2
    assert "I am USER_NAME, not Bob Smithson. &lt;script&gt;alert('SYSTEM_NAME')&lt;/script&gt;" in xml2
    # The reader's checks (ids, declared speakers, no declared name left: names="error") pass on every file.
    for f in (tmp_path / "out").iterdir():
        read_wochat(f)
    back = dialeval.read_corpus(tmp_path / "out")
    assert back.format == "wochat" and back.meta["notices"] == []
    assert _strip_source(back) == _strip_source(collection_corpus(ch.db, "c1"))
    d0 = back.dialogues[0]
    assert d0.meta["names"] == {"SYSTEM": "Iris", "USER": "Ann"}
    assert [t.meta["id"] for t in d0.turns] == [1, 2, 3, 4]
    assert d0.turns[0].meta["tags"] == [{"tag": "timestamp", "attrib": {}, "text": "2026-03-01T12:00:01Z"}]
    # Unfinished chats on request, with the number they got at their start.
    export_chats(ch.db, "c1", tmp_path / "all", unfinished=True)
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == ["Iris00000.xml", "Iris00001.xml", "Iris00002.xml"]
    # Ids never change: a later export holds the same ids (and the folder must be new).
    with pytest.raises(dialeval.DialevalError, match="not empty"):
        export_chats(ch.db, "c1", tmp_path / "out")


def test_human_human_export(ch, tmp_path):
    u1, u2 = ch.collection("hh", None, n_codes=2, human_human=True)
    s1 = ch.start(u1, "Ann", "hh").json()
    assert s1["status"] == "waiting" and s1["dialogue_id"] is None
    s2 = ch.start(u2, "Bea", "hh").json()
    assert s2["id"] == s1["id"] and s2["status"] == "active" and s2["you"] == "USER2"
    assert s2["dialogue_id"] == "human00000"
    sid = s1["id"]
    assert ch.say(u2, sid, "me first", "hh").status_code == 409  # USER1 speaks first
    for code, text in ((u1, "hi Bea"), (u2, "hello ann"), (u1, "bye")):
        r = ch.say(code, sid, text, "hh")
        assert r.status_code == 201, r.text
    assert ch.say(u1, sid, "again", "hh").status_code == 409  # strict alternation
    ch.end(u2, sid, "hh")
    export_chats(ch.db, "hh", tmp_path / "hh")
    xml = (tmp_path / "hh" / "human00000.xml").read_text()
    assert "<user1_name>Ann</user1_name>" in xml and "<user2_name>Bea</user2_name>" in xml
    assert "<system_name" not in xml
    assert re.findall(r"<speaker>(.*?)</speaker>", xml) == ["USER1", "USER2", "USER1"]
    assert re.findall(r"<utterance>(.*?)</utterance>", xml) == ["hi USER2_NAME", "hello USER1_NAME", "bye"]
    back = dialeval.read_corpus(tmp_path / "hh")
    assert _strip_source(back) == _strip_source(collection_corpus(ch.db, "hh"))


def test_admin_commands(db_url, tmp_path, capsys):
    db = ["--database-url", db_url]
    assert cli(["admin", "create-collection", "demo", "--engine", "builtin:retrieval", "--engine-name", "IRIS",
                "--max-turns", "10", *db]) == 0
    assert "collection demo" in capsys.readouterr().err
    assert cli(["admin", "invite", "demo", "--count", "3", *db]) == 0
    codes = capsys.readouterr().out.split()
    assert len(codes) == 3 and all(c.startswith("dci_") for c in codes)
    assert cli(["admin", "invite", "nope", *db]) == 2
    assert "no collection or annotation project named 'nope'" in capsys.readouterr().err
    assert cli(["admin", "export-chats", "demo", "--out", str(tmp_path / "x"), *db]) == 2
    assert "no finished chat" in capsys.readouterr().err
    ch = Chats(db_url)
    try:
        _chat(ch, codes[0], "Ann", ["hello", "my order has not arrived"], collection="demo")
    finally:
        ch.close()
    assert cli(["admin", "export-chats", "demo", "--out", str(tmp_path / "x"), *db]) == 0
    assert "wrote 1 dialogue(s), 4 turn(s)" in capsys.readouterr().err
    assert cli(["admin", "collection-status", "demo", *db]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["chats"] == {"waiting": 0, "active": 0, "ended": 1, "abandoned": 0} and status["turns"] == 4
    assert status["codes"] == {"created": 3, "used": 1, "revoked": 0} and status["engine_name"] == "IRIS"
    assert cli(["corpus", "stats", str(tmp_path / "x")]) == 0
    assert cli(["admin", "create-collection", "demo", "--engine", "builtin:echo", *db]) == 2
    assert "exists already" in capsys.readouterr().err
