"""A Python peer written from docs/PROTOCOL.md alone (Tests/huddletest/wire.py) talks to real
nodes: if the doc is enough to build a client, a user on it chats with users on Huddle."""

from __future__ import annotations

import subprocess
import time

from huddletest.polling import poll
from huddletest.wire import (Chat, Events, Join, Probe, WireClient,
                             decode_message, encode_message, verify_event)

ROOM = "superbowl"






def client_peer(node, client: WireClient) -> dict | None:
    return next((p for p in node.status()["peers"] if p["id"] == client.id_hex), None)


def test_a_python_client_joins_and_its_chat_is_shown(lan):
    node = lan("one")
    with WireClient("pyclient") as client:
        ack = client.meet(node.address)
        assert ack.from_id.hex() == node.id and ack.nick == "one" and ROOM in ack.rooms

        join = client.join(node.address)
        chat = client.chat(node.address, "hello from python")
        assert (join.seq, chat.seq) == (1, 2)

        node.wait_for(lambda o: o["type"] == "join" and o["id"] == client.id_hex, what="the client's join")
        shown = node.message("hello from python")
        assert shown["nick"] == "pyclient"
        assert shown["from"] == client.id_hex
        assert shown["room"] == ROOM


def test_a_chat_typed_into_the_node_reaches_the_client_signed(lan):
    node = lan("one")
    with WireClient("pyclient") as client:
        client.meet(node.address)
        node.say("hello")

        got = client.recv(timeout=15, kind=Events,
                          predicate=lambda g: any(isinstance(e.body, Chat) and e.body.text == "hello"
                                                  for e in g.message.events))
        assert got.source == ("127.0.0.1", node.port)
        # Canonical: decoding then encoding gives back the very bytes the node sent.
        assert encode_message(decode_message(got.data)) == got.data
        event = next(e for e in got.message.events if isinstance(e.body, Chat))
        assert event.origin.hex() == node.id and event.room == ROOM
        assert verify_event(event, bytes.fromhex(node.id))
        # The node's own join came before: the chat's context says so.
        assert event.seq >= 2 and event.context.get(event.origin) == event.seq - 1
        assert abs(event.created_at - time.time() * 1000) < 60_000
        # A signature by anyone else does not verify.
        assert not verify_event(event, client.id)


def test_the_client_pulls_history_and_a_late_node_gets_the_clients_messages(lan):
    one = lan("one")
    for i in range(5):
        one.say(f"early {i}")
    for i in range(5):
        one.message(f"early {i}")

    with WireClient("pyclient") as client:
        # An empty vector and a small limit: several syncResponses, the last with more = 0.
        pulled = client.sync(one.address, have={}, limit=2)
        assert all(verify_event(e) for e in pulled)
        assert all(e.origin.hex() == one.id and e.room == ROOM for e in pulled)
        assert [e.seq for e in pulled] == list(range(1, 7))
        assert isinstance(pulled[0].body, Join) and pulled[0].body.nick == "one"
        assert [e.body.text for e in pulled[1:]] == [f"early {i}" for i in range(5)]
        log = client.log(ROOM)
        assert [e.seq for e in log.order] == list(range(1, 7))  # all delivered, in order
        # Pulling again with what it holds brings nothing new.
        assert client.sync(one.address) == []

        client.meet(one.address)
        client.join(one.address)
        reply = client.chat(one.address, "replying to early 4")
        assert reply.context[bytes.fromhex(one.id)] == 6  # it has seen the whole history
        client.chat(one.address, "and one more")
        one.message("replying to early 4")
        one.message("and one more")

        late = lan("late", peers=[one.address])
        for i in range(5):
            late.message(f"early {i}")
        for text in ("replying to early 4", "and one more"):
            shown = late.message(text)
            assert shown["nick"] == "pyclient" and shown["from"] == client.id_hex


def test_the_client_answers_probes_and_the_node_lists_it_alive(lan, binary):
    node = lan("one")
    with WireClient("pyclient") as client, WireClient("mute", auto_ack=False) as mute:
        client.meet(node.address)
        mute.meet(node.address)
        # The node probes each peer every other second or so: the client acks, the mute one
        # does not.
        poll(lambda: sum(isinstance(g.message, Probe) for g in client.received) >= 2, timeout=20,
             what="two probes from the node")
        assert client.acks_sent >= 2
        probes = [g for g in client.received if isinstance(g.message, Probe)]
        assert all(g.message.from_id.hex() == node.id and g.message.port == node.port for g in probes)

        poll(lambda: (client_peer(node, mute) or {}).get("state") in ("suspect", "gone"), timeout=20,
             what="the mute client suspect")
        peer = client_peer(node, client)
        assert peer["state"] == "alive" and peer["nick"] == "pyclient"
        assert peer["address"] == f"127.0.0.1:{client.port}"
        assert ROOM in peer["rooms"]
        assert peer["rtt_ms"] is not None

        table = subprocess.run([binary, "status", "--data-dir", str(node.data_dir)], capture_output=True,
                               text=True, timeout=10)
        assert table.returncode == 0, table.stderr
        line = next(row for row in table.stdout.splitlines() if "pyclient" in row)
        assert "alive" in line
