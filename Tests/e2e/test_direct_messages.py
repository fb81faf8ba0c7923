"""Direct messages: only the recipient reads them, and they are held back like any message."""

import subprocess
import time

from huddletest.node import TIMING_TOLERANCE_MS, alive_to_each_other, calibrate, heard_since, holds_all_of


def meet(*nodes):
    for node in nodes:
        for other in nodes:
            if other is not node:
                node.wait_for(lambda o, n=other.name: o["type"] == "join" and o["nick"] == n)


def alice_and_bob(lan):
    """alice and bob in one room, each holding the other's key for direct messages (probes carry it)."""
    alice = lan("alice")
    bob = lan("bob", peers=[alice.address])
    meet(alice, bob)
    alive_to_each_other(alice, bob)
    return alice, bob


def direct(node, text, timeout=15):
    return node.wait_for(lambda o: o["type"] == "message" and o["text"] == text and o.get("direct"),
                         timeout=timeout, what=f"direct message {text!r}")


def test_a_direct_message_reaches_only_its_recipient_and_is_held_back(lan):
    alice = lan("alice")
    bob = lan("bob", peers=[alice.address])
    carol = lan("carol", peers=[alice.address])
    meet(alice, bob, carol)

    # Bob's stream is 2 s behind alice's: he marks kickoff 2 s after her.
    behind = calibrate(alice, bob, 2)
    alive_to_each_other(alice, bob)  # probes carry the agreement keys

    alice.say("/msg bob psst, the play is coming")
    mine = direct(alice, "psst, the play is coming")
    assert mine["room"] == "@bob" and mine["to"] == "bob" and mine["nick"] == "alice"
    got = direct(bob, "psst, the play is coming")
    assert got["room"] == "@alice" and got["to"] == "bob" and got["nick"] == "alice"
    assert behind[0] - TIMING_TOLERANCE_MS <= got["held_ms"] <= behind[1] + TIMING_TOLERANCE_MS, (behind, got)

    bob.say("/msg alice thanks")
    back = direct(alice, "thanks")
    assert back["held_ms"] < 300 and back["to"] == "alice"

    # Each then says something in the room: carol shows it, and with it everything either sent
    # her before (one socket each, read in order). She has shown nothing of the direct messages.
    for node in (alice, bob):
        node.say(f"{node.name} in the room")
        carol.message(f"{node.name} in the room")
    assert [o["text"] for o in carol.outputs if o["type"] == "message"] == ["alice in the room", "bob in the room"]
    # The third node is not in either direct room and counts nothing it could read.
    assert all(not r["name"].startswith("@") for r in carol.status()["rooms"])
    assert {r["name"] for r in bob.status()["rooms"]} == {"superbowl", "@alice"}


def test_send_to_through_the_tool_and_clear_errors(lan, binary):
    alice, bob = alice_and_bob(lan)
    sent = subprocess.run([binary, "send", "--to", "bob", "--data-dir", str(alice.data_dir), "from", "the", "shell"],
                          capture_output=True, text=True, timeout=30)
    assert sent.returncode == 0, sent.stderr
    assert direct(bob, "from the shell")["to"] == "bob"

    nobody = subprocess.run([binary, "send", "--to", "zed", "--data-dir", str(alice.data_dir), "hi"],
                            capture_output=True, text=True, timeout=30)
    assert nobody.returncode != 0 and "nobody called zed" in nobody.stderr
    both = subprocess.run([binary, "send", "--to", "bob", "--room", "superbowl", "--data-dir", str(alice.data_dir),
                           "hi"], capture_output=True, text=True, timeout=30)
    assert both.returncode != 0 and "either --room" in both.stderr

    alice.say("/msg zed hello?")
    alice.wait_for(lambda o: o["type"] == "error" and "nobody called zed" in o["message"])
    alice.say("/msg bob")
    alice.wait_for(lambda o: o["type"] == "error" and "/msg needs" in o["message"])


def test_direct_history_comes_back_after_a_restart(lan):
    alice, bob = alice_and_bob(lan)
    alice.say("/msg bob before the restart")
    direct(bob, "before the restart")
    assert bob.quit() == 0

    again = lan("bob", peers=[alice.address])
    again.wait_for(lambda o: o["type"] == "peer" and o["nick"] == "alice" and o["state"] == "alive")
    alive_to_each_other(alice, again)
    alice.say("/msg bob after the restart")
    direct(again, "after the restart")
    # The direct room's history came back (bob holds all alice holds of it), not shown again.
    holds_all_of(again, [alice], room="@alice", their_room="@bob")
    assert "before the restart" not in again.shown_texts()
    [dm] = [r for r in again.status()["rooms"] if r["name"] == "@alice"]
    assert dm["event_count"] >= 4  # both joins and both messages


def test_a_bare_nick_never_reaches_an_impostor_and_direct_rooms_are_not_advertised(lan):
    alice, bob = alice_and_bob(lan)
    alice.say("/msg bob the real one")
    direct(bob, "the real one")
    # No direct room in anyone's advertised rooms: nobody learns who writes to whom.
    assert all(p["rooms"] == ["superbowl"] for p in alice.status()["peers"] + bob.status()["peers"])

    # A new key calls itself bob.
    mallory = lan("bob", data_name="mallory", peers=[alice.address])
    alice.wait_for(lambda o: o["type"] == "nick_conflict" and o["id"] == mallory.id)
    # While both are around, a bare nick is ambiguous; once the real one has left, it is refused.
    alice.say("/msg bob hello?")
    alice.wait_for(lambda o: o["type"] == "error" and "2 peers are called bob" in o["message"])
    assert bob.quit() == 0
    alice.wait_for(lambda o: o["type"] == "peer" and o["id"] == bob.id and o["state"] == "gone", timeout=20)
    alice.say("/msg bob are you there?")
    error = alice.wait_for(lambda o: o["type"] == "error" and "is not the bob you met first" in o["message"])
    assert f"bob#{mallory.id[:8]}" in error["message"]
    # mallory has heard from alice since she was refused: nothing of hers is on its way.
    heard_since(mallory, [alice], time.monotonic())
    assert not [o for o in mallory.outputs if o["type"] == "message"]
    # Named by id, it goes.
    alice.say(f"/msg bob#{mallory.id[:8]} who are you?")
    direct(mallory, "who are you?")
