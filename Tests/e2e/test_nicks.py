"""One nick, two keys: nodes are told apart by id, and a new key under a known nick is flagged."""

import subprocess
import time

from huddletest.node import alive_to_each_other, heard_since


def test_a_second_node_calling_itself_alice_is_shown_apart_and_flagged(lan):
    alice = lan("alice")
    bob = lan("bob", peers=[alice.address])
    bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == "alice")

    # The same nick from another key (another data dir): bob met alice first.
    mallory = lan("alice", data_name="mallory", peers=[bob.address])
    assert mallory.id != alice.id
    conflict = bob.wait_for(lambda o: o["type"] == "nick_conflict")
    assert conflict["nick"] == "alice" and conflict["id"] == mallory.id and conflict["known_id"] == alice.id
    # Alice herself is warned too: someone took her nick.
    assert alice.wait_for(lambda o: o["type"] == "nick_conflict")["id"] == mallory.id

    bob.say("/who")
    who = bob.wait_for(lambda o: o["type"] == "info" and o["message"].startswith("in superbowl"))["message"]
    assert f"alice#{mallory.id[:8]}" in who and f"alice#{alice.id[:8]}" in who

    # Warned once (bob has heard from both since, and dealt with it), and remembered across a
    # restart of bob.
    heard_since(bob, [alice, mallory], time.monotonic())
    assert len([o for o in bob.outputs if o["type"] == "nick_conflict"]) == 1
    assert bob.quit() == 0
    again = lan("bob", peers=[alice.address])
    again.say("/who")
    who = again.wait_for(lambda o: o["type"] == "info" and o["message"].startswith("in superbowl"))["message"]
    assert f"alice#{mallory.id[:8]}" in who


def test_a_new_key_under_a_known_nick_is_told_apart_in_status_history_and_direct_messages(lan, binary):
    alice = lan("alice")
    bob = lan("bob", peers=[alice.address])
    alice.wait_for(lambda o: o["type"] == "join" and o["nick"] == "bob")
    assert bob.quit() == 0
    mallory = lan("bob", data_name="mallory", peers=[alice.address])
    alice.wait_for(lambda o: o["type"] == "nick_conflict" and o["id"] == mallory.id)
    shown_as = f"bob#{mallory.id[:8]}"

    status = subprocess.run([binary, "status", "--data-dir", str(alice.data_dir)], capture_output=True, text=True,
                            timeout=10)
    assert status.returncode == 0, status.stderr
    assert shown_as in status.stdout, status.stdout
    members = next(r for r in alice.status()["rooms"] if r["name"] == "superbowl")["members"]
    assert {m["display_name"] for m in members if m["id"] == mallory.id} == {shown_as}

    mallory.say("i am bob, honest")
    alice.message("i am bob, honest")
    history = subprocess.run([binary, "history", "--room", "superbowl", "--data-dir", str(alice.data_dir)],
                             capture_output=True, text=True, timeout=30)
    assert f"{shown_as}: i am bob, honest" in history.stdout, history.stdout

    alive_to_each_other(alice, mallory)  # probes carry the agreement keys
    mallory.say("/msg alice psst")
    dm = alice.wait_for(lambda o: o["type"] == "message" and o["text"] == "psst" and o.get("direct"))
    assert dm["room"] == f"@{shown_as}", dm
