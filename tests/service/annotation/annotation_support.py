"""Helpers of the annotation tests and benchmark: a corpus of made-up chats and an app with a project."""

from __future__ import annotations

import random
from datetime import timedelta

from service_support import FakeClock

from dialeval.corpus import Corpus, Dialogue, Turn
from dialeval.io.wochat import VALIDITY, validity_scale
from dialeval.service import invitations
from dialeval.service.annotation import projects
from dialeval.service.annotation.schemes import SCHEMES
from dialeval.service.app import create_app
from dialeval.service.config import Settings
from dialeval.service.db import Database


def chats_corpus(n: int = 30, turns: int = 4, prefix: str = "IRIS") -> Corpus:
    """``n`` dialogues of ``turns`` alternating user/system turns (ids IRIS00000...)."""
    ds = [Dialogue(f"{prefix}{i:05d}", [Turn("user" if t % 2 == 0 else "system", [f"utterance {i}.{t}"])
                                        for t in range(turns)], meta={"names": {"SYSTEM": prefix, "USER": "U"}})
          for i in range(n)]
    return Corpus(ds, {VALIDITY: validity_scale()}, "wochat", "made up")


class Projects:
    """An app on ``url`` (fake clock), a TestClient, and helpers to make a project and drive the API."""

    def __init__(self, url: str) -> None:
        from fastapi.testclient import TestClient

        self.clock = FakeClock()
        self.db = Database(url)
        self.app = create_app(Settings(database_url=url, clock=self.clock), self.db)
        self.client = TestClient(self.app)

    def project(self, name: str = "p1", corpus: Corpus | None = None, scheme: str = "wochat", overlap: int = 3,
                n_codes: int = 3, **kw) -> list[str]:
        projects.create_project(self.db, name, corpus or chats_corpus(), scheme, overlap, self.clock(), seed=1, **kw)
        return invitations.create_invitations(self.db, "annotation", name, n_codes, self.clock())

    def tick(self, seconds: float = 1.0) -> None:
        self.clock.t += timedelta(seconds=seconds)

    def call(self, method: str, path: str, code: str | None, json: dict | None = None):
        headers = {"Authorization": f"Bearer {code}"} if code else {}
        return self.client.request(method, path, headers=headers, json=json)

    def close(self) -> None:
        self.client.close()
        self.db.dispose()


def label_all(view: dict, choose=lambda scale, turn: "VALID") -> list[tuple[int, str, str]]:
    """(turn, scale, value) for every required control of an assignment view."""
    return [(m["turn"], m["scale"], choose(m["scale"], m["turn"])) for m in view["missing"]]


def annotate_all(pj: Projects, codes: list[str], project: str, rng: random.Random) -> dict:
    """Every code labels items until none is left, at random; returns what each gave: {(did, annotator):
    {(turn, scale): value}} (flags only where set to yes)."""
    given: dict = {}
    scheme = SCHEMES[projects.get_project(pj.db, project).scheme]
    for code in codes:
        who = projects.annotator(pj.db, project, code, pj.clock())
        while (asg := projects.next_assignment(pj.db, who, pj.clock())) is not None:
            _a, item, _labels = projects.get_assignment(pj.db, who, asg.id)
            senders = [t["sender"] for t in item.dialogue["turns"]]
            mine = given.setdefault((item.dialogue_id, who.label), {})
            for u, controls in scheme.units(senders, hidden=who.project.hide_speakers):
                for c in controls:
                    if c.flag and rng.random() < 0.5:
                        continue
                    value = "yes" if c.flag else rng.choice(c.scale.levels)
                    projects.save_label(pj.db, who, asg.id, u, c.name, value, pj.clock())
                    mine[(u, c.name)] = value
            projects.submit(pj.db, who, asg.id, pj.clock())
    return given


def join_page(browser, server, project: str, code: str, turns: int, **context):
    """An annotator's page (a new browser context, ``context`` its options) joined with ``code``, showing its
    first item of ``turns`` turns; and the list its console problems go to (:func:`service_support.watch`)."""
    from playwright.sync_api import expect
    from service_support import watch

    p = browser.new_context(**context).new_page()
    problems = watch(p)
    p.goto(f"{server.url}/annotate/{project}")
    p.fill("input[name=code]", code)
    p.click("#join-form button[type=submit]")
    expect(p.locator("#dialogue li")).to_have_count(turns)
    return p, problems
