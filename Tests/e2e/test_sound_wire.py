"""Listening on the wire (protocol version 5), from the Python client written from
docs/PROTOCOL.md: a `heard` event (tag 11) calibrates a real node as the doc says, a sound
window (kind 11) encodes, seals, signs and decodes as drawn there, and `huddle align
--dump-features` prints what a listening node really sends a peer (the bench's eavesdropper
reads that)."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

from huddletest.audio_corpus import write_pcm16
from huddletest.polling import poll
from huddletest.wire import (Heard, RoomKey, SoundWindow, WireClient, WireError, decode_message, encode_message,
                             encode_sound_window, now_ms, verify_sound_window)

ROOM = "superbowl"


def room(node) -> dict:
    return next(r for r in node.status()["rooms"] if r["name"] == ROOM)


def members(node) -> dict:
    return {m["nick"]: m for m in room(node)["members"]}


def test_a_match_published_by_a_python_peer_calibrates_a_real_node(lan):
    node = lan("one")
    with WireClient("alice") as alice, WireClient("bob") as bob:
        for client in (alice, bob):
            client.meet(node.address)
            client.join(node.address)
        # alice heard a moment a second ago on her clock; bob's clock read 3.2004 s later (after
        # his join: a moment before it would not count).
        alice.say(node.address, ROOM, Heard(bob.id, now_ms() - 1_000, 3_200_400, 15_000, 600))

        def placed():
            by_nick = members(node)
            return all(by_nick.get(n, {}).get("calibrated") for n in ("alice", "bob")) and by_nick

        by_nick = poll(placed, timeout=10, what="alice and bob calibrated by the heard event")
        assert by_nick["bob"]["offset_ms"] - by_nick["alice"]["offset_ms"] == 3_200
        assert not by_nick["one"]["calibrated"], "the node itself neither marked nor was heard"


def test_a_match_about_a_moment_before_the_peer_joined_counts_for_nothing(lan):
    node = lan("one")
    with WireClient("alice") as alice, WireClient("bob") as bob:
        for client in (alice, bob):
            client.meet(node.address)
            client.join(node.address)
        old = alice.say(node.address, ROOM, Heard(bob.id, now_ms() - 600_000, 3_200_000, 15_000, 600))
        poll(lambda: room(node)["version_vector"].get(alice.id_hex) == old.seq, timeout=10, what="the match held")
        assert not members(node)["bob"]["calibrated"]


def test_a_weak_match_calibrates_nobody(lan):
    node = lan("one")
    with WireClient("alice") as alice, WireClient("bob") as bob:
        for client in (alice, bob):
            client.meet(node.address)
            client.join(node.address)
        weak = alice.say(node.address, ROOM, Heard(bob.id, now_ms(), 3_200_000, 100_000, 89))
        poll(lambda: room(node)["version_vector"].get(alice.id_hex) == weak.seq, timeout=10,
             what="the weak match held")
        assert not members(node)["bob"]["calibrated"]


def test_a_sound_window_round_trips_and_is_signed():
    with WireClient("alice") as alice:
        bits = [0, 0x9E3779B1, 7, 0, 0xFFFFFFFF]
        loud = [False, True, True, False, True]
        data = encode_sound_window(alice.id, ROOM, 2_000, 1_000, bits, loud, key=alice.key)
        assert data[:4] == b"HD\x05\x0b"
        assert len(data) == 4 + 32 + 2 + len(ROOM) + 8 + 8 + 2 + 4 * 5 + 1 + 64
        window = decode_message(data)
        assert isinstance(window, SoundWindow) and window.bits == bits and window.loud == loud
        assert encode_message(window) == data and verify_sound_window(data, alice.id)
        assert not verify_sound_window(data[:50] + bytes([data[50] ^ 1]) + data[51:], alice.id)


def test_a_private_window_is_sealed_and_bound_to_its_fields():
    key = RoomKey.from_master("superbowl", bytes([7]) * 32)
    with WireClient("alice") as alice:
        bits, loud = [1, 2, 3], [True, True, True]
        data = encode_sound_window(alice.id, key.id, 2_000, 1_000, bits, loud, key=alice.key, room_key=key)
        window = decode_message(data)
        assert window.sealed is not None and window.bits == []
        opened = key.open_sound(window)
        assert opened.bits == bits and opened.loud == loud
        moved = SoundWindow(window.from_id, window.room, window.sent_at, window.start + 10, window.frames,
                            sealed=window.sealed)
        assert key.open_sound(moved) is None


def test_windows_outside_their_one_encoding_are_refused():
    with WireClient("alice") as alice:
        for bits, loud in (([5], [False]), ([1] * 9, [True] * 9)):
            data = bytearray(encode_sound_window(alice.id, ROOM, 0, 0, bits, loud, key=alice.key))
            if len(bits) == 9:
                data[-64 - 1] |= 0x80  # frame 15 does not exist
            try:
                decode_message(bytes(data))
            except WireError as error:
                assert error.code == "nonCanonicalSound"
            else:
                raise AssertionError("accepted")
        try:
            decode_message(encode_sound_window(alice.id, ROOM, 0, 0, [], [], key=alice.key))
        except WireError as error:
            assert error.code == "lengthOutOfRange"
        else:
            raise AssertionError("accepted an empty window")


def speechlike_wav(path: Path, seconds: float, rate: int = 16_000) -> Path:
    """Seeded bursts of noise and silence, 16-bit mono: loud and quiet frames both."""
    rng = random.Random(30)
    levels = (9000 if (i // (rate // 4)) % 3 else 0 for i in range(int(seconds * rate)))
    return write_pcm16(path, (rng.randint(-level, level) for level in levels), rate)


def test_dump_features_prints_the_windows_a_listening_node_sends_a_peer(lan, binary, tmp_path):
    wav = speechlike_wav(tmp_path / "room.wav", 30)
    bob = lan("bob", extra=["--audio-file", str(wav)])
    with WireClient("eve") as eve:
        eve.meet(bob.address)
        eve.join(bob.address)
        started = bob.wait_for(lambda o: o["type"] == "listening" and "source" in o, what="bob hearing his file")
        received = []
        while len(received) < 4:
            received.append(eve.recv(timeout=15, kind=SoundWindow).message)
    dumped = [decode_message(bytes.fromhex(line)) for line in
              subprocess.run([binary, "align", "--dump-features", str(wav)], capture_output=True, text=True,
                             check=True, timeout=60).stdout.split()]
    assert len(dumped) == 15, "30 s of sound, a window every 2 s"
    by_start = {window.start: window for window in dumped}
    for window in received:
        # The node's clock counts from when it began hearing the file; the dump's from 0.
        twin = by_start[window.start - started["started_at"]]
        assert (window.frames, window.bits, window.loud, window.room) == (twin.frames, twin.bits, twin.loud, twin.room)
        assert window.sealed is None and twin.sealed is None
        assert any(window.loud) and not all(window.loud), "a window of loud and quiet frames"
