"""Private rooms: only nodes with the passphrase read or write them, on the wire and at rest."""

import sqlite3
import subprocess
import time

from huddletest.node import heard_since
from huddletest.polling import poll


def joined(node, nick):
    node.wait_for(lambda o: o["type"] == "join" and o["nick"] == nick)


def test_the_same_passphrase_chats_and_others_see_nothing(lan):
    alice = lan("alice", passphrase="touchdown")
    bob = lan("bob", peers=[alice.address], passphrase="touchdown")
    joined(bob, "alice")
    joined(alice, "bob")
    wrong = lan("wrong", peers=[alice.address], passphrase="field goal")
    public = lan("public", peers=[alice.address])
    # Both outsiders have met alice and told her their rooms (a key takes a fifth of a second of
    # scrypt, longer on a busy machine) before anything is said: what they then miss, they miss
    # for want of the passphrase, not for being late.
    poll(lambda: {"wrong", "public"} <= {p["nick"] for p in alice.status()["peers"] if p["rooms"]},
         what="alice meeting both outsiders")

    alice.say("the secret play")
    bob.message("the secret play")
    bob.say("keep it quiet")
    alice.message("keep it quiet")
    public.say("anyone here?")
    public.message("anyone here?")
    # Each has heard from the others since all three lines were written (each node reads its
    # socket in order): what it has not shown by then, it was not going to show.
    said = time.monotonic()
    for outsider in (wrong, public):
        heard_since(outsider, [alice, bob], said)
    for member in (alice, bob):
        heard_since(member, [public], said)

    for outsider in (wrong, public):
        assert outsider.shown_texts() == (["anyone here?"] if outsider is public else [])
        assert not [o for o in outsider.outputs if o.get("nick") in ("alice", "bob") and o["type"] == "join"]
    assert "anyone here?" not in alice.shown_texts() + bob.shown_texts()

    status = alice.status()
    [room] = status["rooms"]
    assert room["name"] == "superbowl" and room["private_id"].startswith("~")
    # Every room travels as an id: the wrong passphrase's differs, the public room is by name.
    rooms_of = {p["nick"]: p["rooms"] for p in status["peers"]}
    assert rooms_of["bob"] == [room["private_id"]]
    assert rooms_of["wrong"][0].startswith("~") and rooms_of["wrong"] != [room["private_id"]]
    assert rooms_of["public"] == ["superbowl"]


def test_the_store_keeps_private_events_sealed_and_a_restart_needs_the_passphrase(lan):
    alice = lan("alice", passphrase="touchdown")
    bob = lan("bob", peers=[alice.address], passphrase="touchdown")
    joined(bob, "alice")
    alice.say("sealed at rest")
    bob.message("sealed at rest")
    private_id = bob.status()["rooms"][0]["private_id"]
    assert bob.quit() == 0

    db = sqlite3.connect(bob.data_dir / "huddle.sqlite")
    rows = db.execute("SELECT room, kind, text, bytes FROM event").fetchall()
    db.close()
    assert rows and all(room == private_id and kind == "sealed" and text is None for room, kind, text, _ in rows)
    assert not any(b"sealed at rest" in bytes(blob) or b"superbowl" in bytes(blob) for *_, blob in rows)

    # huddle history reads it with the passphrase only.
    import subprocess
    binary = str(bob.process.args[0])
    secret = bob.data_dir.parent / "bob.passphrase"
    listed = subprocess.run([binary, "history", "--room", "superbowl", "--data-dir", str(bob.data_dir),
                             "--passphrase-file", str(secret), "--json"], capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert "sealed at rest" in listed.stdout
    refused = subprocess.run([binary, "history", "--room", "superbowl", "--data-dir", str(bob.data_dir)],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0 and "needs --passphrase-file" in refused.stderr, refused.stderr
    # Without --room, the room bob was last in is private: its name is said, not guessed at.
    unnamed = subprocess.run([binary, "history", "--data-dir", str(bob.data_dir)], capture_output=True, text=True,
                             timeout=60)
    assert unnamed.returncode == 1 and unnamed.stderr.strip() == (
        'Error: the node was last in private room "superbowl": give --room and --passphrase-file to read it'), unnamed

    # Without the passphrase the room stays shut; with it, the room opens where it was: no new
    # join (calibration kept), and nothing shown twice.
    locked = lan("bob", room=None, peers=[alice.address])
    locked.wait_for(lambda o: o["type"] == "info" and "no passphrase for superbowl" in o["message"])
    # --room superbowl without the passphrase does not fall into a public superbowl.
    assert locked.quit() == 0
    refused = lan("bob", peers=[alice.address])
    refused.wait_for(lambda o: o["type"] == "error" and "superbowl is a private room on this node" in o["message"])
    assert refused.status()["rooms"] == []
    assert refused.quit() == 0
    again = lan("bob", peers=[alice.address], passphrase="touchdown")
    alice.say("after the restart")
    again.message("after the restart")
    assert "sealed at rest" not in again.shown_texts()
    [room] = again.status()["rooms"]
    assert room["name"] == "superbowl" and room["event_count"] >= 4
    # A line from bob now: alice shows his events in order, so a new join would come first.
    again.say("back with the passphrase")
    alice.message("back with the passphrase")
    assert not [o for o in alice.outputs if o["type"] == "join" and o["nick"] == "bob"][1:]


def test_a_passphrase_file_must_say_something(binary, tmp_path):
    import subprocess

    empty = tmp_path / "empty"
    empty.write_text("\n")
    for args, expected in [
        (["--room", "superbowl", "--passphrase-file", str(empty)], "first line is blank"),
        (["--room", "superbowl", "--passphrase-file", str(tmp_path / "missing")], "there is no such file"),
        (["--passphrase-file", str(empty)], "needs --room"),
    ]:
        result = subprocess.run([binary, "run", "--name", "x", "--data-dir", str(tmp_path / "x"), *args],
                                capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        assert result.returncode != 0
        assert expected in result.stderr


def _capture(tmp_path):
    """tcpdump on loopback into a file; returns (process, path). Needs root and tcpdump, which
    Scripts/bootstrap --test installs."""
    import os
    import shutil
    import subprocess

    from huddletest.skips import cannot_run_here

    if shutil.which("tcpdump") is None or os.geteuid() != 0:
        cannot_run_here("needs tcpdump and root (Scripts/bootstrap --test installs tcpdump; CI runs as root)", "capture")
    path = tmp_path / "lo.pcap"
    process = subprocess.Popen(["tcpdump", "-i", "lo", "-U", "-s", "0", "-w", str(path)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # tcpdump says "listening on lo" once it captures.
    line = process.stderr.readline()
    assert "listening on" in line, line
    return process, path


def _stop(process):
    import signal

    process.send_signal(signal.SIGINT)
    process.wait(timeout=10)


def test_a_packet_capture_holds_no_plaintext_of_a_private_room(lan, tmp_path):
    secret_text = "blitz on third down, tell nobody"
    capture, pcap = _capture(tmp_path)
    try:
        alice = lan("alice", passphrase="touchdown")
        bob = lan("bob", peers=[alice.address], passphrase="touchdown")
        joined(bob, "alice")
        alice.say(secret_text)
        bob.message(secret_text)
        bob.say("/msg alice psst: direct and private")
        alice.wait_for(lambda o: o["type"] == "message" and o.get("direct"))
        # A late joiner pulls the history over TCP: that is in the capture too.
        late = lan("late", peers=[alice.address], passphrase="touchdown")
        late.message(secret_text)
        # The control: a public room's text does show up in a capture.
        public = lan("public", room="open-room", peers=[alice.address])
        other = lan("other", room="open-room", peers=[public.address])
        joined(other, "public")
        public.say("in the clear on purpose")
        other.message("in the clear on purpose")
        # tcpdump writes each packet as it takes it (-U), in order: once the last line sent is in
        # the file, everything sent before it is too.
        poll(lambda: b"in the clear on purpose" in pcap.read_bytes(), timeout=10, interval=0.1,
             what="the last line in the capture")
    finally:
        _stop(capture)
    # Only this test's nodes' traffic: other nodes on this machine's loopback (another test run,
    # with a public room of the same name) are not ours to judge.
    ours = tmp_path / "ours.pcap"
    ports = " or ".join(f"port {node.port}" for node in (alice, bob, late, public, other))
    subprocess.run(["tcpdump", "-r", str(pcap), "-w", str(ours), ports], check=True, capture_output=True, timeout=30)
    captured = ours.read_bytes()
    assert b"in the clear on purpose" in captured, "the capture saw no traffic at all"
    for plain in (secret_text, "psst: direct and private", "superbowl", "touchdown"):
        assert plain.encode() not in captured, f"{plain!r} went over the wire in clear"
