"""A node that stops on purpose says so: its peers show `bob left` within a second, whichever
way it stops, and nobody can say it for it."""

import signal
import time

from huddletest.wire import WireClient, encode_leaving


def meet(alice, bob):
    for node, other in ((alice, bob), (bob, alice)):
        node.wait_for(lambda o, n=other.name: o["type"] == "peer" and o["nick"] == n and o["state"] == "alive")


def left(node, who):
    return node.wait_for(lambda o: o["type"] == "peer" and o["nick"] == who and o["state"] != "alive",
                         timeout=5, what=f"{who} leaving")


def test_quit_end_of_input_and_sigterm_are_each_said_as_left_within_a_second(lan):
    alice = lan("alice")
    for how in ("/quit", "end of input", "SIGTERM"):
        bob = lan("bob", peers=[alice.address], console=how != "SIGTERM")
        meet(alice, bob)
        stopped = time.monotonic()
        if how == "/quit":
            bob.say("/quit")
        elif how == "end of input":
            bob.process.stdin.close()
        else:
            bob.process.send_signal(signal.SIGTERM)
        assert bob.process.wait(timeout=10) == 0
        line = left(alice, "bob")
        took = time.monotonic() - stopped
        assert line["state"] == "gone" and line.get("left") is True, (how, line)
        assert took < 1.0, (how, took)
        # Nothing more is said of bob: no suspicion, no second "gone".
        said = len(alice.outputs)
        time.sleep(2)
        assert not [o for o in alice.outputs[said:] if o["type"] == "peer" and o["nick"] == "bob"], how


def test_nobody_can_say_a_live_peer_left(lan):
    alice = lan("alice")
    bob = lan("bob", peers=[alice.address])
    meet(alice, bob)
    bob_id = bytes.fromhex(bob.id)
    with WireClient("mallory") as mallory:
        mallory.meet(alice.address)
        # Unsigned, and signed by mallory's key in bob's name: both dropped as bad signatures.
        for key in (None, mallory.key):
            mallory.send_raw(alice.address, encode_leaving(bob_id, 2**63, key=key))
        time.sleep(1)
    assert not [o for o in alice.outputs if o["type"] == "peer" and o["nick"] == "bob" and o["state"] != "alive"]
    assert alice.status()["counters"]["drops"].get("bad_signature", 0) >= 2
