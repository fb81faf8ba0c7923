"""Private rooms on the wire, played by the Python client written from docs/PROTOCOL.md
(Tests/huddletest/wire.py) against real nodes: if the doc's § Private rooms is enough, a client
that derives the key from it reads and writes the room; one with the id but not the key reads
nothing and writes nothing, whatever it copies or replays; and a wrong passphrase is told.
"""

from __future__ import annotations

import os
import sqlite3
import time

from huddletest.node import dealt_with_datagrams, handled
from huddletest.polling import poll
from huddletest.wire import (NO_ROOM_TAG, Ack, Chat, Event, Events, Join, RoomKey, Sealed, VersionVector,
                             WireClient, agreement_public_key, decode_message, encode_event, encode_events,
                             encode_message, now_ms, sign_event, verify_event)

ROOM = "superbowl"
PASSPHRASE = "touchdown"
_keys: dict[tuple[str, str], RoomKey] = {}


def room_key(passphrase: str = PASSPHRASE, name: str = ROOM) -> RoomKey:
    """The doc's derivation (scrypt: a fraction of a second), once per name and passphrase."""
    if (name, passphrase) not in _keys:
        _keys[name, passphrase] = RoomKey(name, passphrase)
    return _keys[name, passphrase]


def joined(node, nick: str, timeout: float = 20) -> None:
    node.wait_for(lambda o: o["type"] == "join" and o["nick"] == nick, timeout=timeout, what=f"{nick}'s join")


def private_pair(lan):
    """alice and bob in the private room superbowl/touchdown, each having seen the other join."""
    alice = lan("alice", passphrase=PASSPHRASE)
    bob = lan("bob", peers=[alice.address], passphrase=PASSPHRASE)
    joined(alice, "bob")
    joined(bob, "alice")
    return alice, bob


def counters(node) -> dict:
    return node.status()["counters"]


def delta(after: dict, before: dict, reason: str) -> int:
    return after["drops"].get(reason, 0) - before["drops"].get(reason, 0)


def private_room(node) -> dict:
    [room] = node.status()["rooms"]
    return room


def stored_rows(node, origin: bytes) -> int:
    """Events of `origin` in the node's store (read-only, while it runs)."""
    db = sqlite3.connect(f"file:{node.data_dir / 'huddle.sqlite'}?mode=ro", uri=True)
    try:
        return db.execute("SELECT count(*) FROM event WHERE origin = ?", (origin,)).fetchone()[0]
    finally:
        db.close()


def chat_both_ways(a, b, tag: str, timeout: float = 10) -> None:
    a.say(f"{tag}: {a.name} to {b.name}")
    b.message(f"{tag}: {a.name} to {b.name}", timeout=timeout)
    b.say(f"{tag}: {b.name} to {a.name}")
    a.message(f"{tag}: {b.name} to {a.name}", timeout=timeout)


def sealed_chat_from(client: WireClient, node, key: RoomKey, text: str, timeout: float = 15):
    """The first `events` datagram from `node` to `client` holding a chat that opens to `text`:
    (the datagram, the event as received, the event opened)."""
    origin = bytes.fromhex(node.id)

    def opens_to_text(event) -> bool:
        opened = key.open(event)
        return event.origin == origin and opened is not None and opened.body == Chat(text)

    got = client.recv(timeout=timeout, kind=Events,
                      predicate=lambda g: any(opens_to_text(e) for e in g.message.events))
    event = next(e for e in got.message.events if opens_to_text(e))
    return got, event, key.open(event)


# ---------------------------------------------------------------------------------------------
# 1. The doc's key reads and writes the room

def test_a_client_with_the_docs_key_reads_and_writes_a_private_room(lan):
    alice, bob = private_pair(lan)
    key = room_key()
    assert key.id == private_room(alice)["private_id"] == private_room(bob)["private_id"]
    alice_id = bytes.fromhex(alice.id)

    with WireClient("pyclient", keys=[key]) as client:
        assert client.rooms == [key.id]
        ack = client.meet(alice.address)
        client.meet(bob.address)
        # The ack's card: the room by id only, alice's name tag beside it, and the X25519 key the
        # doc derives from her Ed25519 seed (kept in her store).
        assert ack.rooms == [key.id]
        assert ack.room_tags == [key.name_tag(alice_id, key.id)]
        db = sqlite3.connect(f"file:{alice.data_dir / 'huddle.sqlite'}?mode=ro", uri=True)
        seed = bytes(db.execute("SELECT private_key FROM identity WHERE id = 1").fetchone()[0])
        db.close()
        assert ack.agreement_key == agreement_public_key(seed)

        # Writing: a sealed join and chat, shown on both nodes under the room's name.
        join = client.join([alice.address, bob.address])
        chat = client.chat([alice.address, bob.address], "hello from python, sealed")
        assert isinstance(decode_message(encode_events([chat])).events[0].body, Sealed)
        assert b"hello from python" not in encode_event(chat) and ROOM.encode() not in encode_event(chat)
        assert (join.seq, chat.seq) == (1, 2)
        for node in (alice, bob):
            shown = node.message("hello from python, sealed")
            assert (shown["nick"], shown["from"], shown["room"]) == ("pyclient", client.id_hex, ROOM)

        # Reading: alice's chat arrives sealed, signed over the sealed form, and opens.
        alice.say("the secret play")
        got, event, opened = sealed_chat_from(client, alice, key, "the secret play")
        assert b"the secret play" not in got.data
        assert encode_message(decode_message(got.data)) == got.data  # canonical
        assert verify_event(event) and verify_event(opened)
        assert encode_event(opened) == encode_event(event)
        assert len(event.body.data) == 1 + 2 + len("the secret play") + 28
        poll(lambda: any(e.body == Chat("the secret play") for e in client.log(key.id).events.values()),
             timeout=5, what="the chat held, opened, in the client's log")
        # Its context names the members' earlier events: a pull brings them, and it is delivered.
        client.sync(alice.address, room=key.id)
        assert Chat("the secret play") in [e.body for e in client.log(key.id).order]
        assert not client.unreadable_events and not client.rejected_events

        # A pull brings the whole room, sealed, and every event opens with the key.
        with WireClient("puller", keys=[key]) as puller:
            pulled = puller.sync(alice.address, room=key.id, have={})
            assert pulled and all(isinstance(e.body, Sealed) for e in pulled)
            texts = [e.body.text for e in puller.log(key.id).order if isinstance(e.body, Chat)]
            assert "the secret play" in texts and "hello from python, sealed" in texts
            assert not puller.unreadable_events and not puller.rejected_events

    assert not [o for o in alice.outputs + bob.outputs if o["type"] == "error"]


# ---------------------------------------------------------------------------------------------
# 2. The id without the key: nothing read, nothing written, everything counted

def test_a_client_with_the_id_but_not_the_key_writes_nothing(lan):
    alice, bob = private_pair(lan)
    alice.say("a real secret")
    bob.message("a real secret")
    wrong = room_key("field goal")

    with WireClient("mallory", rooms=[]) as mallory:
        # The id, learned from alice's ack: the room is listed by id, never by name.
        ack = mallory.meet(alice.address)
        [room_id] = ack.rooms
        assert room_id.startswith("~") and len(room_id) == 25 and room_id != wrong.id
        # A pull answers anyone who names the id: alice's events, sealed.
        real = mallory.sync(alice.address, room=room_id, have={}, take=False)
        alice_id = bytes.fromhex(alice.id)
        real_join = next(e for e in real if e.origin == alice_id and e.seq == 1)
        real_chat = next(e for e in real if e.origin == alice_id and e.seq == 2)
        assert all(isinstance(e.body, Sealed) for e in real)
        assert b"a real secret" not in encode_event(real_chat)

        m = mallory.id

        def forged(seq: int, body, context: VersionVector | None = None) -> Event:
            vector = VersionVector(context or {})
            if seq > 1:
                vector[m] = seq - 1
            return sign_event(Event(m, seq, room_id, now_ms(), vector, body), mallory.key)

        attacks = {
            # sealed with the key of another passphrase, bound to the right room, origin and seq
            "wrong key, join": forged(1, wrong.seal(Join("mallory"), m, 1, room=room_id)),
            "wrong key, chat": forged(2, wrong.seal(Chat("wrong key chat"), m, 2, room=room_id)),
            # not sealed at all
            "plain join": forged(1, Join("mallory")),
            "plain chat": forged(2, Chat("plain chat")),
            # alice's sealed bodies in mallory's own events (also at alice's very seq)
            "copied chat": forged(1, real_chat.body),
            "copied join": forged(2, real_join.body),
            "copied chat, same seq": forged(2, real_chat.body),
            # random bytes of a sealed body's length
            "noise": forged(1, Sealed(os.urandom(64))),
        }
        assert all(verify_event(e) for e in attacks.values())  # well signed: only the seal is wrong
        before = {node.name: counters(node) for node in (alice, bob)}
        stored_before = {node.name: private_room(node)["event_count"] for node in (alice, bob)}
        mallory.rooms = [room_id]
        mallory.probe(alice.address)  # so it looks like a member of the room's
        for event in attacks.values():
            for node in (alice, bob):
                mallory.send_events(node.address, [event])
        # And all of them in one datagram: each is counted on its own.
        for node in (alice, bob):
            mallory.send_events(node.address, list(attacks.values()))

        sent = 2 * len(attacks)
        for node in (alice, bob):
            poll(lambda: delta(counters(node), before[node.name], "unreadable") >= sent, timeout=10,
                 what=f"{node.name} counting {sent} unreadable events")
            # Every datagram of mallory's dealt with: a count checked now can still be too high.
            dealt_with_datagrams(node, lambda data: mallory.send_raw(node.address, data))
            handled(node)
        for node in (alice, bob):
            after = counters(node)
            print(f"{node.name}: drops {after['drops']}, duplicates {after['duplicates']}")
            assert delta(after, before[node.name], "unreadable") == sent, after["drops"]
            # Opened (and refused) before anything else: no signature was checked, nothing
            # counted as anything else.
            for reason in ("bad_signature", "invalid", "not_joined", "too_far_ahead", "over_budget"):
                assert delta(after, before[node.name], reason) == 0, (reason, after["drops"])
            assert after["events_stored"] == before[node.name]["events_stored"]
            room = private_room(node)
            assert mallory.id_hex not in room["version_vector"]
            assert room["event_count"] == stored_before[node.name]
            assert stored_rows(node, m) == 0
            # mallory is a peer (membership says so), never a member: no join, message or mark.
            assert not [o for o in node.outputs if o["type"] != "peer"
                        and mallory.id_hex in (o.get("id"), o.get("from"))]
            assert not {"wrong key chat", "plain chat"} & set(node.shown_texts())
            assert node.shown_texts().count("a real secret") == 1

    chat_both_ways(alice, bob, "after mallory")


def test_a_sealed_body_in_a_public_room_is_unreadable(lan):
    public = lan("public")
    with WireClient("mallory") as mallory:
        mallory.meet(public.address)
        before = counters(public)
        key = room_key()
        m = mallory.id
        event = sign_event(Event(m, 1, ROOM, now_ms(), VersionVector(), key.seal(Join("mallory"), m, 1, room=ROOM)),
                           mallory.key)
        mallory.send_events(public.address, [event])
        poll(lambda: delta(counters(public), before, "unreadable") == 1, timeout=10, what="one unreadable event")
        mallory.join(public.address)  # the same seq, plain: taken
        public.wait_for(lambda o: o["type"] == "join" and o["id"] == mallory.id_hex, what="mallory's plain join")


# ---------------------------------------------------------------------------------------------
# 3. Replays: a member's datagram sent again and again

REPLAYS = 60


def test_a_replayed_sealed_datagram_is_shown_once_and_counted_as_duplicates(lan):
    alice, bob = private_pair(lan)
    key = room_key()
    with WireClient("sniffer", keys=[key]) as sniffer:
        sniffer.meet(alice.address)
        alice.say("replay me")
        got, event, opened = sealed_chat_from(sniffer, alice, key, "replay me")
        bob.message("replay me")
        # Re-encoded from what was received, the event is the very bytes alice signed.
        again = encode_events([opened])
        assert encode_event(opened) == encode_event(event)

        before = {node.name: counters(node) for node in (alice, bob)}
        for _ in range(REPLAYS):
            for node in (alice, bob):
                sniffer.send_raw(node.address, got.data)
                sniffer.send_raw(node.address, again)
            time.sleep(0.003)
        # Every copy of every event in those datagrams, on each node.
        copies = REPLAYS * (len(got.message.events) + 1)
        for node in (alice, bob):
            poll(lambda: counters(node)["duplicates"] - before[node.name]["duplicates"] >= copies, timeout=10,
                 what=f"{node.name} counting {copies} duplicates")
            # Every replay dealt with (the sentinel is the one datagram rejected).
            dealt_with_datagrams(node, lambda data: sniffer.send_raw(node.address, data))
            handled(node)
        for node in (alice, bob):
            after = counters(node)
            print(f"{node.name}: duplicates +{after['duplicates'] - before[node.name]['duplicates']}, "
                  f"drops {after['drops']}")
            assert after["events_stored"] == before[node.name]["events_stored"]
            # Duplicates are not errors: the one rejected datagram is the malformed one sent last.
            assert after["rejected"] == before[node.name]["rejected"] + 1, after["drops"]
            assert node.shown_texts().count("replay me") == 1

        # A replay into a room it does not belong to opens nowhere: bob is not in it.
        other = room_key("overtime")
        moved = Event(event.origin, event.seq, other.id, event.created_at, event.context, event.body,
                      event.signature)
        b0 = counters(bob)
        sniffer.send_events(bob.address, [moved])
        poll(lambda: delta(counters(bob), b0, "not_joined") == 1, timeout=5, what="the moved event not_joined")

    chat_both_ways(alice, bob, "after the replays")


# ---------------------------------------------------------------------------------------------
# 4. Name tags: a wrong passphrase is told, not silent

def passphrase_lines(node, nick: str) -> list[dict]:
    return [o for o in list(node.outputs) if o["type"] in ("info", "error") and nick in o.get("message", "")
            and "passphrase for superbowl" in o["message"]]


def test_a_name_tag_tells_a_node_its_passphrase_differs(lan):
    alice = lan("alice", passphrase=PASSPHRASE)
    wrong = room_key("field goal")
    alice_id = bytes.fromhex(alice.id)

    # No tag, or a tag that is not the name's: nothing is said.
    with WireClient("silent", rooms=[wrong.id]) as silent, WireClient("noisy", rooms=[wrong.id]) as noisy:
        silent.meet(alice.address)
        noisy.meet(alice.address)
        sequence = noisy.probe(alice.address, room_tags=[os.urandom(16)])
        # Acked: alice has read the card (she acks once she has).
        noisy.recv(timeout=10, kind=Ack, predicate=lambda g: g.message.sequence == sequence)
        handled(alice)
    assert not [o for o in alice.outputs if "passphrase for superbowl" in o.get("message", "")]

    # A node alone in its room is told its own passphrase is the wrong one.
    with WireClient("mallory", keys=[wrong]) as mallory:
        assert mallory.room_tags() == [wrong.name_tag(mallory.id, wrong.id)] != [NO_ROOM_TAG]
        ack = mallory.meet(alice.address)
        line = alice.wait_for(lambda o: o["type"] in ("info", "error") and "mallory" in o.get("message", "")
                              and ("wrong passphrase for superbowl" in o["message"]
                                   or "has another passphrase for superbowl" in o["message"]),
                              timeout=10, what="the wrong-passphrase line")
        print(f"alice: {line}")
        assert line["type"] == "error" and "wrong passphrase for superbowl" in line["message"]
        # The client can tell the same from alice's card, by the doc's rule.
        [(room, tag)] = zip(ack.rooms, ack.room_tags)
        assert wrong.same_name_other_passphrase(tag, alice_id, room)
        assert not room_key().same_name_other_passphrase(tag, alice_id, room)  # the same room
        # Said once per peer and room, however many probes.
        for _ in range(3):
            mallory.meet(alice.address)  # acked: alice has read each card
        handled(alice)
        assert len(passphrase_lines(alice, "mallory")) == 1
        assert "mallory" not in [m["nick"] for m in private_room(alice)["members"]]

    # The right passphrase, of course, is no mismatch.
    with WireClient("friend", keys=[room_key()]) as friend:
        friend.meet(alice.address)  # acked: alice has read its card
        handled(alice)
    assert not passphrase_lines(alice, "friend")

    # With a member who shares her passphrase, alice is told the other one differs.
    bob = lan("bob", peers=[alice.address], passphrase=PASSPHRASE)
    joined(alice, "bob")
    poll(lambda: any(p["nick"] == "bob" and p["state"] == "alive" and private_room(alice)["private_id"] in p["rooms"]
                     for p in alice.status()["peers"]), timeout=10, what="bob alive in alice's room")
    with WireClient("eve", keys=[wrong]) as eve:
        eve.meet(alice.address)
        line = alice.wait_for(lambda o: o["type"] in ("info", "error") and "eve" in o.get("message", "")
                              and "passphrase for superbowl" in o["message"], timeout=10, what="eve's line")
        print(f"alice: {line}")
        assert line["type"] == "info" and "eve has another passphrase for superbowl" in line["message"]
    chat_both_ways(alice, bob, "after the wrong passphrases")
