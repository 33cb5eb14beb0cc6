"""Leaderboard pages: the HTML board shows 100 rows a page (a board of 50,000 runs was one 40 MB page), the JSON
API one page when asked; a bad page number is a 400 or 404 with a message, never a 5xx."""

from __future__ import annotations

import re

import pytest
from service_support import make_run

from dialeval.service.errors import NotFound, ServiceError
from dialeval.service.leaderboard import board


@pytest.mark.parametrize(("rows", "page", "per_page", "expected"), [
    (0, 1, 100, (0, 0, 1)),
    (1, 1, 100, (0, 1, 1)),
    (100, 1, 100, (0, 100, 1)),
    (101, 2, 100, (100, 101, 2)),
    (250, 3, 100, (200, 250, 3)),
    (7, "2", "3", (3, 6, 3)),
    (7, "3", 3, (6, 7, 3)),
])
def test_page_bounds(rows, page, per_page, expected):
    assert board.page_bounds(rows, page, per_page) == expected


@pytest.mark.parametrize(("page", "per_page", "error", "text"), [
    (4, 100, NotFound, "page 4 is past the last page; this leaderboard has 3 pages of 100 rows"),
    (0, 100, ServiceError, "page 0 is not allowed; allowed are integers from 1 up"),
    ("-1", 100, ServiceError, "page '-1' is not allowed"),
    ("x", 100, ServiceError, "page 'x' is not allowed"),
    ("1e3", 100, ServiceError, "page '1e3' is not allowed"),
    ("²", 100, ServiceError, "page '²' is not allowed"),
    ("9" * 40, 100, ServiceError, "is not allowed"),
    (True, 100, ServiceError, "page True is not allowed"),
    (1, 0, ServiceError, "rows per page 0 is not allowed; allowed are integers from 1 to 1000"),
    (1, "1001", ServiceError, "rows per page '1001' is not allowed"),
])
def test_bad_pages_are_refused_with_what_is_allowed(page, per_page, error, text):
    with pytest.raises(error, match=re.escape(text)):
        board.page_bounds(250, page, per_page)


def test_board_page_keeps_the_ranks_and_does_not_change_the_board():
    rows = [{"rank": i + 1} for i in range(5)]
    whole = {"by": "x", "rows": rows}
    shown = board.board_page(whole, 2, 2)
    assert [r["rank"] for r in shown["rows"]] == [3, 4]
    assert shown["page"] == {"number": 2, "pages": 3, "per_page": 2, "rows": 5}
    assert whole == {"by": "x", "rows": rows} and len(rows) == 5


def _runs(service, n: int) -> None:
    token = service.team()
    service.clock.t = service.clock.t.replace(year=2026)
    for i in range(n):
        r = service.submit(token, make_run(service.gold, seed=10 + i))
        assert r.status_code == 201, r.text
        service.clock.t = service.clock.t.replace(day=1 + (i + 1) // 5 % 28, month=3 + (i + 1) // 140)


def test_html_board_is_paged_with_links_and_the_json_api_on_request(service, monkeypatch):
    monkeypatch.setattr(board, "ROWS_PER_PAGE", 3)
    _runs(service, 7)
    whole = service.client.get("/api/tasks/t1/leaderboard?per=run").json()
    assert len(whole["rows"]) == 7 and "page" not in whole  # the API gives every row unless asked

    first = service.client.get("/tasks/t1?per=run")
    assert first.status_code == 200
    shown = re.findall(r"<tr><td>(\d+)</td>", first.text)
    assert shown == ["1", "2", "3"]
    assert "page 1 of 3" in first.text and 'rel="next"' in first.text and 'rel="prev"' not in first.text
    by = whole["by"]
    last = service.client.get(f"/tasks/t1?per=run&by={by}&page=3")
    assert re.findall(r"<tr><td>(\d+)</td>", last.text) == ["7"]
    assert "Rows 7–7 of 7" in last.text and 'rel="prev"' in last.text and 'rel="next"' not in last.text
    assert 'page=2">2</a>' in last.text

    api = service.client.get("/api/tasks/t1/leaderboard?per=run&page=2&per_page=4").json()
    assert [r["rank"] for r in api["rows"]] == [5, 6, 7]
    assert api["page"] == {"number": 2, "pages": 2, "per_page": 4, "rows": 7}
    assert api["rows"] == whole["rows"][4:]


@pytest.mark.parametrize(("query", "status"), [
    ("page=9", 404), ("page=0", 400), ("page=abc", 400), ("page=" + "9" * 300, 400), ("page=%00", 400),
    ("per_page=0", 400), ("per_page=5000", 400),
])
def test_bad_page_numbers_are_refused_not_5xx(service, query, status):
    service.submit(service.team())
    api = service.client.get(f"/api/tasks/t1/leaderboard?{query}")
    assert api.status_code == status, api.text
    if query.startswith("page="):  # the HTML board has 100 rows a page
        html = service.client.get(f"/tasks/t1?{query}")
        assert html.status_code == status, html.text
        assert "is not allowed" in html.text or "past the last page" in html.text
    assert "is not allowed" in api.json()["detail"] or "past the last page" in api.json()["detail"]
