"""A node that stops on purpose says so: its peers show `bob left` within a second, whichever
way it stops, and nobody can say it for it."""

import signal
import time

from huddletest.node import dealt_with_datagrams, handled
from huddletest.polling import poll
from huddletest.wire import Probe, WireClient, encode_leaving


def meet(alice, bob):
    for node, other in ((alice, bob), (bob, alice)):
        node.wait_for(lambda o, n=other.name: o["type"] == "peer" and o["nick"] == n and o["state"] == "alive")


def left(node, who):
    return node.wait_for(lambda o: o["type"] == "peer" and o["nick"] == who and o["state"] != "alive",
                         timeout=5, what=f"{who} leaving")


def probes_from(client: WireClient, node) -> int:
    """How many probes `client` has had from `node`: one a protocol period (1 s) at most."""
    return sum(1 for g in list(client.received) if isinstance(g.message, Probe) and g.message.from_id.hex() == node.id)


def test_quit_end_of_input_and_sigterm_are_each_said_as_left_within_a_second(lan):
    alice = lan("alice")
    # A peer of alice's that answers her probes: how many she sends it tells how many periods
    # her membership has run, which is when she would suspect bob if she still probed him.
    watcher = WireClient("watcher")
    watcher.meet(alice.address)
    try:
        said_of_bob_once_each_way(lan, alice, watcher)
    finally:
        watcher.close()


def said_of_bob_once_each_way(lan, alice, watcher):
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
        # Nothing more is said of bob: no suspicion, no second "gone", for two of alice's
        # periods (two probes of the watcher's), on whatever she printed until then.
        said = len(alice.outputs)
        probed = probes_from(watcher, alice)
        poll(lambda: probes_from(watcher, alice) >= probed + 2, timeout=15, interval=0.05,
             what="two more of alice's probes at the watcher")
        handled(alice)
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
        dealt_with_datagrams(alice, lambda data: mallory.send_raw(alice.address, data))
    handled(alice)
    assert not [o for o in alice.outputs if o["type"] == "peer" and o["nick"] == "bob" and o["state"] != "alive"]
    assert alice.status()["counters"]["drops"].get("bad_signature", 0) >= 2
