"""The chat API of a collection (human-machine) on SQLite and PostgreSQL: the path of a chat, turn-taking,
limits, who may call what, the join form (CSRF) and escaping."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from dialeval.service import invitations, teams
from dialeval.service.collection import chats
from dialeval.service.collection.tables import ChatSession, ChatTurn


def test_a_chat_from_start_to_end(ch):
    code, _other = ch.collection(max_turns=6)
    r = ch.start(code, "Ann")
    assert r.status_code == 201, r.text
    s = r.json()
    assert s["status"] == "active" and s["you"] == "USER" and s["dialogue_id"] == "echo00000" and s["turns"] == []
    assert ch.start(code, "Ann").json()["id"] == s["id"]  # the open chat comes back (a reload resumes it)
    r = ch.say(code, s["id"], "  hello\r\nthere  ")
    assert r.status_code == 201, r.text
    turns = r.json()["turns"]
    assert [(t["position"], t["speaker"], t["utterance"]) for t in turns] == [
        (1, "USER", "hello\nthere"), (2, "SYSTEM", "You said: hello\nthere")]
    got = ch.call("GET", f"/api/collections/c1/sessions/{s['id']}?after=1", code).json()
    assert [t["position"] for t in got["turns"]] == [2]
    ch.say(code, s["id"], "second")
    r = ch.say(code, s["id"], "third")  # turn 5; the reply is turn 6 = the limit: the chat ends
    assert r.status_code == 201 and r.json()["status"] == "ended" and r.json()["end_reason"] == "reached 6 turns"
    r = ch.say(code, s["id"], "fourth")
    assert r.status_code == 409 and "ended" in r.json()["detail"]
    s2 = ch.start(code, "Ann").json()
    assert s2["id"] != s["id"] and s2["dialogue_id"] == "echo00001"
    assert ch.end(code, s2["id"]).json()["status"] == "ended"
    assert ch.end(code, s2["id"]).status_code == 200  # again: nothing changes


def test_refusals(ch):
    code, other = ch.collection()
    ch.collection("c2", n_codes=1)
    [code_c2] = invitations.create_invitations(ch.db, "collection", "c2", 1, ch.clock())
    [annot] = invitations.create_invitations(ch.db, "annotation", "c1", 1, ch.clock())
    _team, team_token = teams.register_team(ch.db, "team-a", "", ch.clock())
    for bad in (None, "", "dci_nonsense", code_c2, annot, team_token):
        r = ch.start(bad)
        assert r.status_code == 401, (bad, r.text)
        # no code is said as such (it was called "not a valid invitation"); a wrong one as before
        assert ("no invitation code was given" if not bad else "not a valid invitation") in r.json()["detail"]
        assert ch.call("GET", "/api/collections/c1", bad).status_code == 401
    assert ch.call("GET", "/api/collections/c1", code).json()["engine_name"] == "echo"
    sid = ch.start(code).json()["id"]
    # Another participant cannot see, write into or end this chat.
    for method, path in (("GET", ""), ("POST", "/turns"), ("POST", "/end"), ("POST", "/retry")):
        r = ch.call(method, f"/api/collections/c1/sessions/{sid}{path}", other, {"utterance": "x"})
        assert r.status_code == 404, (path, r.text)
    # A code for c2 does not open c1's chat, even with the right id.
    assert ch.call("GET", f"/api/collections/c1/sessions/{sid}", code_c2).status_code == 401
    for bad in ({"utterance": ""}, {"utterance": "   "}, {"utterance": "a\x00b"}, {"utterance": "x" * 2001},
                {"utterance": 3}, {}):
        r = ch.call("POST", f"/api/collections/c1/sessions/{sid}/turns", code, bad)
        assert r.status_code == 422, (bad, r.text)
    assert ch.start(other, "<b>").status_code == 422
    assert ch.call("GET", "/api/collections/c1/sessions/abc", code).status_code == 422
    with ch.db.read() as s:
        assert s.scalars(select(ChatTurn)).all() == []
    assert ch.call("GET", "/api/collections/nope", code).status_code == 401


def test_one_code_cannot_spend_the_collections_numbers(ch, monkeypatch):
    """Starting and ending empty chats over and over spends the collection's numbers: a code starts at most
    MAX_CHATS_PER_CODE chats (3 here), then 409; another code is not affected."""
    from dialeval.service.collection import sessions

    monkeypatch.setattr(sessions, "MAX_CHATS_PER_CODE", 3)
    code, other = ch.collection()
    for _ in range(3):
        sid = ch.start(code).json()["id"]
        assert ch.end(code, sid).status_code == 200
    r = ch.start(code)
    assert r.status_code == 409 and "this code has started 3 chats" in r.json()["detail"]
    assert ch.start(other).status_code == 201


def test_numbers_follow_start_order_under_concurrency(ch):
    codes = ch.collection(n_codes=12)
    results = [s["dialogue_id"] for s in ch.start_all(codes).values()]
    assert sorted(results) == [f"echo{i:05d}" for i in range(12)]


def test_join_form_needs_csrf_and_escapes(ch):
    [code] = ch.collection("c1", n_codes=1, engine_name="Iris")
    page = ch.client.get("/collections/c1")
    assert page.status_code == 200 and 'name="csrf"' in page.text and "Iris" in page.text
    assert "<script>" not in page.text.split("<script src=")[0]  # no inline script (the strict CSP)
    token = page.text.split('name="csrf" value="')[1].split('"')[0]
    assert ch.client.cookies.get("dialeval_csrf") == token
    r = ch.client.post("/collections/c1/join", data={"code": code, "nickname": "Ann"})
    assert r.status_code == 403 and "expired" in r.text
    r = ch.client.post("/collections/c1/join", data={"code": code, "nickname": "Ann", "csrf": "x" * 43})
    assert r.status_code == 403
    r = ch.client.post("/collections/c1/join", data={"code": "dci_wrong", "nickname": "Ann", "csrf": token})
    assert r.status_code == 401 and "not a valid invitation" in r.text
    r = ch.client.post("/collections/c1/join", data={"code": code, "nickname": "<script>alert(1)</script>",
                                                    "csrf": token})
    assert r.status_code == 422 and "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text
    assert "<script>alert(1)</script>" not in r.text
    r = ch.client.post("/collections/c1/join", data={"code": code, "nickname": "Ann", "csrf": token})
    assert r.status_code == 200 and f'data-code="{code}"' in r.text and 'data-nickname="Ann"' in r.text
    assert r.headers["cache-control"] == "no-store"
    assert "/static/chat.js" in r.text
    assert not re.search(r"<script>|\son[a-z]+\s*=|\sstyle\s*=", r.text)  # nothing a strict CSP would block
    assert ch.client.get("/collections/nope").status_code == 404


def test_a_script_utterance_is_stored_as_text(ch):
    [code] = ch.collection(n_codes=1)
    sid = ch.start(code).json()["id"]
    r = ch.say(code, sid, "<script>alert(1)</script>")
    assert r.json()["turns"][1]["utterance"] == "You said: <script>alert(1)</script>"
    assert r.headers["content-type"].startswith("application/json")


def test_create_collection_checks(ch):
    now = ch.clock()
    for kw, msg in (({"engine_spec": None}, "needs an engine"), ({"engine_spec": "ftp://x"}, "not allowed"),
                    ({"engine_spec": "builtin:nope"}, "not allowed"),
                    ({"engine_spec": "openai:http://127.0.0.1:9/v1"}, "model name"),
                    ({"engine_spec": "builtin:echo", "engine_name": "bot_1"}, "not allowed"),
                    ({"engine_spec": "builtin:echo", "max_turns": 1}, "max turns"),
                    ({"engine_spec": "builtin:echo", "human_human": True}, "no engine"),
                    ({"engine_spec": "builtin:retrieval:/no/such/file.json"}, "no such")):
        spec = kw.pop("engine_spec")
        with pytest.raises(Exception, match=msg):
            chats.create_collection(ch.db, "cx", spec, now, **kw)
    chats.create_collection(ch.db, "cx", "builtin:echo", now)
    with pytest.raises(Exception, match="exists already"):
        chats.create_collection(ch.db, "cx", "builtin:echo", now)
    with ch.db.read() as s:
        assert s.scalars(select(ChatSession)).all() == []


def test_hostile_input_is_refused_never_a_server_error(ch):
    [code] = ch.collection(n_codes=1)
    sid = ch.start(code).json()["id"]
    big = 10**20
    for method, path, body in (
            ("GET", f"/api/collections/c1/sessions/{big}", None),
            ("GET", f"/api/collections/c1/sessions/{2**63}", None),
            ("GET", "/api/collections/c1/sessions/-1", None),
            ("GET", f"/api/collections/c1/sessions/{sid}?after={big}", None),
            ("POST", f"/api/collections/c1/sessions/{2**40}/turns", {"utterance": "x"}),
            ("POST", f"/api/collections/c1/sessions/{sid}/retry?after={2**40}", None),
            ("POST", "/api/collections/c1/sessions", {"name": "a" * 10000}),
            ("POST", "/api/collections/c1/sessions", {"name": None}),
            ("POST", f"/api/collections/c1/sessions/{sid}/turns", {"utterance": ["x"]})):
        r = ch.call(method, path, code, body)
        assert r.status_code == 422, (path, r.status_code, r.text)
    assert ch.call("GET", "/api/collections/" + "x" * 5000, code).status_code == 401
    r = ch.client.post(f"/api/collections/c1/sessions/{sid}/turns", content=b'{"utterance": "a\\ud800"}',
                       headers={"Authorization": f"Bearer {code}", "Content-Type": "application/json"})
    assert r.status_code == 422 and "lone surrogate" in r.text
    r = ch.client.post("/collections/c1/join", data={"code": "x" * 10_000, "csrf": "a"})
    assert r.status_code == 403
    r = ch.client.post("/collections/c1/join", data={"code": "x" * 100_000, "csrf": "a"})
    assert r.status_code == 413  # a form is not an upload: 64 KB at most


def _retry(ch, code, sid, after=None):
    ch.tick()
    query = "" if after is None else f"?after={after}"
    return ch.call("POST", f"/api/collections/c1/sessions/{sid}/retry{query}", code)


def _positions(ch, sid) -> list[int]:
    with ch.db.read() as s:
        return list(s.scalars(select(ChatTurn.position).where(ChatTurn.session_id == sid)
                              .order_by(ChatTurn.position)))


def test_retry_on_an_ended_chat_is_a_409_and_adds_nothing(ch):
    """A retry asks the engine for the reply a chat waits for; an ended chat waits for none: 409, as every
    other refusal of the chat's state (a turn on an ended chat), never a 201 as if it had worked."""
    code, _other = ch.collection(max_turns=6)
    sid = ch.start(code, "Ann").json()["id"]
    assert ch.say(code, sid, "hello").status_code == 201
    r = _retry(ch, code, sid, after=2)             # active, nothing awaited (the reply came): harmless, 201
    assert r.status_code == 201 and r.json()["turns"] == [] and r.json()["status"] == "active"
    assert ch.end(code, sid).json()["status"] == "ended"
    for after in (None, 0, 1, 2, 5):
        r = _retry(ch, code, sid, after)
        assert r.status_code == 409, (after, r.text)
        assert r.json()["detail"] == ("this chat is ended: it waits for no reply, so there is nothing to retry; "
                                      "start a new one to chat again")
    assert _positions(ch, sid) == [1, 2]


def test_retry_repeated_after_the_reply_that_ended_the_chat_gets_that_reply(ch):
    """Idempotent where it matters: a retry sent again for the reply that reached the turn limit (the page
    asks with ?after= the participant's last turn) gets that reply back with the ended state; any other
    retry on the ended chat is a 409."""
    code, _other = ch.collection(max_turns=2)
    sid = ch.start(code, "Ann").json()["id"]
    r = ch.say(code, sid, "hello")
    assert r.json()["status"] == "ended" and [t["position"] for t in r.json()["turns"]] == [1, 2]
    for _ in range(2):
        r = _retry(ch, code, sid, after=1)
        assert r.status_code == 201, r.text
        assert r.json()["status"] == "ended" and [(t["position"], t["speaker"]) for t in r.json()["turns"]] == [
            (2, "SYSTEM")]
    assert _retry(ch, code, sid, after=2).status_code == 409
    assert _retry(ch, code, sid).status_code == 409
    assert _positions(ch, sid) == [1, 2]


def test_retry_refused_when_the_chat_ends_while_the_engine_is_asked(ch, monkeypatch):
    """The participant ends the chat (another tab) while a retry waits for the engine: the reply is not
    stored and the retry is refused (409), not answered 201 as if it had worked."""
    from dialeval.service.collection.engines import EngineError

    code, _other = ch.collection()
    sid = ch.start(code, "Ann").json()["id"]
    c, inv = chats.participant(ch.db, "c1", code)
    engine = chats.engine_of(c)

    def fails(self, dialogue):
        raise EngineError("the engine is down")

    def ends_meanwhile(self, dialogue):
        assert chats.end_session(ch.db, c, inv, sid, ch.clock).status == "ended"
        return "too late"

    monkeypatch.setattr(type(engine), "reply", fails)
    assert ch.say(code, sid, "hello").status_code == 202

    monkeypatch.setattr(type(engine), "reply", ends_meanwhile)
    r = _retry(ch, code, sid, after=1)
    assert r.status_code == 409 and "nothing to retry" in r.json()["detail"], r.text
    assert _positions(ch, sid) == [1]


def test_retry_on_a_waiting_or_abandoned_human_human_chat_is_a_409(ch):
    code, _other = ch.collection(engine=None, human_human=True)
    sid = ch.start(code, "Ann").json()["id"]
    r = _retry(ch, code, sid)
    assert r.status_code == 409 and "nobody has joined this chat yet" in r.json()["detail"], r.text
    assert ch.end(code, sid).json()["status"] == "abandoned"
    r = _retry(ch, code, sid)
    assert r.status_code == 409 and r.json()["detail"].startswith("this chat is abandoned"), r.text


def test_nicknames_of_real_words_with_marks_pass_and_stacks_are_refused(ch):
    """A nickname is stored NFC; Hindi's vowel signs and virama and decomposed Vietnamese pass (they were
    refused as not letters); a stack of combining marks is refused, the message escaping what it received."""
    import unicodedata

    codes = ch.collection(n_codes=4)
    for code, name in zip(codes, ("हिन्दी", unicodedata.normalize("NFD", "Nguyễn"), "Zoë"), strict=False):
        r = ch.start(code, name)
        assert r.status_code == 201, (name, r.text)
        sid = r.json()["id"]
        with ch.db.read() as s:
            assert s.get(ChatSession, sid).user1_name == unicodedata.normalize("NFC", name)
    r = ch.start(codes[3], "a" + "\u0301" * 50)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert detail.startswith("nickname '") and "combining marks in a row" in detail and "\\u0301" in detail
    assert "\u0301" not in detail


def test_an_ended_chat_shows_no_engine_error(ch, monkeypatch):
    """The engine's failure says "ask again with Retry"; once the chat has ended (or was abandoned) it waits for
    no reply and a retry is a 409, so the state no longer carries ``engine_error``."""
    from dialeval.service.collection.engines import EngineError

    code, _other = ch.collection()
    sid = ch.start(code, "Ann").json()["id"]
    c, _inv = chats.participant(ch.db, "c1", code)

    def fails(self, dialogue):
        raise EngineError("the engine is down")

    monkeypatch.setattr(type(chats.engine_of(c)), "reply", fails)
    r = ch.say(code, sid, "hello")
    assert r.status_code == 202 and "ask again with Retry" in r.json()["engine_error"]
    assert "ask again" in ch.call("GET", f"/api/collections/c1/sessions/{sid}", code).json()["engine_error"]
    r = ch.end(code, sid)
    assert r.status_code == 200 and r.json()["status"] == "ended" and r.json()["engine_error"] is None, r.text
    assert ch.call("GET", f"/api/collections/c1/sessions/{sid}", code).json()["engine_error"] is None
    with ch.db.read() as s:
        assert s.get(ChatSession, sid).engine_error == ""
    # Whatever a row holds (a chat ended before this rule), only an active chat shows it.
    with ch.db.write() as s:
        s.get(ChatSession, sid).engine_error = "the engine is down; your message is saved, ask again with Retry"
    for status in ("ended", "abandoned"):
        with ch.db.write() as s:
            s.get(ChatSession, sid).status = status
        assert ch.call("GET", f"/api/collections/c1/sessions/{sid}", code).json()["engine_error"] is None, status


def test_the_join_address_opened_directly_leads_to_the_join_page(ch):
    """A reload of the chat page (the join form's answer) or a bookmark of /collections/NAME/join is a GET:
    it is sent on to the collection's join page (303), not a 405 page whose only link is the leaderboard."""
    ch.collection("c1", n_codes=1)
    r = ch.client.get("/collections/c1/join", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/collections/c1"
    r = ch.client.get("/collections/c1/join")
    assert r.status_code == 200 and 'id="join-form"' in r.text


def test_a_refused_nickname_keeps_the_code(ch):
    """The join form comes back with the code as typed when the nickname is refused (and the nickname)."""
    [code] = ch.collection("c1", n_codes=1)
    page = ch.client.get("/collections/c1")
    token = page.text.split('name="csrf" value="')[1].split('"')[0]
    r = ch.client.post("/collections/c1/join", data={"code": code, "nickname": "you", "csrf": token})
    assert r.status_code == 422
    assert re.search(r'<input name="code"[^>]*value="' + re.escape(code) + '"', r.text), r.text
    assert 'value="you"' in r.text


def test_a_turn_sent_again_with_its_position_is_refused_and_stored_once(ch):
    """The answer to a turn is lost and the page sends it again with the same ``position``: 409 with a clear
    message, nothing stored twice; a turn for the right place, and one without ``position`` (older clients),
    are taken."""
    code, _other = ch.collection()
    sid = ch.start(code).json()["id"]
    turns = f"/api/collections/c1/sessions/{sid}/turns"
    r = ch.call("POST", turns, code, {"utterance": "hello", "position": 1})
    assert r.status_code == 201 and [t["position"] for t in r.json()["turns"]] == [1, 2]
    r = ch.call("POST", turns, code, {"utterance": "hello", "position": 1})  # the same turn again
    assert r.status_code == 409, r.text
    assert r.json()["detail"].startswith("this turn was sent as turn 1, but the chat has 2 turns already")
    assert "nothing was stored" in r.json()["detail"]
    r = ch.call("POST", turns, code, {"utterance": "from the future", "position": 9})
    assert r.status_code == 409 and "the chat has only 2 turns" in r.json()["detail"]
    for bad in (0, -1, "x", 2**31, 1.5):
        r = ch.call("POST", turns, code, {"utterance": "hello", "position": bad})
        assert r.status_code == 422, (bad, r.text)
    r = ch.call("POST", turns, code, {"utterance": "second", "position": 3})
    assert r.status_code == 201 and [t["position"] for t in r.json()["turns"]] == [3, 4]
    r = ch.call("POST", turns, code, {"utterance": "third"})  # no position: as before
    assert r.status_code == 201 and [t["position"] for t in r.json()["turns"]] == [5, 6]
    with ch.db.read() as s:
        said = s.scalars(select(ChatTurn.utterance).where(ChatTurn.speaker == "USER").order_by(ChatTurn.position))
        assert list(said) == ["hello", "second", "third"]


def test_a_stale_position_is_refused_before_the_engine_is_asked(ch, monkeypatch):
    """While the engine's reply failed (the chat waits for it), a resend of the participant's turn is refused
    as stale (409) and the engine is not asked."""
    from dialeval.service.collection.engines import EngineError

    code, _other = ch.collection()
    c, _inv = chats.participant(ch.db, "c1", code)
    asked = []

    def fails(self, dialogue):
        asked.append(1)
        raise EngineError("down")

    monkeypatch.setattr(type(chats.engine_of(c)), "reply", fails)
    sid = ch.start(code).json()["id"]
    turns = f"/api/collections/c1/sessions/{sid}/turns"
    assert ch.call("POST", turns, code, {"utterance": "hello", "position": 1}).status_code == 202
    r = ch.call("POST", turns, code, {"utterance": "hello", "position": 1})
    assert r.status_code == 409 and "has 1 turn already" in r.json()["detail"] and asked == [1]


def test_the_join_and_chat_pages_stay_under_the_root_path(ch):
    """Behind a proxy's path prefix (the ASGI root_path) every link, script, form and the API base the chat
    page gives its script are under the prefix."""
    from fastapi.testclient import TestClient
    from service_support import links

    [code] = ch.collection(n_codes=1)
    with TestClient(ch.app, root_path="/dq") as c:
        join = c.get("/collections/c1")
        assert links(join.text) and all(x.startswith("/dq/") for x in links(join.text)), links(join.text)
        assert 'action="/dq/collections/c1/join"' in join.text
        token = re.search(r'name="csrf" value="([^"]+)"', join.text).group(1)
        chat = c.post("/collections/c1/join", data={"code": code, "nickname": "", "csrf": token})
        assert chat.status_code == 200 and 'id="chat"' in chat.text
        assert all(x.startswith("/dq/") for x in links(chat.text)), links(chat.text)
        assert 'data-api="/dq/api/collections/c1"' in chat.text


def test_a_field_the_request_does_not_have_is_refused_not_dropped(ch):
    """{"nickname": "Bob"} (the field is 'name') started a chat under no name, and the export had an empty
    <user_name/> (a COLLECT.md probe). Every JSON body of the service refuses fields it does not have."""
    [code] = ch.collection("c1", n_codes=1)
    r = ch.call("POST", "/api/collections/c1/sessions", code, {"nickname": "Bob"})
    assert r.status_code == 422
    assert r.json()["detail"][0]["msg"] == "'nickname' is not a field of this request; allowed are name"
    assert ch.call("POST", "/api/collections/c1/sessions", code, {"name": "Bob"}).status_code == 201


def test_a_nickname_that_is_the_engine_s_name_is_refused(ch):
    """'I am iris too' from a participant named iris, talking to Iris, was exported as 'I am SYSTEM_NAME too'
    (a COLLECT.md probe)."""
    [code] = ch.collection("c1", n_codes=1)
    engine = chats.get_collection(ch.db, "c1").engine_name
    r = ch.start(code, engine.upper())
    assert r.status_code == 422 and "the name of the chat system" in r.text, r.text
    assert ch.start(code, "Ann").status_code == 201


def test_joining_is_post_redirect_get_with_code_and_name_in_cookies_of_the_collections_path(ch):
    """The join form's answer is a redirect (303) to the chat page's own address: a reload opens it with a GET
    (the open chat goes on) and never sends the form again. The code and the name, whatever its script, go there
    in session cookies, HttpOnly, SameSite=Lax, under the collection's path only; Leave forgets them, and a
    code revoked since is forgotten."""
    from dialeval.service import invitations

    [code] = ch.collection("c1", n_codes=1)
    ch.collection("c2", n_codes=1)
    token = ch.client.get("/collections/c1").text.split('name="csrf" value="')[1].split('"')[0]
    name = "Zoë 李 O'Neil"
    r = ch.client.post("/collections/c1/join", data={"code": code, "nickname": name, "csrf": token},
                       follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/collections/c1/join"
    cookies = r.headers.get_list("set-cookie")
    assert len([c for c in cookies if c.startswith(("dialeval_code=", "dialeval_name="))]) == 2
    for c in cookies:
        if c.startswith(("dialeval_code=", "dialeval_name=")):
            assert "HttpOnly" in c and "SameSite=lax" in c and "Path=/collections/c1" in c, c
            assert "Max-Age" not in c and "expires" not in c.lower(), c
    for _ in range(2):  # the page, and its reload
        r = ch.client.get("/collections/c1/join", follow_redirects=False)
        assert r.status_code == 200 and f'data-code="{code}"' in r.text
        assert 'data-nickname="Zoë 李 O&#39;Neil"' in r.text, r.text
    r = ch.client.get("/collections/c1", follow_redirects=False)  # the invitation's link, opened again
    assert r.status_code == 303 and r.headers["location"] == "/collections/c1/join"
    assert ch.client.get("/collections/c2/join", follow_redirects=False).status_code == 303  # not c2's
    assert 'id="join-form"' in ch.client.get("/collections/c2").text
    r = ch.client.post("/collections/c1/leave", data={"csrf": token}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/collections/c1"
    assert ch.client.get("/collections/c1/join", follow_redirects=False).status_code == 303
    ch.client.post("/collections/c1/join", data={"code": code, "nickname": "Ann", "csrf": token})
    invitations.revoke_code(ch.db, code, ch.clock())
    r = ch.client.get("/collections/c1/join", follow_redirects=False)
    assert r.status_code == 401 and 'id="join-form"' in r.text
    assert ch.client.get("/collections/c1/join", follow_redirects=False).status_code == 303


def test_a_turns_position_is_a_whole_number_over_http_as_over_the_websocket(ch):
    """``"position": "3"`` is refused (422) over HTTP, as over the WebSocket: never read as the number 3."""
    [code] = ch.collection("c1", n_codes=1)
    sid = ch.call("POST", "/api/collections/c1/sessions", code, {"name": "Ann"}).json()["id"]
    for bad in ("1", 1.0, True):
        r = ch.call("POST", f"/api/collections/c1/sessions/{sid}/turns", code, {"utterance": "hi", "position": bad})
        assert r.status_code == 422 and "position" in r.text, (bad, r.text)
    r = ch.call("POST", f"/api/collections/c1/sessions/{sid}/turns", code, {"utterance": "hi", "position": 1})
    assert r.status_code == 201, r.text


def test_the_chat_says_the_participants_name_as_its_log_keeps_it(ch):
    """Joining an open chat again under another name: the state's ``your_name`` is the name the chat keeps (the
    one its log is written with), so the page shows that name on the participant's turns, not the new one."""
    [code] = ch.collection("c1", n_codes=1)
    s = ch.call("POST", "/api/collections/c1/sessions", code, {"name": "Zoë"}).json()
    assert s["your_name"] == "Zoë"
    again = ch.call("POST", "/api/collections/c1/sessions", code, {"name": "Other name"}).json()
    assert again["id"] == s["id"] and again["your_name"] == "Zoë"
