"""Indirect probes against a real node, from docs/PROTOCOL.md alone (kinds 7 and 8): asked by a
peer it knows, a node probes a third peer with the requester's send time and forwards that peer's
own signed ack untouched, or answers with its own signed nack; it helps nobody it does not know."""

from __future__ import annotations

import time

from huddletest.node import dealt_with_datagrams
from huddletest.wire import (Ack, Nack, Probe, WireClient, decode_message, encode_probe_request,
                             verify_membership)


def node_address(node) -> tuple[str, int]:
    return ("127.0.0.1", node.port)


def test_a_node_probes_for_a_peer_and_forwards_the_targets_own_ack(lan):
    node = lan("helper")
    with WireClient("alice") as alice, WireClient("bob") as bob:
        alice.meet(node.address)
        bob.meet(node.address)
        sent_at = 123_456_789
        alice.send_raw(node.address, encode_probe_request(alice.id, bob.id, sent_at, key=alice.key))

        # The node probes bob, carrying alice's send time, at the address it knows for bob.
        probe = bob.recv(timeout=5, kind=Probe, predicate=lambda g: g.message.sent_at == sent_at)
        assert probe.message.from_id.hex() == node.id
        assert probe.source == node_address(node)

        # Bob's auto-ack goes to the node, which passes it to alice byte for byte: bob's signature.
        got = alice.recv(timeout=5, kind=Ack, predicate=lambda g: g.message.from_id == bob.id)
        assert got.source == node_address(node)
        assert got.message.echoed_sent_at == sent_at
        assert verify_membership(got.data, bob.id)
        assert not verify_membership(got.data, bytes.fromhex(node.id))


def test_a_target_that_does_not_answer_earns_the_requester_the_nodes_signed_nack(lan):
    node = lan("helper")
    with WireClient("alice") as alice, WireClient("mute") as mute:
        alice.meet(node.address)
        mute.meet(node.address)
        mute.auto_ack = False  # from now on mute reads probes but never answers
        sent_at = 42
        asked = time.monotonic()
        alice.send_raw(node.address, encode_probe_request(alice.id, mute.id, sent_at, key=alice.key))

        got = alice.recv(timeout=5, kind=Nack, predicate=lambda g: g.message.target == mute.id)
        waited = time.monotonic() - asked
        assert got.message.from_id.hex() == node.id and got.message.sent_at == sent_at
        assert verify_membership(got.data, bytes.fromhex(node.id))
        assert decode_message(got.data) == got.message
        # After the node's probe timeout (a quarter period), not at once and not much later.
        assert 0.2 <= waited <= 2.0, waited


def test_requests_from_strangers_or_badly_signed_are_not_served(lan):
    node = lan("helper")
    with WireClient("alice") as alice, WireClient("bob") as bob, WireClient("stranger") as stranger:
        alice.meet(node.address)
        bob.meet(node.address)
        # A node that never probed the helper asks; and alice's request signed by someone else.
        stranger.send_raw(node.address, encode_probe_request(stranger.id, bob.id, 1, key=stranger.key))
        alice.send_raw(node.address, encode_probe_request(alice.id, bob.id, 2, key=stranger.key))
        # The stranger's request has been dealt with once a datagram sent after it is.
        dealt_with_datagrams(node, lambda data: stranger.send_raw(node.address, data))
        # A well-signed one from alice, sent after her badly signed one, is served: the node was
        # able to all along. Its probe reaches bob after any it sent for the two before.
        alice.send_raw(node.address, encode_probe_request(alice.id, bob.id, 3, key=alice.key))
        bob.recv(timeout=5, kind=Probe, predicate=lambda g: g.message.sent_at == 3)
        assert not [g for g in bob.received if isinstance(g.message, Probe) and g.message.sent_at in (1, 2)]
        assert node.status()["counters"]["drops"].get("bad_signature", 0) >= 1
