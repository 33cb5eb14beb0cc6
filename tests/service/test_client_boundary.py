"""The command-line client (``dialeval submit``, ``leaderboard``, ``register``, ``new-token``, ``me``) at its
boundary: what it is given (the server's URL, the token, the task, the choices) is checked before any request,
and what it gets back is checked before it is shown. Every failure is one ``error:`` line, exit 2, no traceback,
and no message shows the token.

The real service (:class:`LiveServer` of :class:`Service`) for dialeval's answers; tiny HTTP servers in a thread
(:func:`fake_server`) for answers that are not dialeval's."""

from __future__ import annotations

import io
import json
import socket
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from rich.console import Console
from service_support import RUN, LiveServer, UnderPrefix, dumps, free_port

from dialeval.cli import client
from dialeval.cli.main import run as cli
from dialeval.service import ratelimit

SLUG_RULE = "1-64 characters of A-Z a-z 0-9 . _ - (starting with a letter or digit)"
"""The task-name rule as a message states it (written out here, not imported, so a change is noticed)."""
SERVER_RULE = "allowed are http(s)://HOST[:PORT][/PATH]"
CHECK_SERVER = "check --server (the service's URL, with its path prefix if it has one)"


def one_error(capsys) -> tuple[str, str]:
    """The one ``error:`` line of the command just run (checked: one line, no traceback) and its stdout."""
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in captured.err, captured.err
    return lines[0], captured.out


@contextmanager
def fake_server(status: int = 200, body: bytes = b"", content_type: str = "application/json",
                headers: dict[str, str] | None = None):
    """An HTTP server on a free loopback port answering every GET and POST with ``status`` and ``body``; yields
    ``(url, requests)``, ``requests`` the (method, path) of every request it got."""
    requests: list[tuple[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            requests.append((self.command, self.path))
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@contextmanager
def silent_server():
    """A server that accepts connections and never answers; yields its URL."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    try:
        yield f"http://127.0.0.1:{s.getsockname()[1]}"
    finally:
        s.close()


@pytest.fixture
def run_file(tmp_path):
    f = tmp_path / "run.json"
    f.write_bytes(dumps(RUN))
    return f


@pytest.fixture
def live(service):
    """The real service (task t1) on a loopback port."""
    with LiveServer(service.app) as server:
        yield server


def commands(run_file, server: str, token: str = "dt_abc") -> dict[str, list[str]]:
    """Every client command, pointed at ``server``."""
    return {"leaderboard": ["leaderboard", "--task", "t1", "--server", server],
            "leaderboard-run": ["leaderboard", "--task", "t1", "--per", "run", "--server", server],
            "me": ["me", "--token", token, "--server", server],
            "new-token": ["new-token", "--token", token, "--server", server],
            "register": ["register", "team-z", "--server", server],
            "submit": ["submit", str(run_file), "--task", "t1", "--token", token, "--server", server]}


COMMANDS = ["leaderboard", "leaderboard-run", "me", "new-token", "register", "submit"]


# 1. answers that are not dialeval's, malformed server URLs ---------------------------------------------------

@pytest.mark.parametrize("body, why", [
    (b'{"ok": 1}', "has no '"),
    (b"[1, 2]", "the answer is not an object (received [1, 2])"),
    (b'{"detail": null}', "has no '"),
    (b"<html>hello</html>", "200 OK with a body that is not JSON"),
])
@pytest.mark.parametrize("command", COMMANDS)
def test_an_answer_that_is_not_dialevals_is_one_line(command, body, why, run_file, capsys):
    with fake_server(body=body) as (url, requests):
        for fmt in ([], ["--format", "json"]) if command not in ("register", "new-token") else ([],):
            assert cli(commands(run_file, url)[command] + fmt) == 2
            message, out = one_error(capsys)
            assert message.startswith(f"error: {url} did not answer as a dialeval service (") and why in message
            assert message.endswith("); check --server") and out == ""
        assert requests


@pytest.mark.parametrize("command, answer, why", [
    ("leaderboard", {"task": {"name": "t1", "subtask": "quality", "dialogues": 2, "public_dialogues": 1},
                     "final": False, "by": "x", "columns": [{"name": "y", "label": "Y", "direction": "lower"}],
                     "rows": []}, "its sort column 'x' is not one of its columns"),
    ("leaderboard", {"task": {"name": "t1", "subtask": "quality", "dialogues": 2, "public_dialogues": 1},
                     "final": False, "by": "y", "columns": [{"name": "y", "label": "Y", "direction": "lower"}],
                     "rows": [{"rank": 1, "team": "a", "scores": {}, "submissions": 1, "last": "2026"}]},
     "rows[0].scores has no 'y'"),
    ("leaderboard", {"task": {"name": "t1", "subtask": "quality", "dialogues": "2", "public_dialogues": 1}},
     "task.dialogues: input should be a valid integer (received '2')"),
    ("me", {"team": "a", "quota": {"t1": {"remaining_today": True, "remaining_total": 1, "closed": False}},
            "submissions": []}, "quota.t1.remaining_today: input should be a valid integer (received True)"),
    ("submit", {"id": 1, "task": "t1", "scored_on": {"half": "public", "dialogues": 1}, "scores": {"a": "0.5"},
                "remaining_today": 1, "remaining_total": 1},
     "scores.a: input should be a valid number (received '0.5')"),
    ("new-token", {"team": "a", "token": "dt_\x1b[2Jx"}, "its token is not a token of the service"),
    ("register", {"team": "a", "token": "dt_x" * 100}, "its token is not a token of the service"),
])
def test_an_answer_of_the_wrong_shape_is_named(command, answer, why, run_file, capsys):
    with fake_server(body=json.dumps(answer).encode()) as (url, _):
        assert cli(commands(run_file, url)[command]) == 2
    message, out = one_error(capsys)
    assert why in message and "did not answer as a dialeval service" in message, message
    assert out == ""  # a token the answer holds is not printed when the answer is refused


def test_what_a_server_sends_is_shown_escaped(capsys):
    """A team name with a terminal escape (from a server that is not dialeval's) is shown escaped."""
    board = {"task": {"name": "t1", "subtask": "quality", "dialogues": 2, "public_dialogues": 1}, "final": False,
             "by": "y", "columns": [{"name": "y", "label": "Y", "direction": "lower is better"}],
             "rows": [{"rank": 1, "team": "evil\x1b[2J", "scores": {"y": 0.25}, "submissions": 1,
                       "last": "2026-03-01T12:00:00"}]}
    with fake_server(body=json.dumps(board).encode()) as (url, _):
        assert cli(["leaderboard", "--task", "t1", "--server", url]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "evil\\x1b[2J" in out and "0.2500" in out


@pytest.mark.parametrize("server, why", [
    ("http://[::1", "invalid IPv6 URL"),
    ("http://127.0.0.1:abc", "its port 'abc' is not a number from 1 to 65535"),
    ("http://127.0.0.1:70000", "its port '70000' is not a number from 1 to 65535"),
    ("http://127.0.0.1:0", "its port 0 is not a number from 1 to 65535"),
    ("127.0.0.1:8000", "it does not start with http:// or https://"),
    ("localhost:8000", "it does not start with http:// or https://"),
    ("ftp://example.org", "it does not start with http:// or https://"),
    ("http://", "it names no host"),
    ("http://exa mple.org", "it holds U+0020 (SPACE)"),
    ("http://127.0.0.1:8000/?x=1", "it holds a query (?...) or a fragment (#...)"),
    ("http://[zz]:8000", "IPv6"),  # the words are Python's (3.11.4 on) or httpx's
])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_malformed_server_url_is_named(command, server, why, run_file, capsys):
    assert cli(commands(run_file, server)[command]) == 2
    message, _ = one_error(capsys)
    assert message.startswith(f"error: --server {server!r} is not a valid URL: ") and why in message, message
    assert message.endswith(SERVER_RULE)


def test_a_server_url_from_the_environment_is_named_so(run_file, capsys, monkeypatch):
    monkeypatch.setenv("DIALEVAL_SERVER", "http://[::1")
    assert cli(["leaderboard", "--task", "t1"]) == 2
    assert one_error(capsys)[0] == (f"error: the environment variable DIALEVAL_SERVER 'http://[::1' is not a valid "
                                    f"URL: invalid IPv6 URL; {SERVER_RULE}")
    monkeypatch.setenv("DIALEVAL_SERVER", " ")
    assert cli(["me", "--token", "dt_x"]) == 2
    assert one_error(capsys)[0].startswith("error: the environment variable DIALEVAL_SERVER is empty; allowed are")


def test_a_password_in_the_server_url_is_not_shown(capsys):
    port = free_port()  # nothing listens there
    assert cli(["leaderboard", "--task", "t1", "--server", f"http://user:hunter2@127.0.0.1:{port}"]) == 2
    message, _ = one_error(capsys)
    assert message.startswith(f"error: cannot reach the service at http://user:***@127.0.0.1:{port}: ")
    assert "hunter2" not in message
    assert cli(["leaderboard", "--task", "t1", "--server", "http://user:hunter2@127.0.0.1:abc"]) == 2
    message, _ = one_error(capsys)
    assert "'http://user:***@127.0.0.1:abc' is not a valid URL" in message and "hunter2" not in message


# 2. a path with no dialeval API there: never the page's HTML ---------------------------------------------------

def test_a_path_prefix_with_no_service_behind_it_is_named(service, capsys):
    with LiveServer(UnderPrefix(service.app, "/dq")) as server:
        assert cli(["leaderboard", "--task", "t1", "--server", server.url + "/dq", "--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out)["task"]["name"] == "t1"
        assert cli(["leaderboard", "--task", "t1", "--server", server.url]) == 2  # the prefix left out
        assert one_error(capsys)[0] == (
            f"error: no dialeval API at {server.url}/api/tasks/t1/leaderboard (404 Not Found, text/plain): check "
            "--server (the service's URL, with its path prefix if it has one)")
    with LiveServer(service.app) as server:  # a prefix where there is none: the service's HTML error page
        assert cli(["leaderboard", "--task", "t1", "--server", server.url + "/dq/"]) == 2
        message, _ = one_error(capsys)
        assert message == (f"error: no dialeval API at {server.url}/dq/api/tasks/t1/leaderboard (404 Not Found, "
                           "text/html): check --server (the service's URL, with its path prefix if it has one)")
        assert cli(["leaderboard", "--task", "nope", "--server", server.url]) == 2  # the service's own 404: its words
        assert one_error(capsys)[0] == "error: the service refused (404): no task named 'nope'; tasks are: t1"


@pytest.mark.parametrize("status, content_type, body, expected", [
    (404, "text/html", b"<!doctype html><title>Not here</title>", "no dialeval API at @URL@/api/me (404 Not Found, "
     f"text/html): {CHECK_SERVER}"),
    (404, "application/json", b'{"detail": "Not Found"}', "no dialeval API at @URL@/api/me (404 Not Found, "
     f"application/json): {CHECK_SERVER}"),
    (403, "text/html", b"<html>forbidden</html>", "@URL@ did not answer as a dialeval service (GET /api/me: "
     "403 Forbidden, text/html); check --server"),
    (502, "text/html", b"<html>bad gateway</html>", "the server at @URL@ failed (502 Bad Gateway, text/html); try "
     "again later, or tell the organisers"),
    (301, "text/html", b"<html>moved</html>", "@URL@ answered 301 Moved Permanently, a redirect to "
     "'https://example.org/api/me': give the address it redirects to (without its /api/... part) as --server"),
    (409, "application/json", b'{"detail": "the task is closed\\u001b[2J"}',
     "the service refused (409): the task is closed\\x1b[2J"),
])
def test_a_refusal_that_is_not_the_services_never_shows_its_body(status, content_type, body, expected, capsys):
    with fake_server(status, body, content_type, {"Location": "https://example.org/api/me"}) as (url, _):
        assert cli(["me", "--token", "dt_x", "--server", url]) == 2
        message, _ = one_error(capsys)
    assert message == "error: " + expected.replace("@URL@", url), message
    assert "<" not in message


# 3. the token: checked, outer whitespace dropped, never shown ---------------------------------------------------

def test_a_token_with_whitespace_around_it_works(service, live, capsys, monkeypatch):
    token = service.team("team-b")
    for given in (token + " ", token + "\n", "\t" + token + "\r\n"):
        assert cli(["me", "--server", live.url, "--token", given, "--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out)["team"] == "team-b"
    monkeypatch.setenv("DIALEVAL_TOKEN", token + "\n")
    assert cli(["me", "--server", live.url, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["team"] == "team-b"


@pytest.mark.parametrize("token, where_in_it", [
    ("dt_SECRETpart é", "U+0020 (SPACE) at character 14"),
    ("dt_SECRETpart\u00e9", "U+00E9 (LATIN SMALL LETTER E WITH ACUTE) at character 14"),
    ("dt_SECRET\npart", "U+000A (control) at character 10"),
    ("dt_SECRET\x1b[2Jpart", "U+001B (control) at character 10"),
])
@pytest.mark.parametrize("command", ["me", "new-token", "submit"])
def test_a_token_outside_the_alphabet_is_refused_unshown(command, token, where_in_it, run_file, capsys, monkeypatch):
    with fake_server(body=b"{}") as (url, requests):
        assert cli(commands(run_file, url, token)[command]) == 2
        message, _ = one_error(capsys)
        assert message == (f"error: the token given by --token holds {where_in_it}; allowed are A-Z a-z 0-9 _ - "
                           "(the token is not shown)")
        argv = [a for a in commands(run_file, url, token)[command] if a != token]
        argv.remove("--token")
        monkeypatch.setenv("DIALEVAL_TOKEN", token)
        assert cli(argv) == 2
        message, _ = one_error(capsys)
        assert message.startswith("error: the token given by the environment variable DIALEVAL_TOKEN holds ")
        assert requests == []  # refused before any request
    assert "SECRET" not in message


def test_an_empty_or_overlong_token_is_refused(capsys):
    assert cli(["me", "--server", "http://127.0.0.1:9", "--token", " \n"]) == 2
    assert one_error(capsys)[0].startswith("error: the token given by --token is empty; give the team's token")
    assert cli(["me", "--server", "http://127.0.0.1:9", "--token", "dt_" + "a" * 300]) == 2
    message, _ = one_error(capsys)
    assert message.startswith("error: the token given by --token has 303 characters; a token has at most 256")
    assert "aaaa" not in message


def test_a_refused_token_is_not_shown(service, live, run_file, capsys):
    token = service.team("team-c")
    wrong = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    for argv in (["me"], ["new-token"], ["submit", str(run_file), "--task", "t1"]):
        assert cli([*argv, "--server", live.url, "--token", wrong]) == 2
        message, out = one_error(capsys)
        assert message == "error: the service refused (401): the token is not valid"
        assert wrong not in message + out and token not in message + out


# 4. --task: checked before any request (it is a part of the path) ------------------------------------------------

@pytest.mark.parametrize("task", ["../me/token#", "t1?per=run#", "t1/../../me", "", "-t1", "t" * 65, "t 1", "tâche"])
def test_a_task_name_the_service_cannot_have_is_refused_before_any_request(task, run_file, capsys):
    with fake_server(body=b"{}") as (url, requests):
        for argv in (["submit", str(run_file), "--token", "dt_x"], ["leaderboard"]):
            assert cli([*argv, "--task", task, "--server", url]) == 2
            message, _ = one_error(capsys)
            assert message.startswith("error: --task ") and message.endswith(f"is not allowed; allowed are {SLUG_RULE}")
        assert requests == []


def test_a_task_name_cannot_replace_the_token(service, live, run_file, capsys):
    """The probe's ``--task '../me/token#'`` POSTed to /api/me/token: the team's token was replaced, the new one
    lost."""
    token = service.team("team-d")
    assert cli(["submit", str(run_file), "--server", live.url, "--token", token, "--task", "../me/token#"]) == 2
    assert "--task '../me/token#' is not allowed" in one_error(capsys)[0]
    assert cli(["me", "--server", live.url, "--token", token, "--format", "json"]) == 0  # the token still works
    assert json.loads(capsys.readouterr().out)["submissions"] == []


# 6. a slow server: the wait is said -------------------------------------------------------------------------------

@pytest.mark.parametrize("command, after", [
    ("leaderboard", ""), ("me", ""),
    ("submit", "; the run may have been scored and counted all the same: see dialeval me"),
    ("new-token", "; the token may have been replaced all the same"),
    ("register", "; the team may have been registered all the same"),
])
def test_a_server_that_does_not_answer_is_named_with_the_wait(command, after, run_file, capsys, monkeypatch):
    monkeypatch.setattr(client, "TIMEOUT_S", 0.5)
    with silent_server() as url:
        assert cli(commands(run_file, url)[command]) == 2
    message, _ = one_error(capsys)
    assert message.startswith(f"error: {url} gave no answer within 0.5 s (it may be busy: try again later){after}")


def test_a_terminal_is_told_what_the_client_waits_for(live, capsys, monkeypatch):
    screen = io.StringIO()
    monkeypatch.setattr(client, "err", Console(file=screen, force_terminal=True, width=100))
    assert cli(["leaderboard", "--task", "t1", "--server", live.url, "--format", "json"]) == 0
    assert f"waiting for {live.url}" in screen.getvalue()
    assert json.loads(capsys.readouterr().out)["task"]["name"] == "t1"
    # not a terminal (captured): no status line
    monkeypatch.undo()
    assert cli(["leaderboard", "--task", "t1", "--server", live.url, "--format", "json"]) == 0
    assert "waiting" not in capsys.readouterr().err


# 7. --per and --format: choices of the command line ---------------------------------------------------------------

FORMATS = "error: --format: 'csv' is not allowed; allowed are table, json"


@pytest.mark.parametrize("argv, message", [
    (["leaderboard", "--task", "t1", "--per", "x"], "error: --per: 'x' is not allowed; allowed are team, run"),
    (["leaderboard", "--task", "t1", "--format", "csv"], FORMATS),
    (["me", "--token", "dt_x", "--format", "csv"], FORMATS),
])
def test_choices_are_checked_by_the_command_line(argv, message, capsys):
    with fake_server(body=b"{}") as (url, requests):
        assert cli([*argv, "--server", url]) == 2
        assert one_error(capsys)[0] == message
        assert requests == []


def test_every_run_of_the_leaderboard(service, live, capsys):
    token = service.team("team-e")
    assert service.submit(token).status_code == 201
    assert service.submit(token).status_code == 201
    assert cli(["leaderboard", "--task", "t1", "--per", "run", "--server", live.url]) == 0
    table = capsys.readouterr().out
    rows = [line for line in table.splitlines() if "team-e" in line]
    assert len(rows) == 2 and "id" in table


@pytest.mark.parametrize("command", ["submit", "leaderboard", "register", "new-token", "me"])
def test_help_of_every_client_command(command, capsys):
    assert cli([command, "--help"]) == 0
    assert "--server" in capsys.readouterr().out


# 8. the rate limit's message says its wait once --------------------------------------------------------------------

def test_the_rate_limit_says_its_wait_once(live, capsys):
    for i in range(ratelimit.REGISTRATIONS):
        assert cli(["register", f"team-r{i}", "--server", live.url]) == 0
    capsys.readouterr()
    assert cli(["register", "team-r-last", "--server", live.url]) == 2
    # the service's clock stands still: every attempt at the same instant, so the wait is the whole window
    assert one_error(capsys)[0] == ("error: the service refused (429): too many registrations from this address "
                                    "(10 per 60 minutes); try again in 3600 s")


def test_a_retry_after_the_message_does_not_say_is_added(capsys):
    with fake_server(409, b'{"detail": "the database was busy with other requests; try again"}',
                     headers={"Retry-After": "1"}) as (url, _):
        assert cli(["me", "--token", "dt_x", "--server", url]) == 2
    assert one_error(capsys)[0] == ("error: the service refused (409): the database was busy with other requests; "
                                    "try again (retry after 1 s)")


def test_me_shows_no_quota_where_no_run_is_taken_and_says_approval_is_awaited(capsys):
    """A closed task's (or an unapproved team's) quota is no run the team can submit: shown as "-", not "2 left";
    a team awaiting approval is told so."""
    answer = {"team": "a", "approved": False, "submissions": [],
              "quota": {"t1": {"remaining_today": 2, "remaining_total": 2, "closed": False, "state": "open"},
                        "t2": {"remaining_today": 3, "remaining_total": 3, "closed": True, "state": "closed"}}}
    with fake_server(body=json.dumps(answer).encode()) as (url, _):
        assert cli(["me", "--token", "dt_x", "--server", url]) == 0
    captured = capsys.readouterr()
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:5]]
            for line in captured.out.splitlines() if line.count("│") >= 5 and "t" in line.split("│")[1]}
    assert rows["t1"] == ["-", "-", "open"] and rows["t2"] == ["-", "-", "closed"], captured.out
    assert "awaits the organisers' approval" in captured.err
    answer["approved"] = True
    with fake_server(body=json.dumps(answer).encode()) as (url, _):
        assert cli(["me", "--token", "dt_x", "--server", url]) == 0
    captured = capsys.readouterr()
    assert "│ 2 " in captured.out and "awaits" not in captured.err


def test_a_runs_row_shows_that_runs_time(capsys):
    """``leaderboard --per run``: each run's own time (created_at), not its team's latest run's."""
    board = {"task": {"name": "t1", "subtask": "quality", "dialogues": 2, "public_dialogues": 1}, "final": False,
             "by": "y", "columns": [{"name": "y", "label": "Y", "direction": "lower"}],
             "rows": [{"rank": 1, "team": "a", "id": 7, "scores": {"y": 0.5}, "submissions": 2,
                       "created_at": "2026-01-02T03:04:05+00:00", "last": "2026-05-06T07:08:09+00:00"}]}
    with fake_server(body=json.dumps(board).encode()) as (url, _):
        assert cli(["leaderboard", "--task", "t1", "--per", "run", "--server", url]) == 0
    out = capsys.readouterr().out
    assert "2026-01-02 03:04" in out and "2026-05-06" not in out and "time (UTC)" in out, out


def test_submit_says_a_device_is_not_a_run_file(capsys):
    """``submit /dev/null`` said "no such file" of a path that exists."""
    assert cli(["submit", "/dev/null", "--task", "t1", "--token", "dt_x", "--server", "http://127.0.0.1:9"]) == 2
    message, _ = one_error(capsys)
    assert message == "error: /dev/null: not a regular file (a device, a pipe...); give a run file", message
