"""Membership seen from outside, and the tools that talk to a node: status, send, history."""

import json
import subprocess
import time

from huddletest.node import heard_since


def peer_state(node, nick, state, timeout):
    return node.wait_for(lambda o: o["type"] == "peer" and o["nick"] == nick and o["state"] == state,
                         timeout=timeout, what=f"{nick} {state}")


def test_a_killed_peer_is_gone_within_ten_seconds_and_alive_when_back(lan):
    one = lan("one")
    two = lan("two", peers=[one.address])
    peer_state(one, "two", "alive", timeout=10)
    two.kill9()
    killed_at = time.monotonic()
    peer_state(one, "two", "suspect", timeout=10)
    peer_state(one, "two", "gone", timeout=10)
    assert time.monotonic() - killed_at <= 10

    # The status agrees: two is gone, or already forgotten (a peer whose address one never
    # proved is forgotten once gone, on the next tick: docs/PROTOCOL.md, "Trust"), never here.
    status = one.status()
    assert [p["state"] for p in status["peers"] if p["nick"] == "two"] in ([], ["gone"]), status["peers"]

    lan("two", peers=[one.address])
    peer_state(one, "two", "alive", timeout=10)


def test_one_seed_is_enough_to_meet_everyone(lan):
    hub = lan("hub")
    left = lan("left", peers=[hub.address])
    right = lan("right", peers=[hub.address])
    peer_state(left, "right", "alive", timeout=10)
    peer_state(right, "left", "alive", timeout=10)
    status = left.status()
    found = {p["nick"]: p["found_by"] for p in status["peers"]}
    # left never heard of right from a flag: it learned of it from hub's list, or right (which
    # learned of left that way) contacted it first.
    assert found["hub"] == "seed" and found["right"] in ("gossip", "inbound")


def test_send_and_status_and_history_through_the_tools(lan, binary, tmp_path):
    one = lan("one")
    two = lan("two", peers=[one.address])
    two.wait_for(lambda o: o["type"] == "join" and o["nick"] == "one")

    sent = subprocess.run([binary, "send", "--room", "superbowl", "--data-dir", str(one.data_dir), "from", "the", "shell"],
                          capture_output=True, text=True, timeout=10)
    assert sent.returncode == 0, sent.stderr
    two.message("from the shell")

    refused = subprocess.run([binary, "send", "--room", "worldcup", "--data-dir", str(one.data_dir), "hi"],
                             capture_output=True, text=True, timeout=10)
    assert refused.returncode != 0
    assert "worldcup" in refused.stderr

    table = subprocess.run([binary, "status", "--data-dir", str(one.data_dir)], capture_output=True, text=True,
                           timeout=10)
    assert table.returncode == 0, table.stderr
    assert "two" in table.stdout and "superbowl" in table.stdout

    two.say("for the record")
    one.message("for the record")
    assert one.quit() == 0

    # history reads the store while the node is down, ordered by game time.
    history = subprocess.run([binary, "history", "--room", "superbowl", "--json", "--data-dir", str(one.data_dir)],
                             capture_output=True, text=True, timeout=10)
    assert history.returncode == 0, history.stderr
    texts = [json.loads(line)["text"] for line in history.stdout.splitlines()]
    assert texts == ["from the shell", "for the record"]
    # Without --room: the room the node was last in.
    current = subprocess.run([binary, "history", "--json", "--data-dir", str(one.data_dir)], capture_output=True,
                             text=True, timeout=10)
    assert current.returncode == 0, current.stderr
    assert [json.loads(line)["text"] for line in current.stdout.splitlines()] == texts

    # status with nothing running says so plainly.
    down = subprocess.run([binary, "status", "--data-dir", str(one.data_dir)], capture_output=True, text=True,
                          timeout=10)
    assert down.returncode == 1
    assert "no Huddle node is running" in down.stderr


def test_bad_console_input_is_answered_and_changes_nothing(lan):
    one = lan("one")
    one.say("/dance")
    error = one.wait_for(lambda o: o["type"] == "error")
    assert "unknown command" in error["message"]
    one.say("/delay sideways")
    one.wait_for(lambda o: o["type"] == "error" and "/delay" in o["message"])
    # (A line over the 4,096 bytes of a message is not bad input: it goes as numbered parts,
    # test_piping.py.)
    one.say("y" * 200_000)  # over what the console reads as one line at all
    one.wait_for(lambda o: o["type"] == "error" and "ignored a line" in o["message"])
    room = next(r for r in one.status()["rooms"] if r["name"] == "superbowl")
    assert room["event_count"] == 1  # only the join


def members(node, room="superbowl"):
    """The nicks in `room` as `node`'s status lists them, or None if it is not in the room."""
    found = [r for r in node.status()["rooms"] if r["name"] == room]
    return sorted(m["nick"] for m in found[0]["members"]) if found else None


def test_leave_is_seen_by_the_peers_and_takes_the_member_out_of_the_room(lan):
    alice = lan("alice")
    bob = lan("bob", peers=[alice.address])
    carol = lan("carol", peers=[alice.address])
    for node in (alice, bob, carol):
        for other in {"alice", "bob", "carol"} - {node.name}:
            node.wait_for(lambda o, n=other: o["type"] == "join" and o["nick"] == n, what=f"{other} joining")

    bob.say("/leave")
    bob.wait_for(lambda o: o["type"] == "info" and o["message"] == "left superbowl", what="bob told he left")
    for node in (alice, carol):
        left = node.wait_for(lambda o: o["type"] == "leave" and o["nick"] == "bob", what="bob left")
        assert left["room"] == "superbowl" and left["id"] == bob.id
        assert members(node) == ["alice", "carol"]
    assert members(bob) is None

    # The room goes on without him: what is said there now is not his to see.
    alice.say("after bob left")
    carol.message("after bob left")
    # bob has heard from alice and carol since: had either pushed him the line, he had it.
    heard_since(bob, [alice, carol], time.monotonic())
    assert "after bob left" not in bob.shown_texts()

    # Joining again brings him back, and the room's history with him.
    bob.say("/join superbowl")
    for node in (alice, carol):
        node.wait_for(lambda o: o["type"] == "join" and o["nick"] == "bob", what="bob back")
        assert members(node) == ["alice", "bob", "carol"]
    bob.message("after bob left")


def test_status_by_name_finds_a_node_started_with_its_own_data_dir(lan, binary, tmp_path, monkeypatch):
    # The two-homes try-out and any --data-dir start: `huddle status --name bob` finds bob's node
    # through the link it keeps in the user's runtime dir, and says plainly when it has stopped.
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "nowhere"))
    bob = lan("bob", data_name="somewhere-else")
    alice = lan("alice", peers=[bob.address])
    alice.say("hello bob")
    bob.message("hello bob")

    def status() -> subprocess.CompletedProcess:
        return subprocess.run([binary, "status", "--name", "bob"], capture_output=True, text=True, timeout=10)

    found = status()
    assert found.returncode == 0, found.stderr
    assert "alice" in found.stdout and "superbowl" in found.stdout
    assert bob.quit() == 0
    assert not (runtime / "huddle" / "bob").exists()
    gone = status()
    assert gone.returncode == 1 and "no Huddle node is running" in gone.stderr
