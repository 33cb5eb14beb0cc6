"""The pure policy of a chat (dialeval.service.collection.sessions): turn-taking, limits, names, utterances."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dialeval.io.wochat import ID_PATTERN
from dialeval.service.collection import sessions as S
from dialeval.service.errors import Conflict, Invalid


def test_turn_taking_alternates_and_stops_at_the_limit():
    assert [S.next_speaker(False, ["X"] * n) for n in range(4)] == ["USER", "SYSTEM", "USER", "SYSTEM"]
    assert [S.next_speaker(True, ["X"] * n) for n in range(3)] == ["USER1", "USER2", "USER1"]
    S.check_turn(False, "active", [], "USER", 4)
    with pytest.raises(Conflict, match="engine's reply"):
        S.check_turn(False, "active", ["USER"], "USER", 4)
    with pytest.raises(Conflict, match="other person"):
        S.check_turn(True, "active", [], "USER2", 4)
    with pytest.raises(Conflict, match="limit of 2 turns"):
        S.check_turn(False, "active", ["USER", "SYSTEM"], "USER", 2)
    for status, msg in (("waiting", "nobody has joined"), ("ended", "is ended"), ("abandoned", "is abandoned")):
        with pytest.raises(Conflict, match=msg):
            S.check_turn(True, status, [], "USER1", 4)
    assert S.awaiting_reply(False, "active", ["USER"], 4) and not S.awaiting_reply(False, "active", ["USER"], 1)
    assert not S.awaiting_reply(True, "active", ["USER1"], 4)


def test_alive_window():
    t = datetime(2026, 1, 1, tzinfo=UTC)
    assert S.is_alive(t, t + S.WAIT_ALIVE) and not S.is_alive(t, t + S.WAIT_ALIVE + timedelta(seconds=1))
    assert not S.is_alive(None, t)


def test_ids_and_names():
    for name in ("IRIS", "bot", "TickTock", "a.b-c", "xy"):
        assert ID_PATTERN.match(S.dialogue_id(S.check_engine_name(name), 7))
    # ... and no name the export would find in every turn (as SYSTEM_NAME): one letter, a common word
    for bad in ("gpt4", "1bot", "my_bot", "human", "HUMAN", "", "a b", "x" * 33, "<b>", "x", "you", "I", "Thanks"):
        with pytest.raises(Invalid):
            S.check_engine_name(bad)
    assert S.dialogue_id("IRIS", 99999) == "IRIS99999"
    with pytest.raises(Conflict, match="5 digits"):
        S.dialogue_id("IRIS", 100000)
    assert S.check_person_name("  Ann   Lee ") == "Ann Lee" and S.check_person_name("") == ""
    assert S.check_person_name("O'Neil-Smith Jr") == "O'Neil-Smith Jr" and S.check_person_name("李") == "李"
    for bad in ("user_name", "<script>", "-ann", "a" * 41, "ann\x00", 5, None):
        with pytest.raises(Invalid):
            S.check_person_name(bad)
    # The export replaces a name wherever it stands as a word: "you" would rewrite every turn of the chat.
    for common in ("you", "You", "I", "the", "you too", "x"):
        with pytest.raises(Invalid, match="common word or a single letter"):
            S.check_person_name(common)
    assert S.check_person_name("Lee") == "Lee" and S.check_person_name("Jo") == "Jo"
    # ... judged as the export's case-insensitive pattern matches: dotless and dotted I match "i", the long s "s",
    # the Kelvin sign "k"; "ıt ıs" would have rewritten every "it is"
    for lookalike in ("ı", "İ", "ıs", "ıt ıs", "ſo", "\u212a", "thank yoU"):
        with pytest.raises(Invalid, match="common word or a single letter"):
            S.check_person_name(lookalike)
    assert S.check_person_name("Işık") == "Işık" and S.check_person_name("A B") == "A B"


def test_utterances():
    assert S.clean_utterance("  a\r\nb\rc \n") == "a\nb\nc"
    for bad in ("", " \n ", "\u200b", "\ufeff \u200b\n", "a\x00", "a\x1b", "a\ud800", "x" * 2001, None, 3):
        with pytest.raises(Invalid):
            S.clean_utterance(bad)
    assert S.clean_utterance("<script>alert(1)</script>") == "<script>alert(1)</script>"  # stored as written
    for override in ("\u202e", "\u202a", "\u2066", "\u2069"):  # reorder what annotators see
        with pytest.raises(Invalid, match=f"bidi control U\\+{ord(override):04X}"):
            S.clean_utterance(f"good {override}doog")
    hebrew = "\u05e9\u05dc\u05d5\u05dd \u200fok\u200e"  # right-to-left writing and its marks stay
    assert S.clean_utterance(hebrew) == hebrew
