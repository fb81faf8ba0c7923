"""Piped input that ends: the node waits, at most 5 s and saying so, until a peer has what it
wrote, then exits 0; when none does, it says the message is stored and not yet sent, and exits 3.
Run in a terminal (a tmux pane) as a person would type it in a shell."""

import shlex
import time

from huddletest.terminal_pane import TerminalPane


def piped(binary, tmp_path, name, *extra):
    """`echo hello | huddle run ...` in a tmux pane; returns the pane once the command exited,
    and the wall-clock time (ms) it was seen to exit."""
    command = (f"echo hello | {shlex.quote(binary)} run --name {name} --room superbowl --no-mdns "
               f"--data-dir {shlex.quote(str(tmp_path / name))} " + " ".join(map(shlex.quote, extra)))
    pane = TerminalPane(["sh", "-c", command], tmp_path / f"{name}-pane", columns=160)
    try:
        pane.wait_until_exited(timeout=20)
    except BaseException:
        pane.close()
        raise
    return pane, int(time.time() * 1000)


def test_echo_hello_reaches_a_running_peer_before_the_piping_node_exits(lan, binary, tmp_path):
    alice = lan("alice")
    pane, exited_by = piped(binary, tmp_path, "dave", "--peer", alice.address)
    try:
        screen = pane.transcript()
        assert pane.exit_status() == 0, screen
        assert "waiting up to 5 s for a peer to receive what you wrote" in screen, screen
        assert "alice received what you wrote; goodbye" in screen, screen
        message = alice.message("hello", timeout=5)
        assert message["nick"] == "dave"
        # alice had it before dave's process was gone.
        assert message["shown_at"] <= exited_by, (message, exited_by)
    finally:
        pane.close()


def test_with_no_peer_reachable_it_says_not_sent_and_exits_3(binary, tmp_path):
    started = time.monotonic()
    pane, _ = piped(binary, tmp_path, "erin", "--peer", "127.0.0.1:9")  # nothing listens there
    took = time.monotonic() - started
    try:
        screen = pane.transcript()
        assert pane.exit_status() == 3, screen
        assert "not sent yet: no peer received it within 5 s" in screen, screen
        assert "stored in" in screen and "goes out when a node runs there again" in screen, screen
        assert 4.5 < took < 15, took
    finally:
        pane.close()


def test_with_no_peer_to_be_found_it_does_not_wait(binary, tmp_path):
    started = time.monotonic()
    pane, _ = piped(binary, tmp_path, "fay")  # no --peer, --no-mdns: nobody can turn up
    took = time.monotonic() - started
    try:
        screen = pane.transcript()
        assert pane.exit_status() == 3, screen
        assert "not sent yet: no peer is known and none can be found (no --peer, and mDNS is off)" in screen, screen
        assert took < 4, took
    finally:
        pane.close()


def test_json_says_where_the_message_stands(lan, binary, tmp_path):
    import json
    import subprocess
    out = subprocess.run([binary, "run", "--name", "gus", "--room", "superbowl", "--no-mdns", "--json",
                          "--data-dir", str(tmp_path / "gus"), "--peer", "127.0.0.1:9"],
                         input="hello\n", capture_output=True, text=True, timeout=30)
    assert out.returncode == 3, out.stderr
    delivery = [o for o in map(json.loads, out.stdout.splitlines()) if o["type"] == "delivery"]
    assert [o["state"] for o in delivery] == ["waiting", "not_sent"], delivery
    assert delivery[0]["timeout_ms"] == 5000 and delivery[1]["exit_code"] == 3


def test_a_piped_line_longer_than_a_message_goes_as_numbered_parts(lan, binary, tmp_path):
    import subprocess
    alice = lan("alice")
    text = " ".join(f"w{10_000 + n}" for n in range(1_429))[:10_000]
    out = subprocess.run([binary, "run", "--name", "hal", "--room", "superbowl", "--no-mdns", "--peer", alice.address,
                          "--data-dir", str(tmp_path / "hal")], input=text + "\n", capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0, out.stderr
    parts = [alice.wait_for(lambda o, n=n: o["type"] == "message" and o["text"].startswith(f"({n}/3) "),
                            what=f"part {n}")["text"] for n in (1, 2, 3)]
    assert " ".join(part[len("(1/3) "):] for part in parts) == text


def test_a_signal_while_it_waits_ends_the_wait_at_once_and_says_it_is_not_sent(binary, tmp_path):
    import json
    import signal
    import subprocess
    proc = subprocess.Popen([binary, "run", "--name", "ida", "--room", "superbowl", "--no-mdns", "--json",
                             "--data-dir", str(tmp_path / "ida"), "--peer", "127.0.0.1:9"],  # nobody answers there
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.stdin.write("hello\n")
        proc.stdin.close()
        lines = []
        for line in proc.stdout:
            lines.append(json.loads(line))
            if lines[-1]["type"] == "delivery":
                break
        assert lines[-1]["state"] == "waiting", lines
        signalled = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        took = time.monotonic() - signalled
        rest = proc.stdout.read()
    finally:
        proc.kill()
        proc.wait()
    delivery = [o for o in map(json.loads, rest.splitlines()) if o["type"] == "delivery"]
    assert proc.returncode == 3, (proc.returncode, rest)
    assert [o["state"] for o in delivery] == ["not_sent"], delivery
    assert delivery[0]["reason"] == "the node was stopped before a peer received it", delivery
    assert took < 3, f"the wait went on {took:.1f} s after the signal"


def test_a_burst_of_piped_lines_and_commands_keeps_its_order(lan, binary, tmp_path):
    """A pipe's burst is read at once and its chat goes in one commit: commands among the lines
    still take effect in their place, and everything reaches a peer in order."""
    import subprocess
    alice = lan("alice")
    alice.say("/join nfl")
    lines = [f"burst {n}" for n in range(300)] + ["/rooms", "/join nfl", "in nfl now", "/join superbowl", "back"]
    out = subprocess.run([binary, "run", "--name", "ivy", "--room", "superbowl", "--no-mdns", "--peer", alice.address,
                          "--data-dir", str(tmp_path / "ivy")], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    alice.message("back", timeout=20)
    # In order in each room (rooms are apart: one's lines may reach alice before the other's).
    shown = {room: [o["text"] for o in alice.outputs if o["type"] == "message" and o["nick"] == "ivy" and o["room"] == room]
             for room in ("superbowl", "nfl")}
    assert shown["superbowl"] == [f"burst {n}" for n in range(300)] + ["back"], shown["superbowl"][-3:]
    assert shown["nfl"] == ["in nfl now"]
    # On ivy's own screen, a command answers in its place too: after every line piped before
    # it is shown (a run's commit overlaps the next run's signing, never a command).
    printed = out.stdout.splitlines()
    answer = next(i for i, line in enumerate(printed) if line.startswith("your rooms: "))
    own = [i for i, line in enumerate(printed) if " ivy: burst " in line]
    assert len(own) == 300 and max(own) < answer, printed[answer - 2:answer + 2]


def test_nothing_piped_after_quit_is_sent(binary, tmp_path):
    import json
    import subprocess
    out = subprocess.run([binary, "run", "--name", "jo", "--room", "superbowl", "--no-mdns", "--data-dir",
                          str(tmp_path / "jo")], input="one\ntwo\n/quit\nnever sent\n", capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0, out.stderr
    listed = subprocess.run([binary, "history", "--json", "--data-dir", str(tmp_path / "jo"), "--room", "superbowl"],
                            capture_output=True, text=True, timeout=30)
    assert listed.returncode == 0, listed.stderr
    assert [json.loads(line)["text"] for line in listed.stdout.splitlines()] == ["one", "two"]
