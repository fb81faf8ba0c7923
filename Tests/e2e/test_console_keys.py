"""Keys a shell user expects, in a real terminal: Ctrl-C clears a half-typed line instead of
quitting and losing it."""

from test_console import assert_cooked, pane  # noqa: F401  (the tmux pane fixture)


def test_ctrl_c_on_a_half_typed_line_clears_it_and_on_an_empty_line_quits(pane):  # noqa: F811
    alice = pane()
    alice.type("what a ca")
    alice.wait_for(lambda rows: rows[-1] == "superbowl> what a ca", what="the half-typed line")
    alice.press("C-c")
    alice.wait_for(lambda rows: rows[-1] == "superbowl>", what="the line cleared")
    assert not alice.exited()
    alice.press("C-y")
    alice.wait_for(lambda rows: rows[-1] == "superbowl> what a ca", what="the line yanked back")
    alice.press("C-u")
    alice.press("C-c")
    assert_cooked(alice)
    assert alice.exit_status() == 0
