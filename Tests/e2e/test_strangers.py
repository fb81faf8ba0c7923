"""What a stranger can make a node hold or do, from the attacker's side, with the Python client
written from docs/PROTOCOL.md: big frames on the sync port, proofs about keys that never
joined, and a direct-message key anyone could read with."""

import pytest
import os
import socket
import struct
import threading
import time

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from huddletest.bench.harness import rss_kb
from huddletest.node import handled
from huddletest.polling import poll
from huddletest.wire import (Chat, Event, Join, Limits, RoomKey, VersionVector, WireClient, encode_event,
                             encode_events, encode_sync_request, now_ms, sign_event)


def drops(node):
    return node.status()["counters"].get("drops", {})


def assert_bounded(*nodes, rss_mb: float = 80, disk_mb: float = 10) -> None:
    """What the issue holds every node to after an attack: RSS and data dir under bounds."""
    for node in nodes:
        rss = rss_kb(node.process.pid) / 1024
        disk = sum(f.stat().st_size for f in node.data_dir.rglob("*") if f.is_file()) / 1024 / 1024
        print(f"{node.name}: RSS {rss:.1f} MB, data dir {disk:.2f} MB")
        assert rss <= rss_mb, f"{node.name}'s RSS is {rss:.1f} MB"
        assert disk <= disk_mb, f"{node.name}'s data dir is {disk:.2f} MB"


def test_a_frame_bigger_than_a_sync_request_closes_the_connection_before_it_is_buffered(lan):
    alice = lan("alice")
    host, port = alice.address.split(":")
    # The largest request this test can make still gets its answer.
    with WireClient("puller") as client:
        have = {bytes([i]) * 32: 1 for i in range(1, 200)}
        assert len(encode_sync_request(client.id, "superbowl", have, 64)) < 41_066
        assert client.sync(alice.address, have=have), "alice's join comes back"

    before = rss_kb(alice.process.pid)
    cut = 0
    for _ in range(3):
        # The most connections one address may hold (4), each a header announcing 4 MiB − 1 and
        # then as much of it as the node takes.
        sockets = [socket.create_connection((host, int(port)), timeout=5) for _ in range(4)]
        for tcp in sockets:
            try:
                tcp.sendall(struct.pack(">I", Limits.max_frame_bytes - 1))
                for _ in range(64):
                    tcp.sendall(bytes(64 * 1024))
            except (ConnectionResetError, BrokenPipeError, socket.timeout):
                pass
        for tcp in sockets:
            try:
                tcp.settimeout(5)
                if tcp.recv(1) == b"":
                    cut += 1
            except (ConnectionResetError, BrokenPipeError):
                cut += 1
            except socket.timeout:
                pass
            tcp.close()
    assert cut == 12, f"only {cut} of 12 oversized frames were cut off"
    # Each was cut for its frame (sync_broken) or, when a round's connections came before the
    # last round's had closed, refused at the door (sync_busy): counted either way.
    poll(lambda: drops(alice).get("sync_broken", 0) + drops(alice).get("sync_busy", 0) >= 12, timeout=10,
         what="the cut connections counted")
    # Nothing near 4 × 4 MiB was held (the old node grew by that much a round), and pulls work.
    grown = rss_kb(alice.process.pid) - before
    assert grown < 8 * 1024, f"RSS grew by {grown} kB"
    with WireClient("puller2") as client:
        assert client.sync(alice.address) != []


def test_a_direct_message_key_of_small_order_gives_no_direct_room(lan):
    alice = lan("alice")
    with WireClient("mallory") as mallory:
        mallory.agreement_key = bytes([1]) + bytes(31)  # u = 1: every shared secret is zero
        mallory.meet(alice.address)
        alice.wait_for(lambda o: o["type"] == "error" and "anyone could read" in o["message"])
        # Said once, however often it probes.
        for _ in range(3):
            mallory.meet(alice.address)  # acked: alice has read each card
        handled(alice)
        errors = [o for o in alice.outputs if o["type"] == "error" and "anyone could read" in o["message"]]
        assert len(errors) == 1
        assert drops(alice).get("weak_agreement_key") == 1
        alice.say("/msg mallory are you there?")
        alice.wait_for(lambda o: o["type"] == "error" and "mallory" in o["message"])
        handled(alice)
        assert not [o for o in alice.outputs if o["type"] == "message" and o.get("direct")]


def test_a_peer_flipping_direct_message_keys_is_told_about_once(lan):
    """Round 3: each change of a peer's direct-message key was kept for good and a weak one said
    again each flip. mallory offers 31 keys in turn, two of small order and fresh good ones:
    alice says so once, counts each weak offer, and still sends mallory a direct message."""
    alice = lan("alice")
    weak = [bytes([1]) + bytes(31), bytes([0]) * 31 + bytes([0x80])]  # u = 1, and u = 2^255 (≡ 0)
    offered_weak = 0
    with WireClient("mallory") as mallory:
        for i in range(31):  # the last one good
            if i % 3:
                mallory.agreement_key = weak[i % 2]
                offered_weak += 1
            else:
                mallory.agreement_key = X25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
            mallory.meet(alice.address)  # acked: alice has read the card
        handled(alice)
        errors = [o for o in alice.outputs if o["type"] == "error" and "anyone could read" in o["message"]]
        assert len(errors) == 1, errors
        assert drops(alice).get("weak_agreement_key") == offered_weak
        since = len(alice.outputs)
        alice.say("/msg mallory still there?")
        handled(alice)
        assert not [o for o in list(alice.outputs)[since:] if o["type"] == "error"]


def test_proofs_about_strangers_are_not_kept_or_forwarded(lan):
    """Throwaway keys that never join each sign two versions of their seq 2 (seven keys a
    datagram). No origin is quarantined, nothing is stored for them, the peer that was not
    attacked hears nothing of it, and the room goes on chatting."""
    alice = lan("alice")
    bob = lan("bob", peers=[alice.address])
    for node, other in ((alice, "bob"), (bob, "alice")):
        node.wait_for(lambda o, other=other: o["type"] == "join" and o["nick"] == other)
    host, port = alice.address.split(":")
    # 140 keys: 280 signature checks, within a stranger's burst (a larger attack is cut by the
    # budget of checks first, see the flood test below).
    keys = [Ed25519PrivateKey.generate() for _ in range(140)]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        for first in range(0, len(keys), 7):
            events = []
            for key in keys[first:first + 7]:
                origin = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
                for text in ("one version", "another version"):
                    events.append(encode_event(sign_event(
                        Event(origin, 2, "superbowl", now_ms(), VersionVector({origin: 1}), Chat(text)), key)))
            udp.sendto(encode_events(events), (host, int(port)))
            time.sleep(0.02)
    # Alice holds the events of 16 strangers at once: their second versions are conflicts, the
    # other 124 keys' two versions are refused before any check.
    poll(lambda: (drops(alice).get("stranger_conflict", 0), drops(alice).get("over_budget", 0)) == (16, 248),
         timeout=15, what="the conflicts and refusals counted")
    room = next(r for r in alice.status()["rooms"] if r["name"] == "superbowl")
    assert room["quarantined"] == {}
    assert not [r for r in bob.status()["rooms"] if r["quarantined"]]
    assert drops(bob).get("stranger_conflict", 0) == 0, "alice forwarded nothing"
    alice.say("still here")
    bob.message("still here")
    assert_bounded(alice, bob)
    # A restart loads no proof either.
    assert alice.quit() == 0
    again = lan("alice", peers=[bob.address])
    again.wait_for(lambda o: o["type"] == "peer" and o["id"] == bob.id and o["state"] == "alive", timeout=10,
                   what="bob alive to alice again")
    assert all(not r["quarantined"] for r in again.status()["rooms"])
    again.say("after the restart")
    bob.message("after the restart", timeout=2)
    assert_bounded(again, bob)


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.serial  # measures the node's CPU and chat latency under a flood
def test_a_flood_of_bad_signatures_costs_the_node_a_small_budget_and_chat_goes_on(lan):
    """From one stranger's port, ~47 datagrams a second of 340 well-formed joins with wrong
    signatures (under the 400-datagram rate, so only the budget of checks stands in the way):
    alice checks about 200 a second of them, not 17 000, and alice and bob chat as before."""
    alice = lan("alice")
    bob = lan("bob", peers=[alice.address])
    for node, other in ((alice, "bob"), (bob, "alice")):
        node.wait_for(lambda o, other=other: o["type"] == "join" and o["nick"] == other)
    host, port = alice.address.split(":")
    origins = [Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
               for _ in range(340)]
    stop = threading.Event()
    sent = []

    def flood():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            n = 0
            while not stop.is_set():
                n += 1
                sent.append(n)
                events = [encode_event(Event(origin, 1, "superbowl", now_ms() + n, VersionVector(), Join(f"x{n}"),
                                             signature=os.urandom(64))) for origin in origins]
                udp.sendto(encode_events(events), (host, int(port)))
                stop.wait(1 / 47)

    before = cpu_seconds(alice.process.pid)
    flooder = threading.Thread(target=flood, daemon=True)
    flooder.start()
    started = time.monotonic()
    latencies = []
    try:
        for i in range(20):
            bob.say(f"during the flood {i}")
            shown = alice.message(f"during the flood {i}")
            latencies.append(shown["shown_at"] - shown["sent_at"])
            time.sleep(0.2)
    finally:
        stop.set()
        flooder.join(5)
    elapsed = time.monotonic() - started
    cpu = cpu_seconds(alice.process.pid) - before
    counted = drops(alice)
    print(f"flood of {elapsed:.1f} s: alice used {cpu:.2f} s of CPU; chat p50 {sorted(latencies)[10]} ms, "
          f"max {max(latencies)} ms; drops {counted}")
    # The first datagram is checked (a burst of 400); its bad signatures spend the budget for
    # ten seconds, and from then on the datagrams are dropped before they are decoded.
    assert counted.get("bad_signature", 0) <= 400 + 200 * elapsed
    assert counted.get("check_budget", 0) >= len(sent) - 3, (len(sent), counted)
    assert cpu < 0.25 * elapsed, f"alice used {cpu:.2f} s of CPU in {elapsed:.1f} s"
    assert sorted(latencies)[10] <= 50, latencies
    assert_bounded(alice, bob)


def test_fresh_keys_that_guessed_a_private_rooms_name_cannot_fill_the_screen(lan):
    alice = lan("alice", passphrase="blue 42")
    wrong = RoomKey("superbowl", "field goal")
    for n in range(12):
        with WireClient(f"guess{n}", keys=[wrong]) as guesser:
            guesser.meet(alice.address)  # acked: alice has read its card
    handled(alice)
    lines = [o for o in alice.outputs if "passphrase for superbowl" in o.get("message", "")]
    assert 1 <= len(lines) <= 3, lines


def test_an_event_with_seq_0_is_refused_alone_and_its_neighbours_are_taken(lan):
    alice = lan("alice")
    with WireClient("mallory") as mallory:
        mallory.meet(alice.address)
        join = mallory.make_event("superbowl", Join("mallory"))
        chat = mallory.make_event("superbowl", Chat("after the zero"))
        zero = sign_event(Event(mallory.id, 0, "superbowl", now_ms(), VersionVector(), Chat("seq zero")),
                          mallory.key)
        mallory.send_events(alice.address, [join, zero, chat])
        alice.message("after the zero")
        assert drops(alice).get("invalid") == 1
        assert drops(alice).get("malformed", 0) == 0
        assert not [o for o in alice.outputs if o.get("text") == "seq zero"]


def peer_ids(node) -> set[str]:
    return {p["id"] for p in node.status()["peers"]}


def test_made_up_peers_in_gossip_fill_no_table_and_a_newcomer_chats_at_once(lan):
    """A live peer's signed probes carry 320 made-up alive records (10 probes of 32): once, they
    filled bob's 256-entry peer table and, by gossip, alice's; newcomers were never added and chat
    to them crawled. Now a node named only by gossip is probed and becomes a peer only when it
    answers: none of the fakes is ever listed, on bob or on alice, none lingers, and carol, who
    comes now, chats with bob at once."""
    from huddletest.wire import PeerRecord

    alice = lan("alice")
    bob = lan("bob", peers=[alice.address])
    for node, other in ((alice, "bob"), (bob, "alice")):
        node.wait_for(lambda o, other=other: o["type"] == "join" and o["nick"] == other)
    fakes = []
    with WireClient("mallory") as mallory:
        mallory.meet(bob.address)
        for batch in range(10):
            records = []
            for n in range(32):
                fake = Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
                fakes.append(fake.hex())
                records.append(PeerRecord(fake, f"ghost{batch}-{n}", "192.0.2.7", 20_000 + batch * 32 + n))
            mallory.probe(bob.address, peers=records)
            time.sleep(0.05)
        carol = lan("carol", peers=[bob.address])
        latencies = []
        for i in range(10):
            carol.say(f"carol {i}")
            shown = bob.message(f"carol {i}", timeout=2)
            latencies.append(shown["shown_at"] - shown["sent_at"])
            bob.say(f"bob {i}")
            alice.message(f"bob {i}", timeout=2)
            carol.message(f"bob {i}", timeout=2)
        for node in (alice, bob, carol):
            assert not peer_ids(node) & set(fakes), node.name
        time.sleep(6)  # past the 5 s a node named only by gossip is probed
        for node in (alice, bob, carol):
            assert not peer_ids(node) & set(fakes), node.name
            assert not [o for o in node.outputs if "ghost" in o.get("nick", "")], node.name
    print(f"carol → bob during the fakes: {sorted(latencies)}")
    # When the fakes filled the tables, chat to a newcomer crawled (seconds); a median of a few ms
    # here, 17 on a clean clone with the Swift tests' build beside it: the bound is for a crawl.
    assert sorted(latencies)[5] <= 250, latencies
    assert_bounded(alice, bob, carol)
