"""The kept leaderboards: one build per change however many read at once, one board per column, a bound in rows.

Found by a performance probe at 50,000 runs: after an upload, 8 readers each built the board (14-18 s each, the
server from 1.06 to 1.66 GB); the main column named and left out were two boards; twelve boards took 830 MB."""

from __future__ import annotations

import threading
import time

from service_support import at_once

from dialeval.service.leaderboard import board


def _counting(monkeypatch, pause: float = 0.0) -> list:
    calls: list = []
    real = board.compute
    lock = threading.Lock()

    def compute(*args, **kw):
        with lock:
            calls.append(kw.get("by"))
        time.sleep(pause)
        return real(*args, **kw)

    monkeypatch.setattr(board, "compute", compute)
    monkeypatch.setattr(board, "_boards", type(board._boards)())
    return calls


def test_readers_at_once_after_a_change_build_the_board_once(service, monkeypatch):
    calls = _counting(monkeypatch, pause=0.3)
    service.submit(service.team())
    boards = at_once([lambda: board.leaderboard(service.db, "t1")] * 6)
    assert len(calls) == 1
    assert all(b is boards[0] for b in boards)


def test_the_main_column_named_or_left_out_is_one_board(service, monkeypatch):
    calls = _counting(monkeypatch)
    service.submit(service.team())
    rank_by = board.leaderboard(service.db, "t1")["by"]
    assert board.leaderboard(service.db, "t1", by=rank_by) is board.leaderboard(service.db, "t1")
    assert len(calls) == 1


def test_kept_boards_are_bounded_in_rows_and_the_newest_is_kept(service, monkeypatch):
    _counting(monkeypatch)
    service.submit(service.team())
    monkeypatch.setattr(board, "ROWS_KEPT", 1)
    columns = [c["name"] for c in board.leaderboard(service.db, "t1")["columns"]]
    for column in columns[:3]:
        board.leaderboard(service.db, "t1", by=column)
        assert len(board._boards) == 1
