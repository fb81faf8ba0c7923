"""The console's `/rooms` and `/ignore LABEL`, typed into real nodes on loopback (--json and a
tmux pane): what the node says about rooms on the network, and who is asked to mark a moment."""

from __future__ import annotations

import time

from test_console import pane  # noqa: F401  (the tmux pane fixture)

from huddletest.polling import poll

DOUBLE_PRESS_S = 0.4  # LineEditor.doublePressWindow


def rooms_answer(node) -> str:
    """`/rooms` typed into `node`, and its answer."""
    node.say("/rooms")
    return node.wait_for(lambda o: o["type"] == "info" and o["message"].startswith("your rooms:"),
                         what="/rooms answered")["message"]


def rooms_become(node, expected: str, timeout: float = 15) -> None:
    """Asks `/rooms` until the answer is `expected` (gossip takes a round or two)."""
    answers: list[str] = []

    def check() -> bool:
        answers.append(rooms_answer(node))
        return answers[-1] == expected

    try:
        poll(check, timeout=timeout, interval=0.3, what=f"/rooms on {node.name}")
    except AssertionError as error:
        raise AssertionError(f"{node.name}'s /rooms never said {expected!r}; last: {answers[-1:]!r}") from error


def test_rooms_lists_your_rooms_and_who_is_in_the_rooms_seen_on_the_network(lan):
    alice = lan("alice")
    bob = lan("bob", room="worldcup", peers=[alice.address])
    lan("carol", peers=[alice.address])

    rooms_become(alice, "your rooms: superbowl (current)\n  superbowl: carol\n  worldcup: bob")
    # bob knows carol only through alice's gossip, and carol's room with her.
    rooms_become(bob, "your rooms: worldcup (current)\n  superbowl: alice, carol")

    bob.say("/join superbowl")
    bob.wait_for(lambda o: o["type"] == "join" and o["room"] == "superbowl" and o["nick"] == "bob", what="bob's join")
    rooms_become(bob, "your rooms: worldcup, superbowl (current)\n  superbowl: alice, carol")
    rooms_become(alice, "your rooms: superbowl (current)\n  superbowl: bob, carol\n  worldcup: bob")

    bob.quit()
    alice.wait_for(lambda o: o["type"] == "peer" and o["nick"] == "bob" and o["state"] == "gone", what="bob gone")
    # A node that said goodbye is in no room any more, and worldcup had nobody else.
    assert rooms_answer(alice) == "your rooms: superbowl (current)\n  superbowl: carol"


def test_rooms_at_the_console(lan, pane):  # noqa: F811
    bob = lan("bob", room="worldcup")
    alice = pane("--peer", bob.address)
    bob.wait_for(lambda o: o["type"] == "peer" and o["nick"] == "alice" and o["state"] == "alive", what="alice alive")
    rooms_become(bob, "your rooms: worldcup (current)\n  superbowl: alice")

    def asked() -> list[str] | None:
        alice.type("/rooms")
        alice.press("Enter")
        rows = alice.wait_for(lambda rows: rows[-1] == "superbowl>" and any("your rooms:" in row for row in rows),
                              what="/rooms answered")
        last = max(i for i, row in enumerate(rows) if "your rooms:" in row)
        return rows[last:] if "worldcup: bob" in "\n".join(rows[last:]) else None

    answer = poll(asked, timeout=15, interval=0.3, what="/rooms listing worldcup at alice's console")
    assert answer[0].endswith("your rooms: superbowl (current)"), answer
    assert answer[1].strip() == "worldcup: bob", answer
    # Then the status line (peers in alice's room: bob is in another) and the prompt.
    assert answer[-2].startswith(" superbowl · 0 peers"), answer


def marked(node, nick: str) -> str:
    """The label of the next mark by `nick` that `node` shows."""
    return node.wait_for(lambda o: o["type"] == "mark" and o["nick"] == nick, what=f"{nick}'s mark")["label"]


def calibrations(node, label: str) -> list[dict]:
    return [o for o in list(node.outputs) if o["type"] == "calibration" and o["label"] == label]


def test_ignore_stops_the_prompt_to_mark_only_for_the_node_that_ignored(lan):
    bob = lan("bob")
    alice = lan("alice", peers=[bob.address])
    carol = lan("carol", peers=[bob.address])
    for node in (alice, carol):
        bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == node.name, what=f"{node.name}'s join")

    alice.say("/ignore Kickoff")
    answer = alice.wait_for(lambda o: o["type"] == "info", what="/ignore answered")["message"]
    assert answer == 'you will not be asked to mark "kickoff" in superbowl', answer  # labels match any case

    bob.say("/event kickoff")
    bob.say("/event first down")
    # carol, who did not ignore it, is asked to mark both, kickoff first.
    carol.wait_for(lambda o: o["type"] == "calibration" and o["label"] == "first down", what="first down proposed")
    assert [o["label"] for o in carol.outputs if o["type"] == "calibration"] == ["kickoff", "first down"]
    # alice is asked about first down, which bob proposed after kickoff (his events reach her in
    # order): by then kickoff had reached her too, and she was not asked.
    alice.wait_for(lambda o: o["type"] == "calibration" and o["label"] == "first down", what="first down proposed")
    assert calibrations(alice, "kickoff") == [], calibrations(alice, "kickoff")

    # `/now` marks what the node offers: the oldest open moment. kickoff for carol; alice is not
    # offered kickoff at all, so hers is first down.
    carol.say("/now")
    assert marked(carol, "carol") == "kickoff"
    alice.say("/now")
    assert marked(alice, "alice") == "first down"
    # Ignoring is not refusing: alice can still mark kickoff by name, and it counts.
    alice.say("/now kickoff")
    assert marked(alice, "alice") == "kickoff"
    bob.wait_for(lambda o: o["type"] == "mark" and o["nick"] == "alice" and o["label"] == "kickoff", what="it on bob")


def test_ignore_at_the_console_keeps_the_offer_off_the_prompt(lan, pane):  # noqa: F811
    bob = lan("bob")
    alice = pane("--peer", bob.address)
    dave = pane("--peer", bob.address, name="dave")
    for name in ("alice", "dave"):
        bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == name, what=f"{name}'s join")

    alice.type("/ignore kickoff")
    alice.press("Enter")
    ignore_sent = time.monotonic()
    alice.wait_for_text('you will not be asked to mark "kickoff" in superbowl')

    bob.say("/event kickoff")
    bob.say("/event first down")
    # dave did not ignore it: the prompt offers kickoff, the oldest, with one more after it.
    dave.wait_for(lambda rows: rows[-1] == "superbowl [Enter = kickoff +1 more]>", what="dave offered kickoff")
    # alice's prompt offers first down, alone: kickoff reached her before it, and is not offered.
    rows = alice.wait_for(lambda rows: rows[-1] == "superbowl [Enter = first down]>", what="alice offered first down")
    assert not any('"kickoff"' in row and "proposes" in row for row in rows), rows
    assert any('bob proposes "first down"' in row for row in rows), rows

    # Enter on an empty line marks what is offered: first down for alice, kickoff for dave.
    # An Enter within 0.4 s of sending a line is a double press, not a mark (LineEditor): alice's
    # comes at least that long after her /ignore, as a person's would.
    time.sleep(max(0.0, ignore_sent + DOUBLE_PRESS_S + 0.1 - time.monotonic()))
    alice.press("Enter")
    assert marked(bob, "alice") == "first down"
    dave.press("Enter")
    assert marked(bob, "dave") == "kickoff"
    alice.wait_for(lambda rows: rows[-1] == "superbowl>", what="nothing left on offer for alice")
    dave.wait_for(lambda rows: rows[-1] == "superbowl [Enter = first down]>", what="first down next for dave")
