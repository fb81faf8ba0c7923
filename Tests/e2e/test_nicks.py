"""One nick, two keys: nodes are told apart by id, and a new key under a known nick is flagged."""

import time


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

    # Warned once, and remembered across a restart of bob.
    time.sleep(1)
    assert len([o for o in bob.outputs if o["type"] == "nick_conflict"]) == 1
    assert bob.quit() == 0
    again = lan("bob", peers=[alice.address])
    again.say("/who")
    who = again.wait_for(lambda o: o["type"] == "info" and o["message"].startswith("in superbowl"))["message"]
    assert f"alice#{mallory.id[:8]}" in who
