"""A leaked credential can be stopped: a team's token replaced (by the organisers or by the team), an organiser token
revoked, an invitation code of any kind revoked. Found by a security probe: none of them could be, short of SQL."""

from __future__ import annotations

import json

import pytest
from service_support import LiveServer

from dialeval.cli.main import run as cli
from dialeval.service import invitations, teams
from dialeval.service.errors import InvalidValue, NotFound, Unauthorized


def test_a_team_replaces_its_own_token_and_the_old_one_stops(service):
    old = service.team("leaky")
    r = service.client.post("/api/me/token", headers={"Authorization": f"Bearer {old}"})
    assert r.status_code == 200 and r.json()["team"] == "leaky"
    new = r.json()["token"]
    assert new != old and new.startswith("dt_")
    assert service.client.get("/api/me", headers={"Authorization": f"Bearer {old}"}).status_code == 401
    assert service.submit(old).status_code == 401
    assert service.client.get("/api/me", headers={"Authorization": f"Bearer {new}"}).json()["team"] == "leaky"
    assert service.submit(new).status_code == 201
    # the replaced token cannot replace the new one, nor can no token
    assert service.client.post("/api/me/token", headers={"Authorization": f"Bearer {old}"}).status_code == 401
    assert service.client.post("/api/me/token").status_code == 401


def test_a_replacement_racing_with_a_stale_token_is_refused(service):
    old = service.team("racer")
    _, new = teams.new_team_token(service.db, "racer", token=old)
    with pytest.raises(Unauthorized):
        teams.new_team_token(service.db, "racer", token=old)
    assert teams.authenticate(service.db, new).name == "racer"


def test_organisers_replace_a_teams_token_by_its_name(service):
    old = service.team("Team Ä")
    team, new = teams.new_team_token(service.db, "team ä")  # case does not matter, as for approve-team
    assert team.name == "Team Ä"
    with pytest.raises(Unauthorized):
        teams.authenticate(service.db, old)
    assert teams.authenticate(service.db, new).name == "Team Ä"
    with pytest.raises(NotFound, match="no team named 'nobody'"):
        teams.new_team_token(service.db, "nobody")


def test_an_organiser_token_is_revoked_by_its_id(service):
    keep = teams.create_admin_token(service.db, service.clock(), "keep")
    leaked = teams.create_admin_token(service.db, service.clock(), "laptop")
    listed = teams.list_admin_tokens(service.db)
    assert [t["label"] for t in listed] == ["keep", "laptop"] and all("token" not in t for t in listed)
    gone = teams.revoke_admin_token(service.db, listed[1]["id"])
    assert gone["label"] == "laptop"
    with pytest.raises(Unauthorized):
        teams.authenticate_admin(service.db, leaked)
    teams.authenticate_admin(service.db, keep)
    r = service.client.get("/api/admin/teams", headers={"Authorization": f"Bearer {leaked}"})
    assert r.status_code == 401
    with pytest.raises(NotFound, match="list-admin-tokens"):
        teams.revoke_admin_token(service.db, listed[1]["id"])
    for bad in (0, -1, True, "1", 1.0):
        with pytest.raises(InvalidValue, match="is not allowed; allowed are the ids"):
            teams.revoke_admin_token(service.db, bad)


def test_invitation_codes_of_every_kind_are_revoked(service):
    [team_code] = invitations.create_invitations(service.db, "team", "", 1, service.clock())
    inv = invitations.revoke_code(service.db, team_code, service.clock())
    assert inv.kind == "team" and inv.revoked_at is not None
    with pytest.raises(Unauthorized):
        invitations.check(service.db, team_code, "team")
    assert invitations.counts(service.db, "team")["revoked"] == 1
    with pytest.raises(NotFound, match="no invitation has this code"):
        invitations.revoke_code(service.db, "dti_nothing", service.clock())
    for bad in ("", "  ", None, 3):
        with pytest.raises(Exception, match="is not allowed"):
            invitations.revoke_code(service.db, bad, service.clock())


def test_the_commands(sqlite_url, capsys):
    db = ["--database-url", sqlite_url]
    assert cli(["admin", "create-team", "crew", *db]) == 0
    old = capsys.readouterr().out.strip()
    assert cli(["admin", "new-team-token", "CREW", *db]) == 0
    captured = capsys.readouterr()
    new = captured.out.strip()
    assert new.startswith("dt_") and new != old and "the old one no longer works" in captured.err

    assert cli(["admin", "create-admin-token", "--label", "ci", *db]) == 0
    capsys.readouterr()
    assert cli(["admin", "list-admin-tokens", *db]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["label"] == "ci"
    assert cli(["admin", "revoke-admin-token", str(listed["id"]), *db]) == 0
    assert "(ci)" in capsys.readouterr().err
    assert cli(["admin", "revoke-admin-token", str(listed["id"]), *db]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no organiser token") and err.count("\n") == 1

    assert cli(["admin", "invite-teams", "2", *db]) == 0
    a, b = capsys.readouterr().out.split()
    assert cli(["admin", "revoke-code", a, "dti_unknown", b, *db]) == 2
    err = capsys.readouterr().err
    assert err.startswith("team code (dti_") and err.splitlines()[1].startswith(
        "error: code 2 ('dti_unkn...'; the 1 before it was revoked): no invitation has this code")
    assert cli(["admin", "revoke-code", b, *db]) == 0
    assert "team code" in capsys.readouterr().err


def test_the_client_command(service, capsys):
    old = service.team("clienteer")
    with LiveServer(service.app) as server:
        assert cli(["new-token", "--server", server.url, "--token", old]) == 0
        new = capsys.readouterr().out.strip()
        assert cli(["me", "--server", server.url, "--token", new, "--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out)["team"] == "clienteer"
        assert cli(["me", "--server", server.url, "--token", old]) == 2
        assert "refused (401)" in capsys.readouterr().err
