"""Writes a seed corpus for the wire decoder's fuzzer (Scripts/fuzz): one valid message of each
kind (a heard match and a sound window among them), a relay around each kind it carries, an event on its own, a private room's sealed events and sound window, probes and acks with a full card,
and a TCP stream of two frames, all made by the Python client that was written from
docs/PROTOCOL.md, so the fuzzer starts from what a real peer sends.

    python3 -m huddletest.fuzz_seeds DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

from .wire import (Chat, Heard, Join, Leave, Mark, PeerRecord, RoomKey, Score, Teams, Unmark, VersionVector,
                   WireClient, encode_ack, encode_digest, encode_event, encode_events, encode_leaving, encode_nack,
                   encode_probe, encode_probe_request, encode_relay, encode_sound_window, encode_sync_request,
                   encode_sync_response, frame)


def seeds() -> dict[str, bytes]:
    key = RoomKey("superbowl", "touchdown")  # scrypt: a fraction of a second
    with WireClient("seed", auto_ack=False) as client:
        join = client.make_event("superbowl", Join("seed"))
        chat = client.make_event("superbowl", Chat("touchdown 🏈"))
        mark = client.make_event("superbowl", Mark("kickoff"))
        unmark = client.make_event("superbowl", Unmark("kickoff"))
        scoreboard = [client.make_event("superbowl", Teams("Chiefs", "Eagles")),
                      client.make_event("superbowl", Score(14, 7))]
        heard = client.make_event("superbowl", Heard(bytes(range(32)), 1_000_000, 3_198_400, 8_467, 1_063))
        bits = [(i * 2_654_435_761) % (1 << 32) if i % 5 else 0 for i in range(200)]
        loud = [i % 5 != 0 for i in range(200)]
        vector = VersionVector({client.id: 3})
        peer = PeerRecord(bytes(range(32)), "bob", "192.0.2.12", 7700, 1, 9)
        # The same client in the private room: its events there are sealed (tag 7), its card
        # carries its X25519 key and a name tag beside the private room (zeros beside the public).
        client.join_private(key)
        sealed = [client.make_event(key.id, body) for body in (Join("seed"), Chat("touchdown 🏈"), Leave())]
        rooms = ["superbowl", key.id]
        card = dict(agreement_key=client.agreement_key, room_tags=client.room_tags(rooms))
        return {
            "events": encode_events([join, chat, mark]),
            "unmark": encode_events([unmark]),
            "event": encode_event(chat),
            "scoreboard": encode_events(scoreboard),
            "digest": encode_digest(client.id, "superbowl", vector, {client.id: 0x0102030405060708}),
            "sync-request": encode_sync_request(client.id, "superbowl", vector, 64),
            "sync-response": encode_sync_response("superbowl", [join, chat], True),
            "probe": encode_probe(client.id, "seed", 1, 7, 12345, 7700, ["superbowl"], [peer], key=client.key),
            "ack": encode_ack(client.id, "seed", 1, 7, 12345, ["superbowl"], [peer], key=client.key),
            "sealed-events": encode_events(sealed),
            "sealed-event": encode_event(sealed[1]),
            "sealed-sync-response": encode_sync_response(key.id, sealed, False),
            "probe-card": encode_probe(client.id, "seed", 1, 8, 12345, 7700, rooms, [peer], key=client.key,
                                       **card),
            "ack-card": encode_ack(client.id, "seed", 1, 8, 12345, rooms, [peer], key=client.key, **card),
            "leaving": encode_leaving(client.id, 1, key=client.key),
            "heard": encode_events([heard]),
            "sound-window": encode_sound_window(client.id, "superbowl", 2_000, 1_000, bits, loud, key=client.key,
                                                pair_key=key, to_id=peer.id),
            "private-sound-window": encode_sound_window(client.id, key.id, 2_000, 1_000, bits, loud, key=client.key,
                                                        pair_key=key, to_id=peer.id),
            "probe-request": encode_probe_request(client.id, peer.id, 12345, key=client.key),
            "nack": encode_nack(client.id, peer.id, 12345, key=client.key),
            "relay-probe": encode_relay(client.id, peer.id, encode_probe(client.id, "seed", 1, 9, 12345, 7700,
                                                                         ["superbowl"], [], key=client.key)),
            "relay-events": encode_relay(client.id, peer.id, encode_events([chat])),
            "relay-leaving": encode_relay(client.id, peer.id, encode_leaving(client.id, 1, key=client.key)),
            "stream": frame(encode_events([chat])) + frame(encode_digest(client.id, "superbowl", vector)),
        }


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, data in seeds().items():
        (out / name).write_bytes(data)
    print(f"fuzz_seeds: {len(seeds())} seeds in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
