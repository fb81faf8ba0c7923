"""Late joiners, crashes and restarts: nothing lost, nothing shown twice."""

import socket
import time

from huddletest.node import holds_all_of


def texts(node):
    return node.shown_texts()


def test_a_late_joiner_receives_the_whole_history_in_causal_order(lan):
    """two and one take turns, each answering the line before (its event's context names it):
    a late joiner, whatever order its pull brings the two origins' events in, shows the whole
    conversation once, each line after the one it answers."""
    one = lan("one")
    two = lan("two", peers=[one.address])
    two.wait_for(lambda o: o["type"] == "join" and o["nick"] == "one")
    conversation = [f"early {i}" for i in range(6)]
    for i, text in enumerate(conversation):
        speaker, listener = (one, two) if i % 2 else (two, one)
        speaker.say(text)
        listener.message(text)

    late = lan("late", peers=[two.address])
    late.message(conversation[-1])
    holds_all_of(late, [one, two])  # everything either holds, dealt with: nothing more to come
    assert texts(late) == conversation


def test_kill_9_and_restart_loses_and_duplicates_nothing(lan, binary):
    one = lan("one")
    two = lan("two", peers=[one.address])
    two.wait_for(lambda o: o["type"] == "join" and o["nick"] == "one")
    one.say("before the crash")
    two.message("before the crash")
    two_id = two.id
    two.kill9()

    one.say("while two was down")
    one.message("while two was down")

    again = lan("two", room="superbowl", peers=[one.address])
    assert again.id == two_id
    again.message("while two was down", timeout=20)
    again.say("back again")
    # The restarted node kept its seq numbers: one accepts its new message (a reused seq would
    # be dropped as a duplicate).
    one.message("back again")
    holds_all_of(again, [one])  # all one holds, dealt with: nothing more to come
    assert texts(again).count("before the crash") == 0
    assert texts(again).count("while two was down") == 1
    assert texts(again).count("back again") == 1


def test_a_node_stopped_for_a_while_catches_up(lan):
    one = lan("one")
    two = lan("two", peers=[one.address])
    two.wait_for(lambda o: o["type"] == "join" and o["nick"] == "one")
    assert two.quit() == 0
    for i in range(3):
        one.say(f"missed {i}")
        one.message(f"missed {i}")  # written (own lines show at once) before two comes back
    back = lan("two", peers=[one.address])
    for i in range(3):
        back.message(f"missed {i}", timeout=20)


def test_garbage_is_counted_and_ignored(lan):
    one = lan("one")
    two = lan("two", peers=[one.address])
    two.wait_for(lambda o: o["type"] == "join" and o["nick"] == "one")
    before = one.status()["counters"]["rejected"]

    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    payloads = [b"", b"hello", b"HD\x01\x01" + b"\xff" * 40, b"HD\x09\x01", bytes(range(256)) * 8]
    for payload in payloads:
        udp.sendto(payload, ("127.0.0.1", one.port))
    udp.close()
    with socket.create_connection(("127.0.0.1", one.port), timeout=5) as tcp:
        tcp.sendall(b"\xff\xff\xff\xff garbage")
        tcp.settimeout(5)
        assert tcp.recv(100) == b""  # the node hangs up

    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if one.status()["counters"]["rejected"] >= before + len(payloads) + 1:
            break
        time.sleep(0.2)
    assert one.status()["counters"]["rejected"] >= before + len(payloads) + 1

    # Still working.
    two.say("still here?")
    one.message("still here?")


def test_silent_connections_are_capped_and_the_node_keeps_chatting(lan):
    one = lan("one")
    two = lan("two", peers=[one.address])
    two.wait_for(lambda o: o["type"] == "join" and o["nick"] == "one")
    before = one.status()["counters"]["rejected"]
    idle = [socket.create_connection(("127.0.0.1", one.port), timeout=5) for _ in range(40)]
    try:
        deadline = time.monotonic() + 5
        while one.status()["counters"]["rejected"] < before + 8 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert one.status()["counters"]["rejected"] >= before + 8  # 40 silent, 32 allowed
        two.say("still chatting")
        one.message("still chatting")
    finally:
        for connection in idle:
            connection.close()
