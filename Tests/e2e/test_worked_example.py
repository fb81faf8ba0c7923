"""DESIGN.md's worked example with three real nodes, at half speed (1 s there is 0.5 s here).

Timings are checked against what the test set up, as it measured it: each mark lies between
when it was typed and when the node showed it, a pause between when it was typed and seen; a
held message is shown never before its due time and at most TIMING_TOLERANCE_MS after. A sleep
that overslept on a busy machine moves what is expected with it, and the checks still catch a
node that is off."""

import re
import time

from huddletest.node import TIMING_TOLERANCE_MS, answered, calibrate, handled, mark, within
from huddletest.polling import poll


def connect_three(lan):
    one = lan("one")
    two = lan("two", peers=[one.address])
    three = lan("three", peers=[one.address])
    for node in (one, two, three):
        for other in ("one", "two", "three"):
            if other != node.name:
                node.wait_for(lambda o, n=other: o["type"] == "join" and o["nick"] == n, what=f"{other} joining")
    return one, two, three


def delay_on(reader, message, sent) -> int:
    """How long after it was written `reader` showed `message`, in ms (one clock: one machine)."""
    return message["shown_at"] - sent["sent_at"]


def test_worked_example_holds_messages_back_by_the_stream_offsets(lan):
    one, two, three = connect_three(lan)

    start = time.monotonic()

    def at(seconds):
        time.sleep(max(0, start + seconds - time.monotonic()))

    one_a = mark(one, "A")       # t = 1 s in the design
    at(1.0)
    two_a = mark(two, "A")       # t = 2 s: two is 1 s behind one
    at(2.0)
    three_b = mark(three, "B")   # t = 3 s: nothing known about three yet
    at(4.0)
    two_b = mark(two, "B")       # t = 5 s: three is 1 s ahead of one

    # What those marks set up, as the test timed them: two behind one by A, three against two
    # by B (each a window: at least, at most).
    two_behind = two_a - one_a
    two_after_three = two_b - three_b
    expected = {"one": (0, 0), "two": two_behind,
                "three": (two_behind[0] - two_after_three[1], two_behind[1] - two_after_three[0])}
    assert within(1000, expected["two"], 500) and within(-1000, expected["three"], 500), expected  # the design

    def offsets_settled(o):
        offsets = o.get("offsets", {})
        return o["type"] == "offsets" and all(offsets.get(n) is not None for n in ("one", "two", "three"))

    found = {}
    for node in (one, two, three):
        found[node.name] = offsets = node.wait_for(offsets_settled, what="all three calibrated")["offsets"]
        assert found[node.name] == found["one"], found  # the same on every node
        for nick, window in expected.items():
            assert within(offsets[nick], window), (node.name, offsets, expected)

    # status --json shows the same offsets.
    room = next(r for r in one.status()["rooms"] if r["name"] == "superbowl")
    by_nick = {m["nick"]: m for m in room["members"]}
    for nick, value in found["one"].items():
        assert by_nick[nick]["calibrated"]
        assert by_nick[nick]["offset_ms"] == value

    # three (about 1 s ahead of one, 2 s ahead of two) writes: each reader shows it when its own
    # stream gets there, by its offsets: never before, and late by no more than a timer can be.
    three.say("what a catch")
    sent = three.message("what a catch")
    assert sent["held_ms"] == 0
    for reader in (one, two):
        shown = reader.message("what a catch")
        due = found[reader.name][reader.name] - found[reader.name]["three"]  # about 1 s on one, 2 s on two
        assert due <= delay_on(reader, shown, sent) <= due + TIMING_TOLERANCE_MS, (reader.name, due, shown)
        # ...held from its arrival, a moment after it was sent.
        assert 0 <= delay_on(reader, shown, sent) - shown["held_ms"] <= TIMING_TOLERANCE_MS, shown
        assert shown["game_ms"] is not None

    # one's messages appear on three at once.
    one.say("no spoilers")
    sent = one.message("no spoilers")
    on_three = three.message("no spoilers")
    assert delay_on(three, on_three, sent) <= TIMING_TOLERANCE_MS
    assert on_three["held_ms"] <= 50

    for node in (one, two, three):
        assert node.quit() == 0


def elapsed_shown(text: str, prefix: str) -> int:
    """The whole seconds of `prefix M:SS` in `text`."""
    minutes, seconds = re.search(re.escape(prefix) + r" (\d+):(\d\d)", text).groups()
    return int(minutes) * 60 + int(seconds)


def test_a_pause_holds_everything_and_adds_its_span_to_the_offset(lan):
    """bob's stream is 1 s behind alice's; he pauses 3 s: her next message waits 4 s for him."""
    alice = lan("alice")
    bob = lan("bob", peers=[alice.address])
    bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == "alice")
    behind = calibrate(alice, bob, 1)

    # The pause began after it was typed and before bob said so: the test knows its span to
    # within those instants, at either end.
    pause, _ = answered(bob, "/pause", lambda o: o["type"] == "info" and o["message"].startswith("paused"))
    assert bob.status()["node"]["paused_ms"] >= 0
    alice.say("during the pause")
    # bob has it, and holds it (so "not shown" below is a check that can fail).
    poll(lambda: bob.status()["rooms"][0]["held_back_count"] >= 1, timeout=5, interval=0.05,
         what="bob holding alice's line")
    time.sleep(max(0, pause.seen + 1.1 - time.monotonic()))  # the scenario: paused over a second before /status
    status, line = answered(bob, "/status", lambda o: o["type"] == "info" and o["message"].startswith("superbowl · "))
    assert int(status.typed - pause.seen) <= elapsed_shown(line["message"], "paused") \
        <= int(status.seen - pause.typed), line
    time.sleep(max(0, pause.seen + 3 - time.monotonic()))  # the scenario: a pause of 3 s
    handled(bob)
    assert "during the pause" not in bob.shown_texts()
    resume, resumed = answered(bob, "/resume", lambda o: o["type"] == "info" and o["message"].startswith("resumed"))
    span = resume - pause  # ms, at least and at most
    assert int(span[0] / 1000) <= elapsed_shown(resumed["message"], "resumed after") <= int(span[1] / 1000), resumed
    grew = float(re.search(r"your offset grew by (\d+\.\d) s", resumed["message"]).group(1)) * 1000
    assert within(grew, span, 50), (span, resumed)
    # alice's offsets see bob that much further behind: the nudge was gossiped.
    alice.wait_for(lambda o: o["type"] == "offsets" and within(o["offsets"].get("bob") or 0,
                                                               (behind[0] + span[0], behind[1] + span[1]), 50))

    # Held by the offset calibrated and the pause, both as the test measured them, give or take
    # a late timer or a late arrival.
    low = behind[0] + span[0] - TIMING_TOLERANCE_MS
    high = behind[1] + span[1] + TIMING_TOLERANCE_MS
    during = bob.message("during the pause", timeout=10)
    assert low <= during["held_ms"] <= high, (low, during, high)
    alice.say("after the pause")
    after = bob.message("after the pause", timeout=10)
    assert low <= after["held_ms"] <= high, (low, after, high)
    assert bob.status()["node"].get("paused_ms") is None


def test_a_score_from_a_stream_ahead_reaches_a_viewer_behind_at_its_own_moment(lan):
    alice = lan("alice")
    bob = lan("bob", peers=[alice.address])
    bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == "alice")
    alice.say("/teams Chiefs Eagles")
    bob.wait_for(lambda o: o["type"] == "teams" and o["home"] == "Chiefs")
    behind = calibrate(alice, bob, 2)

    alice.say("/score 7-0")
    sent = alice.wait_for(lambda o: o["type"] == "score")
    sent_seen = time.monotonic()
    assert sent["held_ms"] == 0 and [sent["home"], sent["guest"]] == [7, 0]
    # bob has the score and holds it (so "not shown" below is a check that can fail).
    poll(lambda: bob.status()["rooms"][0]["held_back_count"] >= 1, timeout=behind[0] / 2000, interval=0.05,
         what="bob holding alice's score")
    time.sleep(max(0, sent_seen + behind[0] / 2000 - time.monotonic()))
    # Half-way: bob's stream has not reached the touchdown yet; neither has his scoreboard.
    handled(bob)
    assert not [o for o in bob.outputs if o["type"] == "score"]
    assert bob.status()["rooms"][0].get("score") is None
    got = bob.wait_for(lambda o: o["type"] == "score", timeout=10)
    assert behind[0] - TIMING_TOLERANCE_MS <= got["held_ms"] <= behind[1] + TIMING_TOLERANCE_MS, (behind, got)
    assert got["by"] == "alice" and got["home_team"] == "Chiefs" and not got["correction"]
    score = bob.status()["rooms"][0]["score"]
    assert score == {"home": 7, "guest": 0, "by": "alice", "home_team": "Chiefs", "guest_team": "Eagles"}
