"""Tab in a real terminal: nicks complete after /msg, and the choices are listed once."""

from test_console import pane  # noqa: F401  (the tmux pane fixture)


def test_tab_completes_nicks_after_msg_and_lists_the_choices_once(lan, pane):  # noqa: F811
    carol = lan("carol")
    cara = lan("cara", peers=[carol.address])
    alice = pane("--peer", carol.address)
    for nick in ("carol", "cara"):
        alice.wait_for_text(f"{nick} joined superbowl")
    alice.type("/msg ca")
    alice.press("Tab")
    alice.wait_for(lambda rows: rows[-1] == "superbowl> /msg car", what="the shared start")
    alice.press("Tab")
    alice.press("Tab")
    rows = alice.wait_for(lambda rows: any(row.split() == ["cara", "carol"] for row in rows), what="the list")
    alice.press("Tab")
    alice.type("o")
    alice.press("Tab")
    rows = alice.wait_for(lambda rows: rows[-1] == "superbowl> /msg carol", what="carol completed")
    assert [row.split() for row in rows].count(["cara", "carol"]) == 1, rows
    assert cara.process.poll() is None
