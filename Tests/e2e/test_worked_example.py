"""DESIGN.md's worked example with three real nodes, at half speed (1 s there is 0.5 s here)."""

import time

from huddletest.node import calibrate

TOLERANCE_MS = 150


def connect_three(lan):
    one = lan("one")
    two = lan("two", peers=[one.address])
    three = lan("three", peers=[one.address])
    for node in (one, two, three):
        for other in ("one", "two", "three"):
            if other != node.name:
                node.wait_for(lambda o, n=other: o["type"] == "join" and o["nick"] == n, what=f"{other} joining")
    return one, two, three


def test_worked_example_holds_messages_back_by_the_stream_offsets(lan):
    one, two, three = connect_three(lan)

    start = time.monotonic()

    def at(seconds):
        time.sleep(max(0, start + seconds - time.monotonic()))

    one.say("/now A")         # t = 1 s in the design
    at(1.0)
    two.say("/now A")         # t = 2 s: two is 1 s behind one
    at(2.0)
    three.say("/now B")       # t = 3 s: nothing known about three yet
    at(4.0)
    two.say("/now B")         # t = 5 s: three is 1 s ahead of one

    def offsets_settled(o):
        offsets = o.get("offsets", {})
        return o["type"] == "offsets" and all(offsets.get(n) is not None for n in ("one", "two", "three"))

    expected = {"one": 0, "two": 1000, "three": -1000}
    for node in (one, two, three):
        offsets = node.wait_for(offsets_settled, what="all three calibrated")["offsets"]
        for nick, value in expected.items():
            assert abs(offsets[nick] - value) <= TOLERANCE_MS, (node.name, offsets)

    # status --json shows the same offsets.
    room = next(r for r in one.status()["rooms"] if r["name"] == "superbowl")
    by_nick = {m["nick"]: m for m in room["members"]}
    for nick, value in expected.items():
        assert by_nick[nick]["calibrated"]
        assert abs(by_nick[nick]["offset_ms"] - value) <= TOLERANCE_MS

    # three (1 s ahead of one, 2 s ahead of two) writes: one shows it 1 s later, two 2 s later.
    three.say("what a catch")
    sent = three.message("what a catch")
    assert sent["held_ms"] == 0
    on_one = one.message("what a catch")
    on_two = two.message("what a catch")
    assert abs((on_one["shown_at"] - sent["sent_at"]) - 1000) <= TOLERANCE_MS, on_one
    assert abs((on_two["shown_at"] - sent["sent_at"]) - 2000) <= TOLERANCE_MS, on_two
    assert on_one["held_ms"] > 700 and on_two["held_ms"] > 1700
    assert on_one["game_ms"] is not None

    # one's messages appear on three at once.
    one.say("no spoilers")
    sent = one.message("no spoilers")
    on_three = three.message("no spoilers")
    assert on_three["shown_at"] - sent["sent_at"] <= TOLERANCE_MS
    assert on_three["held_ms"] <= 50

    for node in (one, two, three):
        assert node.quit() == 0


def test_a_pause_holds_everything_and_adds_its_span_to_the_offset(lan):
    """bob's stream is 1 s behind alice's; he pauses 3 s: her next message waits 4 s for him."""
    alice = lan("alice")
    bob = lan("bob", peers=[alice.address])
    bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == "alice")
    calibrate(alice, bob, 1)

    bob.say("/pause")
    bob.wait_for(lambda o: o["type"] == "info" and o["message"].startswith("paused"))
    paused = time.monotonic()
    assert bob.status()["node"]["paused_ms"] >= 0
    alice.say("during the pause")
    time.sleep(1.1)
    bob.say("/status")
    line = bob.wait_for(lambda o: o["type"] == "info" and o["message"].startswith("superbowl · "))["message"]
    assert "paused 0:01" in line, line
    time.sleep(max(0, paused + 3 - time.monotonic()))
    assert "during the pause" not in bob.shown_texts()
    bob.say("/resume")
    resumed = bob.wait_for(lambda o: o["type"] == "info" and o["message"].startswith("resumed after 0:03"))
    assert "your offset grew by 3" in resumed["message"], resumed
    # alice's offsets see bob 3 s further behind: the nudge was gossiped.
    alice.wait_for(lambda o: o["type"] == "offsets" and (o["offsets"].get("bob") or 0) >= 3800)

    during = bob.message("during the pause", timeout=10)
    assert 3700 <= during["held_ms"] <= 4600, during
    alice.say("after the pause")
    after = bob.message("after the pause", timeout=10)
    assert 3700 <= after["held_ms"] <= 4500, after
    assert bob.status()["node"].get("paused_ms") is None


def test_a_score_from_a_stream_ahead_reaches_a_viewer_behind_at_its_own_moment(lan):
    alice = lan("alice")
    bob = lan("bob", peers=[alice.address])
    bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == "alice")
    alice.say("/teams Chiefs Eagles")
    bob.wait_for(lambda o: o["type"] == "teams" and o["home"] == "Chiefs")
    calibrate(alice, bob, 2)

    alice.say("/score 7-0")
    sent = alice.wait_for(lambda o: o["type"] == "score")
    assert sent["held_ms"] == 0 and [sent["home"], sent["guest"]] == [7, 0]
    time.sleep(1)
    # Half-way: bob's stream has not reached the touchdown yet; neither has his scoreboard.
    assert not [o for o in bob.outputs if o["type"] == "score"]
    assert bob.status()["rooms"][0].get("score") is None
    got = bob.wait_for(lambda o: o["type"] == "score", timeout=10)
    assert 1700 <= got["held_ms"] <= 2600, got
    assert got["by"] == "alice" and got["home_team"] == "Chiefs" and not got["correction"]
    score = bob.status()["rooms"][0]["score"]
    assert score == {"home": 7, "guest": 0, "by": "alice", "home_team": "Chiefs", "guest_team": "Eagles"}
