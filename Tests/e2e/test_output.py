"""A reader that stops reading a node's stdout must not stall the node."""

from __future__ import annotations

import json
import subprocess
import time

from huddletest.node import TEST_SHIELD, shield_flags
from huddletest.polling import poll


def test_a_stdout_nobody_reads_for_15_s_does_not_make_the_node_gone(tmp_path, binary, lan):
    # alice's stdout is a pipe this test leaves unread for 15 s while bob floods the room. Nobody
    # is placed: with the shield on (the default) alice would hold every message 90 s.
    alice = subprocess.Popen(
        [binary, "run", "--name", "alice", "--data-dir", str(tmp_path / "alice"), "--json", "--no-mdns",
         "--room", "superbowl", *shield_flags(TEST_SHIELD)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
    try:
        ready = json.loads(alice.stdout.readline())
        bob = lan("bob", peers=[f"127.0.0.1:{ready['port']}"])
        bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == "alice", what="alice's join")
        pad = "x" * 500
        count = 3000  # about 2.5 MB of JSON lines on alice's stdout, 40 pipe buffers
        for n in range(count):
            bob.say(f"{n} {pad}")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            assert alice.poll() is None
            troubled = [o for o in list(bob.outputs)
                        if o["type"] == "peer" and o["nick"] == "alice" and o["state"] != "alive"]
            assert not troubled, f"bob lost alice while her stdout was unread: {troubled}"
            time.sleep(0.5)
        # alice answers her control socket too. Once she holds all of bob's messages (on a busy
        # machine the flood may take longer than 15 s to replicate), her stdout has every one,
        # in order, the last of them flushed as she quits.
        def status():
            out = subprocess.run([binary, "status", "--json", "--data-dir", str(tmp_path / "alice")],
                                 capture_output=True, text=True, timeout=10)
            assert out.returncode == 0, out.stderr
            return json.loads(out.stdout)
        assert status()["node"]["nick"] == "alice"
        poll(lambda: status()["rooms"][0]["event_count"] >= count + 2, timeout=60, interval=0.5,
             what=f"alice holding the {count} messages and both joins")
        alice.stdin.write("/quit\n")
        alice.stdin.flush()
        lines = [json.loads(line) for line in alice.stdout]
        shown = [int(o["text"].split(" ", 1)[0]) for o in lines if o["type"] == "message"]
        missing = sorted(set(range(count)) - set(shown))
        twice = sorted(n for n in set(shown) if shown.count(n) > 1)
        out_of_order = [(a, b) for a, b in zip(shown, shown[1:]) if b < a]
        assert (missing, twice, out_of_order) == ([], [], []), \
            f"{len(shown)} shown; missing {missing[:20]}, twice {twice[:20]}, out of order {out_of_order[:20]}"
        assert alice.wait(timeout=15) == 0
    finally:
        if alice.poll() is None:
            alice.kill()
            alice.wait()
