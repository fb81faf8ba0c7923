"""One length limit a person can see, in a real terminal: a long line shows how much of a message
it uses, and a paste longer than one message is offered as numbered messages, never dropped."""

from test_console import bob_and_alice_at_a_terminal, pane  # noqa: F401  (the tmux pane fixture)


def words(count: int) -> str:
    return " ".join(f"w{10_000 + n}" for n in range(count))


def test_a_long_line_shows_its_length_in_the_status_line(lan, pane):  # noqa: F811
    _, alice = bob_and_alice_at_a_terminal(lan, pane)
    alice.type("a" * 3_000)
    alice.wait_for(lambda rows: rows[-1].endswith("a" * 20), what="the typed line")
    assert "/4,096" not in alice.visible()[-2], "no count far from the limit"
    alice.type("b" * 900)
    rows = alice.wait_for(lambda rows: rows[-2].endswith("· 3,900/4,096"), what="the count in the status line")
    assert "superbowl · 1 peer" in rows[-2], rows
    alice.press("BSpace")
    alice.wait_for(lambda rows: rows[-2].endswith("· 3,899/4,096"), what="the count following Backspace")


def test_a_10000_character_paste_is_offered_as_numbered_messages_and_sent_on_enter(lan, pane):  # noqa: F811
    bob, alice = bob_and_alice_at_a_terminal(lan, pane)
    text = words(1_429)[:10_000]  # 10,000 characters, a space every 7
    assert len(text) == 10_000
    alice.paste(text)
    rows = alice.wait_for_text("Enter sends it as 3 messages")
    assert rows[-1] == "send it as 3 messages? Enter = yes, Esc = no", rows
    alice.press("Enter")
    parts = [bob.wait_for(lambda o, n=n: o["type"] == "message" and o["text"].startswith(f"({n}/3) "),
                          what=f"part {n}")["text"] for n in (1, 2, 3)]
    # Nothing went before Enter: bob shows alice's messages in the order she sent them, and the
    # three parts are all he has.
    assert [o["text"] for o in bob.outputs if o["type"] == "message"] == parts, "nothing goes before Enter"
    assert all(len(part.encode()) <= 4096 for part in parts)
    assert " ".join(part[len("(1/3) "):] for part in parts) == text, "the paste whole, cut between words"
    alice.wait_for(lambda rows: rows[-1] == "superbowl>", what="an empty line after sending")


def test_escape_puts_a_long_paste_away_and_a_giant_one_is_refused_in_words(lan, pane):  # noqa: F811
    bob, alice = bob_and_alice_at_a_terminal(lan, pane)
    alice.type("half typed")
    alice.paste(words(1_000))
    alice.wait_for(lambda rows: rows[-1].startswith("send it as 2 messages?"), what="the offer")
    alice.press("Escape")
    alice.wait_for(lambda rows: rows[-1] == "superbowl> half typed", what="the line as it was")
    alice.wait_for_text("the paste was put away; nothing was sent")
    alice.paste("x" * 70_000)
    alice.wait_for_text("that paste was 70,000 bytes; the console takes at most 65,536 at once: nothing was pasted",
                        timeout=30)
    assert alice.visible()[-1] == "superbowl> half typed"
    # Sent now, the line as it was is the first thing bob shows of alice's: neither paste went
    # (he shows her messages in the order she sent them).
    alice.press("Enter")
    bob.message("half typed")
    assert [o["text"] for o in bob.outputs if o["type"] == "message"] == ["half typed"]


def test_a_pasted_list_stays_a_list(lan, pane):  # noqa: F811
    # 12 lines copied from somewhere: one message, its line breaks kept, shown one under the other
    # (indented under the first line's text) rather than as one wall of text.
    bob, alice = bob_and_alice_at_a_terminal(lan, pane)
    items = [f"{n}. player {n} to watch" for n in range(1, 13)]
    alice.paste("\n".join(items) + "\n")
    alice.wait_for(lambda rows: rows[-1].endswith("11. player 11 to watch↵12. player 12 to watch↵"),
                   what="the list on the input row, its line breaks as ↵")
    alice.press("Enter")
    bob.message("\n".join(items))
    rows = alice.wait_for(lambda rows: any(row.endswith("12. player 12 to watch") for row in rows),
                          what="the list on alice's screen")
    first = next(i for i, row in enumerate(rows) if row.endswith("alice: 1. player 1 to watch"))
    indent = rows[first].index("1. player 1")
    for n, row in enumerate(rows[first + 1:first + 12], start=2):
        assert row == " " * indent + f"{n}. player {n} to watch", rows


def test_a_pasted_list_that_fits_the_line_but_not_one_message_goes_in_parts(lan, pane):  # noqa: F811
    # 4,050 bytes with 50 line breaks fit the console's line (a break is one byte there) but not
    # one message (a break travels as U+2028, three bytes): sent as numbered parts, not refused.
    bob, alice = bob_and_alice_at_a_terminal(lan, pane)
    rows = [f"{n:02d} " + "x" * 77 for n in range(50)]  # 50 × 80 bytes + 49 breaks + the last
    text = "\n".join(rows)
    assert 4_000 < len(text.encode()) <= 4_096 < len(text.replace("\n", "\u2028").encode())
    alice.paste(text)
    alice.wait_for(lambda r: r[-1].endswith("x" * 10), what="the paste on the input row")
    alice.press("Enter")
    first = bob.wait_for(lambda o: o["type"] == "message" and o["text"].startswith("(1/2) "), what="part 1")
    second = bob.wait_for(lambda o: o["type"] == "message" and o["text"].startswith("(2/2) "), what="part 2")
    assert (first["text"][6:] + "\n" + second["text"][6:]).split("\n") == rows
