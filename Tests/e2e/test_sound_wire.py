"""Listening on the wire (protocol version 5), from the Python client written from
docs/PROTOCOL.md: a `heard` event (tag 11) calibrates a real node as the doc says, a sound
window (kind 11) encodes, seals for its one receiver, signs and decodes as drawn there, `huddle
align --dump-features` prints what a peer being placed really reads (the bench's eavesdropper
reads that), and what leaves a listening node is readable by that peer alone, and sent to it
only while it needs it."""

from __future__ import annotations

import random
import socket
import subprocess
import time
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from huddletest.audio_corpus import write_pcm16
from huddletest.polling import poll
from huddletest.wire import (Heard, RoomKey, SoundWindow, WireClient, WireError, decode_message, direct_key,
                             encode_message, encode_sound_window, now_ms, read_dumped_window, sound_frames_data,
                             verify_sound_window)

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


def test_a_sound_window_round_trips_sealed_for_its_receiver_and_signed():
    with WireClient("alice") as alice, WireClient("bob") as bob:
        pair = direct_key(alice.key, alice.id, bob.id, bob.agreement_key)
        bits = [0, 0x9E3779B1, 7, 0, 0xFFFFFFFF]
        loud = [False, True, True, False, True]
        data = encode_sound_window(alice.id, ROOM, 2_000, 1_000, bits, loud, key=alice.key, pair_key=pair,
                                   to_id=bob.id)
        assert data[:4] == b"HD\x06\x0b"
        assert len(data) == 4 + 32 + 2 + len(ROOM) + 8 + 8 + 2 + 12 + 4 * 5 + 1 + 16 + 64
        window = decode_message(data)
        assert isinstance(window, SoundWindow) and window.bits == [] and window.sealed is not None
        assert encode_message(window) == data and verify_sound_window(data, alice.id)
        assert not verify_sound_window(data[:50] + bytes([data[50] ^ 1]) + data[51:], alice.id)
        opened = pair.open_sound(window, bob.id)
        assert opened.bits == bits and opened.loud == loud
        assert pair.open_sound(window, alice.id) is None, "sealed for bob"
        moved = SoundWindow(window.from_id, window.room, window.sent_at, window.start + 10, window.frames,
                            sealed=window.sealed)
        assert pair.open_sound(moved, bob.id) is None, "bound to its times"
        private = decode_message(encode_sound_window(alice.id, "~" + "a" * 24, 2_000, 1_000, bits, loud,
                                                     key=alice.key, pair_key=pair, to_id=bob.id))
        assert pair.open_sound(private, bob.id).bits == bits, "a private room's the same way"


def test_windows_outside_their_one_encoding_are_refused():
    key = RoomKey.from_master("@bob", bytes([7]) * 32)
    bob_id = bytes(range(32))
    with WireClient("alice") as alice:
        for bits, loud in (([5], [False]), ([1] * 9, [True] * 9)):
            sealed = key.seal_sound(alice.id, bob_id, ROOM, 0, 0, bits, loud)
            if len(bits) == 9:  # frame 15 does not exist: reseal the public form with its flag set
                nonce = sealed[:12]
                plain = bytearray(sound_frames_data(bits, loud))
                plain[-1] |= 0x80
                ad = RoomKey.sound_associated_data(ROOM, alice.id, bob_id, 0, 0, 9)
                sealed = nonce + ChaCha20Poly1305(key.seal_key).encrypt(nonce, bytes(plain), ad)
            window = decode_message(encode_sound_window(alice.id, ROOM, 0, 0, bits, loud, key=alice.key,
                                                        sealed=sealed))
            assert key.open_sound(window, bob_id) is None, "not opened: not its one encoding"
        try:
            decode_message(encode_sound_window(alice.id, ROOM, 0, 0, [], [], key=alice.key, sealed=b""))
        except WireError as error:
            assert error.code == "lengthOutOfRange"
        else:
            raise AssertionError("accepted an empty window")


def speechlike_wav(path: Path, seconds: float, rate: int = 16_000) -> Path:
    """Seeded bursts of noise and silence, 16-bit mono: loud and quiet frames both."""
    rng = random.Random(30)
    levels = (9000 if (i // (rate // 4)) % 3 else 0 for i in range(int(seconds * rate)))
    return write_pcm16(path, (rng.randint(-level, level) for level in levels), rate)


def dumped_windows(binary, wav) -> dict[int, tuple[list[int], list[bool]]]:
    """`huddle align --dump-features`, by window start (ms from the file's start)."""
    out = subprocess.run([binary, "align", "--dump-features", str(wav)], capture_output=True, text=True,
                         check=True, timeout=60).stdout.split()
    windows = {}
    for line in out:
        start, frames, bits, loud = read_dumped_window(bytes.fromhex(line))
        assert frames == len(bits) == len(loud)
        windows[start] = (bits, loud)
    return windows


def test_what_leaves_a_listening_node_is_readable_by_its_one_receiver_and_only_while_it_needs_it(
        lan, binary, tmp_path):
    """Bob listens in a public room. Eve listens too (she sends him windows of her own), so until
    their offsets are known he sends her every window, sealed for her: she opens each, and each is
    exactly what `--dump-features` prints. Mallory is in the room and does not listen: after the
    first few windows (announcing, a re-check) he gets nothing, and nothing he got or saw sent to
    eve carries a frame's bits in the clear."""
    wav = speechlike_wav(tmp_path / "room.wav", 60)
    dumped = dumped_windows(binary, wav)
    assert len(dumped) == 30, "60 s of sound, a window every 2 s"
    with WireClient("eve") as eve, WireClient("mallory") as mallory:
        bob = lan("bob", extra=["--audio-file", str(wav)])
        for client in (eve, mallory):
            client.meet(bob.address)
            client.join(bob.address)
        started = bob.wait_for(lambda o: o["type"] == "listening" and "source" in o, what="bob hearing his file")
        bob_id = bytes.fromhex(bob.id)
        eve_key = poll(lambda: eve.pair_key(bob_id), timeout=10, what="eve has bob's agreement key")
        mallory_key = poll(lambda: mallory.pair_key(bob_id), timeout=10, what="mallory has bob's agreement key")

        received = []
        deadline = time.monotonic() + 45
        while len(received) < 12 and time.monotonic() < deadline:
            # Eve's own sound, so bob knows she listens (sealed for him, as a node would).
            now = now_ms()
            eve.send_raw(bob.address, encode_sound_window(eve.id, ROOM, now, now - 2_000, [1] * 200, [True] * 200,
                                                          key=eve.key, pair_key=eve_key, to_id=bob_id))
            try:
                received.append(eve.recv(timeout=2, kind=SoundWindow))
            except TimeoutError:
                pass
        assert len(received) >= 12, f"bob sent eve {len(received)} windows in 45 s: not every window"
        to_mallory = []
        while True:
            try:
                to_mallory.append(mallory.recv(timeout=0.1, kind=SoundWindow))
            except TimeoutError:
                break
        status = bob.status()

    # Two frames' bits in a row, as a window in the clear would carry them: one frame's 4 bytes
    # turned up by chance in the sealed bytes (thousands of words, a dozen windows of ~1 kB: about
    # one run in a hundred; CI went red on it once), eight bytes do not.
    loud_words = {bits[i].to_bytes(4, "big") + bits[i + 1].to_bytes(4, "big")
                  for bits, loud in dumped.values() for i in range(len(bits) - 1) if loud[i]}
    for got in received:
        window = got.message
        opened = eve_key.open_sound(window, eve.id)
        assert opened is not None, "eve, the receiver, opens it"
        twin = dumped[window.start - started["started_at"]]
        assert (opened.bits, opened.loud) == twin, "exactly what --dump-features prints"
        assert mallory_key.open_sound(window, mallory.id) is None, "mallory, in the room, cannot"
        assert not any(word in got.data for word in loud_words), "no frame's bits in the clear"
    assert any(got.message.start - started["started_at"] >= 20_000 for got in received), \
        "eve got windows long after the announcement"
    # Mallory, not listening, got the announcement and re-checks only: at most the first 5 of the
    # windows eve got all of.
    mallory_starts = sorted(got.message.start for got in to_mallory)
    assert len(mallory_starts) <= 5, f"mallory was sent {len(mallory_starts)} windows"
    assert all(start - started["started_at"] < 10_000 for start in mallory_starts)
    assert not any(word in got.data for got in to_mallory for word in loud_words)
    sharing = status["listening"]["sharing"]
    assert sharing["shared_with"]["eve"] >= 24 and sharing["shared_with"].get("mallory", 0) <= 10


def listening_bob(lan, wav: Path, clients: list, extra: list[str] = ()) -> tuple:
    """bob listening to `wav` (with `extra` flags), each of `clients` a member of his room: bob,
    his id, and each client's pair key with him."""
    bob = lan("bob", extra=["--audio-file", str(wav), *extra])
    for client in clients:
        client.meet(bob.address)
        client.join(bob.address)
    bob.wait_for(lambda o: o["type"] == "listening" and "source" in o, what="bob hearing his file")
    bob_id = bytes.fromhex(bob.id)
    keys = [poll(lambda client=client: client.pair_key(bob_id), timeout=10, what=f"{client.nick} has bob's agreement key")
            for client in clients]
    nicks = {client.nick for client in clients}
    poll(lambda: nicks <= {m["nick"] for m in room(bob)["members"]}, timeout=10, what=f"{sorted(nicks)} members on bob")
    return bob, bob_id, keys


def test_a_member_flooding_sound_windows_gets_one_a_second_opened(lan, tmp_path):
    """Round 3: 16 member identities flooding windows took a node from 2 % to 51 % of a core.
    Now each sender's windows are budgeted (one a second, bursts of four) before any seal is
    opened or match tried (their signatures first: issue 45): eve's 200 windows in 2 s cost bob
    200 signature checks, and he opens a handful."""
    wav = speechlike_wav(tmp_path / "room.wav", 30)
    with WireClient("eve") as eve:
        bob, bob_id, (key,) = listening_bob(lan, wav, [eve])
        before = bob.status()["counters"]
        started = time.monotonic()
        for n in range(200):
            now = now_ms()
            eve.send_raw(bob.address, encode_sound_window(eve.id, ROOM, now, now - 2_000, [n + 1] * 200, [True] * 200,
                                                          key=eve.key, pair_key=key, to_id=bob_id))
            time.sleep(0.01)
        elapsed = time.monotonic() - started
        after = poll(lambda: (c := bob.status()["counters"])["drops"].get("sound_budget", 0)
                     - before["drops"].get("sound_budget", 0) + c["sound_windows_in"] - before["sound_windows_in"] >= 200
                     and c, timeout=10, what="bob dealt with eve's 200 windows")
    opened = after["sound_windows_in"] - before["sound_windows_in"]
    refused = after["drops"].get("sound_budget", 0) - before["drops"].get("sound_budget", 0)
    print(f"eve sent 200 windows in {elapsed:.1f} s: bob opened {opened}, refused {refused} unopened")
    assert opened <= 4 + elapsed + 1
    assert refused >= 200 - (4 + elapsed + 1)


def test_forged_and_replayed_windows_from_a_stranger_cost_a_member_none_of_his_sound(lan, tmp_path):
    """Issue 45: a stranger with no key sent windows "from alice" to bob (random signatures),
    1.5 a second: they spent alice's budget before their signatures were checked, and the two
    never aligned. Now the stranger floods 10 a second "from eve" from another address, replays
    each of eve's windows and sends one dated 1970: bob takes every one of eve's own."""
    wav = speechlike_wav(tmp_path / "room.wav", 40)
    forger = Ed25519PrivateKey.generate()
    stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    stranger.bind(("127.0.0.3", 0))
    with WireClient("eve") as eve, stranger:
        bob, bob_id, (key,) = listening_bob(lan, wav, [eve])
        host, port = bob.address.rsplit(":", 1)
        before = bob.status()["counters"]
        honest = 0
        for tick in range(100):  # 10 s
            now = now_ms()
            forged = encode_sound_window(eve.id, ROOM, now, now - 2_000, [tick + 7] * 200, [True] * 200,
                                         key=forger, pair_key=key, to_id=bob_id)
            stranger.sendto(forged, (host, int(port)))
            if tick % 20 == 0:  # eve's own, every 2 s, and the stranger's copy of it
                window = encode_sound_window(eve.id, ROOM, now, now - 2_000, [tick + 1] * 200, [True] * 200,
                                             key=eve.key, pair_key=key, to_id=bob_id)
                eve.send_raw(bob.address, window)
                honest += 1
                time.sleep(0.05)
                stranger.sendto(window, (host, int(port)))
            time.sleep(0.1)
        old = encode_sound_window(eve.id, ROOM, 1_000, 0, [3] * 200, [True] * 200, key=eve.key, pair_key=key,
                                  to_id=bob_id)
        stranger.sendto(old, (host, int(port)))

        def dealt_with(c: dict) -> bool:
            drops = {k: c["drops"].get(k, 0) - before["drops"].get(k, 0)
                     for k in ("bad_signature", "check_budget", "sound_replayed")}
            return drops["bad_signature"] + drops["check_budget"] >= 100 and drops["sound_replayed"] >= honest + 1
        after = poll(lambda: c if dealt_with(c := bob.status()["counters"]) else None, timeout=10,
                     what="bob dealt with the stranger's windows")
    taken = after["sound_windows_in"] - before["sound_windows_in"]
    assert taken == honest, f"bob took {taken} of eve's {honest} windows"
    assert after["drops"].get("sound_budget", 0) == before["drops"].get("sound_budget", 0)


def test_five_keys_at_one_machine_get_no_more_of_the_rooms_sound_than_one_member(lan, tmp_path):
    """Issue 45, 4: five member keys taking turns posing as a listener got 642 of 650 s of the
    room's sound, each with a placing budget of its own. The budget is a machine's now, all its
    keys together. bob listens with `--sound-placing 10` (10 s an hour a machine, 15 s for
    everyone); five keys on one host take turns sending him their own windows, 8 s each, for
    40 s: they get the announcement, a re-check and at most that one machine's 10 s, not the
    20 windows bob heard."""
    wav = speechlike_wav(tmp_path / "room.wav", 60)
    keys = [WireClient(f"key{i}", host="127.0.0.2") for i in range(5)]
    try:
        bob, bob_id, pair_keys = listening_bob(lan, wav, keys, extra=["--sound-placing", "10"])
        starts: set[int] = set()
        started = time.monotonic()
        last_sent = 0.0
        while (elapsed := time.monotonic() - started) < 40:
            turn = int(elapsed // 8)
            if time.monotonic() - last_sent >= 2:
                now = now_ms()
                keys[turn].send_raw(bob.address, encode_sound_window(
                    keys[turn].id, ROOM, now, now - 2_000, [turn + 1] * 200, [True] * 200, key=keys[turn].key,
                    pair_key=pair_keys[turn], to_id=bob_id))
                last_sent = time.monotonic()
            for key in keys:
                while True:
                    try:
                        starts.add(key.recv(timeout=0.02, kind=SoundWindow).message.start)
                    except TimeoutError:
                        break
        sharing = bob.status()["listening"]["sharing"]
    finally:
        for key in keys:
            key.close()
    print(f"five keys of one machine got {len(starts)} of bob's windows in 40 s; bob: {sharing}")
    # 3 announced, 2 of a re-check, 5 of the machine's placing budget (10 s), two in flight: a
    # budget per key, and none for everyone, sent them all 20.
    assert len(starts) <= 12, sorted(starts)
    assert len(starts) >= 5, "the keys were sent nothing: the attack did not run"
