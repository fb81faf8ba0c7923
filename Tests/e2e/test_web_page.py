"""The phone's page (docs/WEB.md) in a real browser against real nodes on loopback: headless
Chromium in a phone's viewport (huddletest.browser) opens the page a `huddle run --web` node
serves, pairs the way a person does (typing the short code, or opening the QR code's address),
and is then used as its viewer would: chat with a console node both ways, a held message shown
on the phone when the node's own console shows it (held to 50 ms: marked realtime), a tap on
Now, Pause and Resume, the page closed and opened again, and the connection dropped and back.
Each test checks what the viewer would notice, on the page and on the nodes' `--json` lines.
(One test speaks the protocol from huddletest.webclient instead: a label-less `now`, which the
page no longer sends.)

One Chromium serves the module; each test starts its own nodes, so its page is another origin
(another port) with its own localStorage: a fresh phone to pair. Screenshots of the main screens
go to Tests/e2e/screenshots (huddletest.browser.screenshot)."""

from __future__ import annotations

import re
import subprocess
import time

import pytest

from huddletest.browser import missing, phone, require_browser, screenshot
from huddletest.node import Node, alive_to_each_other, calibrate, handled
from huddletest.polling import poll
from huddletest.webclient import PairingRefused, Phone

# One browser for the module's tests (under pytest-xdist, one per worker that runs any of them;
# `--dist loadgroup` keeps them on one).
pytestmark = pytest.mark.xdist_group("browser")

WEB = ["--web", "--web-port", "0"]


# ---------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def browser():
    """One phone for the module; None if this machine has no browser (then `driver` fails or
    skips each test by name)."""
    if missing():
        yield None
        return
    with phone() as driver:
        yield driver


@pytest.fixture
def driver(browser):
    require_browser()
    yield browser
    # The page of a node that is about to stop would keep reconnecting to it: put it away.
    try:
        browser.get("about:blank")
    except Exception:
        pass


class WebNode:
    """A node serving the page: the node, and the addresses its `web` line gave (on 127.0.0.1)."""

    def __init__(self, node: Node, web: dict):
        self.node = node
        self.web = web
        port = web["url"].rstrip("/").rsplit(":", 1)[1]
        self.url = f"http://127.0.0.1:{port}/"
        self.pair_url = self.url + "#" + web["pair_url"].split("#", 1)[1]
        self.code = web["code"]


def start_web_node(lan, name: str = "alice", **kwargs) -> WebNode:
    node = lan(name, extra=WEB, **kwargs)
    web = node.wait_for(lambda o: o["type"] == "web", timeout=15, what="the web line")
    assert web["url"].startswith("http://") and web["pair_url"].startswith(web["url"] + "#pair="), web
    return WebNode(node, web)


def alice_and_bob(lan) -> tuple[WebNode, Node]:
    """alice serves the page; bob is a console node in the same room; each sees the other alive."""
    alice = start_web_node(lan, "alice")
    bob = lan("bob", peers=[alice.node.address])
    alive_to_each_other(alice.node, bob)
    return alice, bob


# ---------------------------------------------------------------------------- the page


def state(driver) -> dict:
    """The page's test hook: {connected, paired, lastSeq, lines}."""
    return driver.execute_script("return window.huddlePage ? window.huddlePage.state() : null") or {}


def shown(driver, element_id: str) -> bool:
    return bool(driver.execute_script(
        "const e = document.getElementById(arguments[0]);"
        "return !!e && !e.hidden && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';",
        element_id))


def text_of(driver, element_id: str) -> str:
    return driver.execute_script("const e = document.getElementById(arguments[0]); return e ? e.textContent : '';",
                                 element_id)


def wait_page(driver, check, what: str, timeout: float = 15):
    return poll(lambda: check(driver), timeout=timeout, interval=0.05, what=f"the page: {what}")


def messages(driver) -> list[dict]:
    """The conversation's message bubbles, in order: nick, text, own (drawn as the viewer's)."""
    return driver.execute_script("""
        return Array.from(document.querySelectorAll('#log .msg')).map(function (m) {
          const nick = m.querySelector('.msg-nick');
          const text = m.querySelector('.msg-text');
          return {nick: nick ? nick.textContent : null, text: text ? text.textContent : '',
                  own: m.classList.contains('is-own')};
        });""")


def texts(driver) -> list[str]:
    return [m["text"] for m in messages(driver)]


def connected_chat(driver) -> bool:
    return state(driver).get("connected") and shown(driver, "chat-screen") and not shown(driver, "pair-screen")


def tap(driver, element) -> None:
    """A finger's tap on `element`: touch down, a moment, up (what a phone sends: pointerdown of
    type touch, then pointerup and click)."""
    from selenium.webdriver.common.actions import interaction
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    from selenium.webdriver.common.actions.pointer_input import PointerInput

    finger = PointerInput(interaction.POINTER_TOUCH, "finger")
    actions = ActionBuilder(driver, mouse=finger, duration=0)
    actions.pointer_action.move_to(element).pointer_down().pause(0.05).pointer_up()
    actions.perform()


def by_id(driver, element_id: str):
    from selenium.webdriver.common.by import By
    return driver.find_element(By.ID, element_id)


def pair_with_qr(driver, alice: WebNode) -> None:
    """Opens the QR code's address, as a phone's camera would, and waits for the room."""
    driver.get(alice.pair_url)
    wait_page(driver, connected_chat, "paired and connected after opening the QR code's address")
    alice.node.wait_for(lambda o: o["type"] == "info" and "is paired" in o["message"], what="the pairing's notice")


def send_from_page(driver, text: str) -> None:
    """Types `text` into the compose field and taps Send."""
    field = by_id(driver, "compose-text")
    tap(driver, field)
    field.send_keys(text)
    tap(driver, by_id(driver, "send"))


def watch_log(driver) -> None:
    """From now on the page records, for every message bubble added to the conversation, its text
    and Date.now() when it was added (the browser's clock is the machine's, as the nodes' are)."""
    driver.execute_script("""
        window.__appeared = [];
        new MutationObserver(function (mutations) {
          const at = Date.now();
          for (const m of mutations) for (const n of m.addedNodes) {
            if (n.nodeType !== 1) continue;
            const bubbles = n.matches('.msg') ? [n] : Array.from(n.querySelectorAll('.msg'));
            for (const b of bubbles) {
              const t = b.querySelector('.msg-text');
              window.__appeared.push({text: t ? t.textContent : '', at: at});
            }
          }
        }).observe(document.getElementById('log'), {childList: true, subtree: true});""")


def appeared(driver, text: str) -> list[int]:
    """When each bubble of `text` was added since watch_log (Date.now() ms)."""
    return [a["at"] for a in driver.execute_script("return window.__appeared || []") if a["text"] == text]


def wall_ms() -> float:
    return time.time() * 1000


# ---------------------------------------------------------------------------- pairing


def test_pairing_by_typing_the_short_code_shows_the_room(lan, driver):
    alice, bob = alice_and_bob(lan)
    driver.get(alice.url)
    wait_page(driver, lambda d: shown(d, "pair-screen") and not shown(d, "chat-screen"), "the pairing screen")
    assert state(driver)["paired"] is False

    code_field = by_id(driver, "pair-code")
    pair_button = by_id(driver, "pair-button")
    assert code_field.is_displayed() and pair_button.is_displayed()

    # A wrong code first: the page says so and stays where it was.
    wrong = "ZZZZ-ZZZZ" if alice.code != "ZZZZ-ZZZZ" else "YYYY-YYYY"
    tap(driver, code_field)
    code_field.send_keys(wrong)
    tap(driver, pair_button)
    wait_page(driver, lambda d: "Wrong or expired code" in text_of(d, "pair-status"), "the wrong code refused")
    assert shown(driver, "pair-screen") and not shown(driver, "chat-screen")
    assert state(driver)["paired"] is False
    wait_page(driver, lambda d: by_id(d, "pair-code").is_enabled(), "the code field usable again")

    code_field.clear()
    tap(driver, code_field)
    code_field.send_keys(alice.code)
    # The refusal was about the code tried before: editing the code puts it away.
    assert "Wrong" not in text_of(driver, "pair-status")
    print(f"pairing screen: {screenshot(driver, 'web-pairing-screen')}")
    tap(driver, pair_button)

    wait_page(driver, connected_chat, "paired and connected after typing the code")
    wait_page(driver, lambda d: text_of(d, "room-name") == "superbowl", "the room's name as the title")
    wait_page(driver, lambda d: "1 peer" in text_of(d, "status-line"), "the status line counting bob")
    assert "connected" == text_of(driver, "conn-text")
    notice = alice.node.wait_for(lambda o: o["type"] == "info" and "is paired" in o["message"],
                                 what="the node saying the phone is paired")
    assert "Android" in notice["message"], notice  # the name the page proposed for this phone
    # The node's notice is a line it shows its viewer: the page shows it too.
    wait_page(driver, lambda d: "is paired" in text_of(d, "log"), "the pairing's notice in the conversation")
    # The phone remembers the pairing (a reload or a later visit opens the room without a code).
    stored = driver.execute_script("return localStorage.getItem('huddle.device')")
    assert stored and '"key"' in stored
    assert by_id(driver, "pair-code").get_attribute("value") == ""


def test_pairing_by_opening_the_qr_address_never_types(lan, driver):
    alice, bob = alice_and_bob(lan)
    driver.get(alice.pair_url)
    wait_page(driver, connected_chat, "paired and connected from the QR code's address alone")
    wait_page(driver, lambda d: text_of(d, "room-name") == "superbowl", "the room's name as the title")
    alice.node.wait_for(lambda o: o["type"] == "info" and "is paired" in o["message"], what="the pairing's notice")
    # The secret does not stay in the address bar (nor in the history) once it was used.
    assert "#pair=" not in driver.current_url and "pair=" not in driver.execute_script("return location.href")
    assert by_id(driver, "pair-code").get_attribute("value") == ""
    # The QR's secret is used up: another phone that opens the same address is refused.
    other = Phone(alice.url.removeprefix("http://").rstrip("/"))
    with pytest.raises(PairingRefused):
        other.pair(alice.pair_url.split("#pair=", 1)[1], name="another phone")
    other.close()


# ---------------------------------------------------------------------------- chat


def test_chat_both_ways_with_a_console_node(lan, driver):
    alice, bob = alice_and_bob(lan)
    pair_with_qr(driver, alice)

    send_from_page(driver, "typed on the phone")
    on_bob = bob.message("typed on the phone")
    assert on_bob["nick"] == "alice" and on_bob["from"] == alice.node.id, on_bob  # the phone speaks as its node
    on_alice = alice.node.message("typed on the phone")
    assert on_alice["nick"] == "alice"
    wait_page(driver, lambda d: {"nick": "alice", "text": "typed on the phone", "own": True} in messages(d),
              "the phone's own message, drawn as the viewer's")
    assert by_id(driver, "compose-text").get_attribute("value") == ""

    bob.say("hello from the kitchen")
    alice.node.message("hello from the kitchen")
    wait_page(driver, lambda d: {"nick": "bob", "text": "hello from the kitchen", "own": False} in messages(d),
              "bob's message")
    assert texts(driver).count("typed on the phone") == 1 and texts(driver).count("hello from the kitchen") == 1
    print(f"main screen: {screenshot(driver, 'web-main-screen-messages')}")


def test_a_new_key_under_a_known_nick_is_told_on_the_page_with_what_both_show_as(lan, driver):
    alice, bob = alice_and_bob(lan)
    pair_with_qr(driver, alice)
    mallory = lan("bob", data_name="mallory", peers=[alice.node.address])
    alice.node.wait_for(lambda o: o["type"] == "nick_conflict" and o["id"] == mallory.id)
    said = (f"Careful: a new key is calling itself bob. Its messages show as bob#{mallory.id[:8]}; while both are "
            f"here, the first bob's as bob#{bob.id[:8]}.")
    wait_page(driver, lambda d: said in text_of(d, "log"), "the warning naming what both show as")
    # And the page names them so, as the console does.
    bob.say("from the first bob")
    mallory.say("from the second bob")
    expected = [{"nick": f"bob#{bob.id[:8]}", "text": "from the first bob", "own": False},
                {"nick": f"bob#{mallory.id[:8]}", "text": "from the second bob", "own": False}]
    wait_page(driver, lambda d: all(m in messages(d) for m in expected), "each bob's message under its own name")


def test_a_key_calling_itself_by_the_viewers_nick_is_not_drawn_as_the_viewer(lan, driver):
    alice, bob = alice_and_bob(lan)
    pair_with_qr(driver, alice)
    mallory = lan("alice", data_name="mallory", peers=[bob.address])
    alice.node.wait_for(lambda o: o["type"] == "nick_conflict" and o["id"] == mallory.id)
    mallory.say("it is me, alice")
    alice.node.message("it is me, alice")
    wait_page(driver, lambda d: {"nick": f"alice#{mallory.id[:8]}", "text": "it is me, alice", "own": False}
              in messages(d), "mallory's line drawn as someone else's, under her own name")
    send_from_page(driver, "the real one")
    wait_page(driver, lambda d: any(m["text"] == "the real one" and m["own"] for m in messages(d)),
              "the viewer's own line still drawn as hers")


@pytest.mark.realtime  # held to 50 ms against the node's own console
def test_a_held_message_shows_on_the_page_when_the_console_shows_it(lan, driver):
    alice, bob = alice_and_bob(lan)
    pair_with_qr(driver, alice)
    set_up = calibrate(bob, alice.node, 3)  # alice's stream (the phone's) about 3 s behind bob's
    handled(alice.node)
    watch_log(driver)

    bob.say("what a catch")
    written = bob.message("what a catch")  # bob shows his own words at once
    on_alice = alice.node.message("what a catch", timeout=20)
    wait_page(driver, lambda d: appeared(d, "what a catch"), "the held message")
    page_at = appeared(driver, "what a catch")
    assert len(page_at) == 1, f"shown {len(page_at)} times"
    delta = page_at[0] - on_alice["shown_at"]
    held = page_at[0] - written["sent_at"]
    print(f"offset set up {set_up[0]:.0f}..{set_up[1]:.0f} ms; alice held it {on_alice['held_ms']} ms; "
          f"the page showed it {delta:+.0f} ms from the console, {held:.0f} ms after bob wrote it")
    assert on_alice["held_ms"] >= 2500, on_alice
    # Not on the page before the node showed it (the observer was watching since before bob wrote).
    assert held >= 2500, f"the page showed it {held:.0f} ms after bob wrote it"
    assert abs(delta) <= 50, f"the page showed it {delta:+.0f} ms from the console's shown_at"


# ---------------------------------------------------------------------------- Now, Pause


def test_a_tap_on_now_marks_the_moment_at_the_tap(lan, driver):
    alice, bob = alice_and_bob(lan)
    pair_with_qr(driver, alice)
    assert not shown(driver, "now")

    bob.say("/event kickoff")
    alice.node.wait_for(lambda o: o["type"] == "calibration" and o["label"] == "kickoff", what="bob's proposal")
    wait_page(driver, lambda d: shown(d, "now"), "the Now button")
    assert text_of(driver, "now-label") == "kickoff"
    wait_page(driver, lambda d: "bob proposes" in text_of(d, "log"), "bob's proposal in the conversation")
    print(f"Now offered: {screenshot(driver, 'web-now-offered')}")

    # When the page's pointerdown fired (the browser's Date.now(): the machine's clock).
    driver.execute_script("""
        window.__nowDown = null;
        document.getElementById('now').addEventListener('pointerdown', function (e) {
          if (window.__nowDown === null) window.__nowDown = {at: Date.now(), type: e.pointerType};
        }, true);""")
    button = by_id(driver, "now")
    before = wall_ms()
    tap(driver, button)
    after = wall_ms()

    mark = alice.node.wait_for(lambda o: o["type"] == "mark" and o["id"] == alice.node.id, what="alice's own mark")
    assert mark["label"] == "kickoff" and mark["nick"] == "alice", mark
    down = driver.execute_script("return window.__nowDown")
    print(f"tap window {after - before:.0f} ms; pointerdown ({down and down['type']}) {down and down['at'] - before:+.0f} ms "
          f"into it; the mark's at {mark['at'] - before:+.0f} ms into it"
          + (f", {mark['at'] - down['at']:+.0f} ms from the pointerdown" if down else ""))
    # The node takes off the link's measured one-way delay: never later than the tap, never much before.
    assert before - 100 <= mark["at"] <= after, (before, mark["at"], after)
    assert down is not None and down["type"] == "touch"
    # One tap, one mark; bob gets it; the button says so, then goes (nothing left to mark).
    bob.wait_for(lambda o: o["type"] == "mark" and o["id"] == alice.node.id and o["label"] == "kickoff",
                 what="alice's mark on bob")
    wait_page(driver, lambda d: "you marked" in text_of(d, "log"), "the page saying you marked")
    wait_page(driver, lambda d: not shown(d, "now"), "the Now button gone once the moment is marked", timeout=10)
    handled(alice.node)
    own_marks = [o for o in alice.node.outputs if o["type"] == "mark" and o["id"] == alice.node.id]
    assert len(own_marks) == 1, own_marks


def test_a_now_without_a_label_marks_the_moment_on_offer(lan):
    """The protocol's label-less tap (WEB.md: `{"t":"now"}` marks the moment offered), from a
    second phone (huddletest.webclient), since the page now names the moment it shows."""
    alice, bob = alice_and_bob(lan)
    other = Phone(alice.url.removeprefix("http://").rstrip("/"))
    try:
        other.pair(alice.code, name="another phone")
        other.open(since=0)
        bob.say("/event kickoff")
        other.wait_for(lambda m: m["t"] == "view" and (m.get("offer") or {}).get("label") == "kickoff",
                       what="the view offering kickoff")
        other.send({"t": "now"})
        answer = other.line(lambda l: l["type"] == "error" or (l["type"] == "mark" and l["nick"] == "alice"),
                            what="the mark, or an error")
        assert answer["type"] == "mark" and answer["label"] == "kickoff", answer
    finally:
        other.close()


def test_doctor_from_a_phone_answers_the_phone_and_the_control_socket_names_huddle_doctor(lan, binary):
    """/doctor typed on a paired phone is answered there, in a few seconds, with the checks'
    text, and not on the console; `huddle send /doctor` is refused with the command that runs
    the same checks (issue 47)."""
    alice = start_web_node(lan, "alice")
    other = Phone(alice.url.removeprefix("http://").rstrip("/"))
    try:
        other.pair(alice.code, name="phone")
        other.open(since=0)
        other.send({"t": "line", "text": "/doctor"})
        answer = other.line(lambda l: l["type"] == "info" and l["message"].startswith("doctor: "), timeout=20,
                            what="the doctor's answer")
        # A phone's narrow screen gets no columns: one line a check. (This machine's own
        # interfaces run no mDNS daemon for the tests: whatever it says of it.)
        for check in ("mdns", "interfaces", "firewall", "peers"):
            assert re.search(rf"^(ok|unknown|warn|fail) · {check}: ", answer["message"], re.M), answer
        assert not any(o["type"] == "info" and o["message"].startswith("doctor: ") for o in alice.node.outputs)
    finally:
        other.close()
    refused = subprocess.run([binary, "send", "--data-dir", str(alice.node.data_dir), "/doctor"],
                             capture_output=True, text=True, timeout=15)
    assert refused.returncode != 0 and "huddle doctor --name NICK runs the same checks" in refused.stderr, refused


def test_doctor_typed_on_the_page_is_answered_there_as_a_list_that_fits_a_phone(lan, driver):
    """/doctor typed in the page's compose field (issue 47): the page shows the checks as a list,
    each check's words and what to do on lines of their own, with nothing wider than the phone's
    screen; the console shows none of it."""
    alice, bob = alice_and_bob(lan)
    pair_with_qr(driver, alice)
    send_from_page(driver, "/doctor")
    wait_page(driver, lambda d: "doctor: " in text_of(d, "log") and "interfaces" in text_of(d, "log"),
              "the doctor's answer in the conversation", timeout=20)
    log = text_of(driver, "log")
    assert "· mdns:" in log and "· firewall:" in log, log  # the list form: "ok · mdns: …"
    wide = driver.execute_script(
        "return {page: document.documentElement.scrollWidth, screen: window.innerWidth};")
    assert wide["page"] <= wide["screen"], wide
    print(f"the doctor on the page: {screenshot(driver, 'web-doctor-list')}")
    assert not any(o["type"] == "info" and o["message"].startswith("doctor: ") for o in alice.node.outputs)


def test_pause_and_resume_from_the_page(lan, driver):
    alice, bob = alice_and_bob(lan)
    pair_with_qr(driver, alice)
    pause = by_id(driver, "act-pause")
    assert pause.text == "Pause" and pause.get_attribute("aria-pressed") == "false"
    assert "paused" not in text_of(driver, "status-line")

    tap(driver, pause)
    notice = alice.node.wait_for(lambda o: o["type"] == "info" and o.get("kind") == "paused", what="the paused notice")
    assert notice["message"].startswith("paused"), notice
    # The node's view (not only the button's own guess) says paused.
    wait_page(driver, lambda d: "paused" in text_of(d, "status-line"), "the status line saying paused")
    assert by_id(driver, "act-pause").text == "Resume"
    assert by_id(driver, "act-pause").get_attribute("aria-pressed") == "true"
    # In the page's words: the console's key (Ctrl-Q) means nothing on a phone.
    wait_page(driver, lambda d: "Paused: nothing new shows until you tap Resume" in text_of(d, "log"),
              "the paused notice on the page")
    assert "Ctrl-Q" not in text_of(driver, "log")

    tap(driver, by_id(driver, "act-pause"))
    alice.node.wait_for(lambda o: o["type"] == "info" and o.get("kind") == "resumed", what="the resumed notice")
    wait_page(driver, lambda d: "paused" not in text_of(d, "status-line"), "the status line no longer paused")
    assert by_id(driver, "act-pause").text == "Pause"
    assert by_id(driver, "act-pause").get_attribute("aria-pressed") == "false"
    wait_page(driver, lambda d: "resumed after" in text_of(d, "log"), "the resumed notice on the page")


# ---------------------------------------------------------------------------- coming back


def test_reopening_the_page_shows_what_was_missed_without_pairing_again(lan, driver):
    alice, bob = alice_and_bob(lan)
    pair_with_qr(driver, alice)
    bob.say("before you left")
    alice.node.message("before you left")
    wait_page(driver, lambda d: "before you left" in texts(d), "the first message")

    driver.get("about:blank")  # the tab is closed
    bob.say("missed one")
    bob.say("missed two")
    alice.node.message("missed one")
    alice.node.message("missed two")
    handled(alice.node)

    driver.get(alice.url)  # opened again: no code, no QR
    wait_page(driver, lambda d: state(d).get("paired") and shown(d, "chat-screen"), "the room again")
    assert not shown(driver, "pair-screen")
    wait_page(driver, connected_chat, "connected again, without pairing")
    wait_page(driver, lambda d: "missed two" in texts(d), "the missed messages")
    # A new page asks from the start (`since` 0): the conversation as the node showed it, each once.
    on_page = texts(driver)
    assert [t for t in on_page if t in ("before you left", "missed one", "missed two")] == \
        ["before you left", "missed one", "missed two"], on_page
    pairings = [o for o in alice.node.outputs if o["type"] == "info" and "is paired" in o["message"]]
    assert len(pairings) == 1, pairings


# The page's WebSocket, within reach of a test: every socket it makes is kept in window.__sockets,
# and while window.__offline is set a new one cannot be made (as with the Wi-Fi gone).
SOCKETS = """
(function () {
  const Real = window.WebSocket;
  window.__sockets = [];
  window.__offline = false;
  function Tracked(url, protocols) {
    if (window.__offline) throw new Error('offline (test)');
    const ws = protocols === undefined ? new Real(url) : new Real(url, protocols);
    window.__sockets.push(ws);
    return ws;
  }
  Tracked.prototype = Real.prototype;
  for (const k of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) Tracked[k] = Real[k];
  window.WebSocket = Tracked;
})();
"""


def test_a_dropped_connection_catches_up_from_where_it_was(lan, driver):
    alice, bob = alice_and_bob(lan)
    script = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": SOCKETS})
    try:
        pair_with_qr(driver, alice)
        # The pairing's socket, then the session's.
        assert driver.execute_script("return window.__sockets.length") >= 1
        bob.say("before the drop")
        wait_page(driver, lambda d: "before the drop" in texts(d), "the first message")
        seq = state(driver)["lastSeq"]

        # The Wi-Fi goes: the socket closes and no new one can be made.
        driver.execute_script("window.__offline = true; window.__sockets[window.__sockets.length - 1].close();")
        wait_page(driver, lambda d: not state(d).get("connected"), "the page noticing the drop")
        wait_page(driver, lambda d: text_of(d, "conn-text") == "reconnecting\u2026", "the page saying it reconnects")
        bob.say("while away one")
        bob.say("while away two")
        alice.node.message("while away one")
        alice.node.message("while away two")
        handled(alice.node)
        assert "while away one" not in texts(driver)

        # It comes back (the phone's `online` event reconnects at once).
        driver.execute_script("window.__offline = false; window.dispatchEvent(new Event('online'));")
        wait_page(driver, lambda d: state(d).get("connected"), "connected again")
        wait_page(driver, lambda d: "while away two" in texts(d), "the missed messages")
        on_page = texts(driver)
        assert [t for t in on_page if t in ("before the drop", "while away one", "while away two")] == \
            ["before the drop", "while away one", "while away two"], on_page
        assert state(driver)["lastSeq"] > seq
        assert text_of(driver, "conn-text") == "connected"
    finally:
        driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script["identifier"]})


def test_a_private_room_joined_from_the_page_never_shows_its_passphrase(lan, driver):
    """Rooms → a private room's name → its passphrase, typed on the phone in a field that hides
    it: the node joins the room bob is in with that passphrase, bob's words there reach the page
    (marked private), and the passphrase is nowhere: not on the page, not in what the node printed."""
    passphrase = "blue 42 hut hut"
    alice = start_web_node(lan, "alice")
    bob = lan("bob", peers=[alice.node.address], passphrase=passphrase)
    pair_with_qr(driver, alice)

    tap(driver, by_id(driver, "act-rooms"))
    wait_page(driver, lambda d: shown(d, "sheet-rooms"), "the rooms sheet")
    name = by_id(driver, "private-name")
    tap(driver, name)
    name.send_keys("superbowl\n")
    wait_page(driver, lambda d: shown(d, "sheet-pass"), "the passphrase sheet")
    field = by_id(driver, "pass-text")
    assert field.get_attribute("type") == "password"
    tap(driver, field)
    field.send_keys(passphrase + "\n")

    alice.node.wait_for(lambda o: o["type"] == "join" and o["nick"] == "bob" and o["room"] == "superbowl",
                        timeout=30, what="bob in the private room")
    bob.say("only the two of us")
    line = alice.node.message("only the two of us", timeout=30)
    assert line.get("private") is True, line
    wait_page(driver, lambda d: "only the two of us" in text_of(d, "log"), "bob's private words on the page")
    screenshot(driver, "web-private-room")
    handled(alice.node)
    assert passphrase not in driver.page_source
    assert passphrase not in driver.execute_script("return JSON.stringify(localStorage)")
    assert all(passphrase not in line for line in alice.node.raw)


def test_a_page_served_mid_game_starts_with_what_was_shown_and_nothing_held(lan):
    """`/web` typed mid-game: a phone paired then starts with the conversation the node has shown
    (as /history lists it), and not with what is still held back for this viewer's stream (the
    shield: alice is not placed with bob, so his words wait 90 s)."""
    alice = lan("alice", shield=None)
    bob = lan("bob", peers=[alice.address], shield=None)
    alive_to_each_other(alice, bob)
    alice.say("said before the page")
    alice.message("said before the page")
    bob.say("still held for alice")
    bob.message("still held for alice")
    handled(alice)
    assert "still held for alice" not in alice.shown_texts()

    alice.say("/web")
    web = alice.wait_for(lambda o: o["type"] == "web", what="the web line")
    port = web["url"].rstrip("/").rsplit(":", 1)[1]
    phone = Phone(f"127.0.0.1:{port}")
    try:
        phone.pair(web["code"], name="late-phone")
        phone.open(since=0)
        phone.wait_for(lambda m: m["t"] == "view", what="the view")
        texts = [line.get("text") for line in phone.lines if line.get("type") == "message"]
        assert "said before the page" in texts, phone.lines
        assert "still held for alice" not in texts, phone.lines
    finally:
        phone.close()


# ---------------------------------------------------------------------------- the couch, round 3


def test_the_header_with_a_score_fits_a_small_phone_and_the_consoles_answers_stay_there(lan, driver):
    """Issue 43: once a score existed the header became a small box scrolling inside itself (two
    viewers out of sight) and the score was shown twice; console-only text (the /history block,
    /web devices) reached the page."""
    alice = start_web_node(lan, "alice")
    others = [lan(nick, peers=[alice.node.address]) for nick in ("bob", "carol", "dave", "erin")]
    alive_to_each_other(alice.node, *others)
    pair_with_qr(driver, alice)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 375, "height": 812, "deviceScaleFactor": 3, "mobile": True})
    try:
        calibrate(alice.node, others[0], 1)
        alice.node.say("/teams Chiefs Eagles")
        alice.node.say("/score 14-7")
        wait_page(driver, lambda d: text_of(d, "score") == "Chiefs 14\u20137 Eagles", "the score beside the room")
        wait_page(driver, lambda d: d.execute_script("return document.querySelectorAll('#ladder .rung').length") == 5,
                  "a rung for each of the five")
        fit = driver.execute_script("""
            const ladder = document.getElementById('ladder');
            const top = document.querySelector('.top');
            const box = top.getBoundingClientRect();
            const rungs = Array.from(ladder.querySelectorAll('.rung')).map(function (r) {
              const b = r.getBoundingClientRect();
              return {text: r.textContent, left: b.left, right: b.right, top: b.top, bottom: b.bottom};
            });
            const name = document.getElementById('room-name');
            const score = document.getElementById('score');
            return {width: window.innerWidth, ladderScrolls: ladder.scrollHeight > ladder.clientHeight + 1,
                    nameCut: name.scrollWidth > name.clientWidth + 1, scoreCut: score.scrollWidth > score.clientWidth + 1,
                    topScrolls: top.scrollHeight > top.clientHeight + 1, pageScrollsSideways: document.documentElement.scrollWidth > window.innerWidth,
                    headerTop: box.top, headerBottom: box.bottom, rungs: rungs, header: top.textContent};""")
        assert fit["width"] == 375, fit
        assert not fit["ladderScrolls"] and not fit["topScrolls"] and not fit["pageScrollsSideways"], fit
        assert not fit["nameCut"] and not fit["scoreCut"], fit  # "superbowl" and the score whole
        for rung in fit["rungs"]:
            assert 0 <= rung["left"] and rung["right"] <= 375, rung
            assert fit["headerTop"] <= rung["top"] and rung["bottom"] <= fit["headerBottom"], rung
        assert fit["header"].count("14\u20137") == 1, fit["header"]  # once: in its pill, not in the status line too
        screenshot(driver, "web-header-with-a-score-375")

        # What alice asks at her console is answered there, not on her phone.
        alice.node.say("/history 5")
        alice.node.say("/web devices")
        handled(alice.node)
        alice.node.say("the end of it")
        wait_page(driver, lambda d: "the end of it" in texts(d), "a line alice wrote after")
        log = text_of(driver, "log")
        assert "paired with this node's page" not in log and "/web revoke" not in log, log
        assert texts(driver).count("the end of it") == 1
        assert "history" not in log.lower(), log
    finally:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True})


def test_an_unplaced_phone_reads_no_moments_name_and_is_offered_moments_that_spoil_nothing(lan, driver):
    """Issue 43: a phone placed with nobody showed a big NOW: safety the moment bob, ahead, marked
    it. Now it shows a cue that names nothing, and buttons for moments anyone can name ahead."""
    alice = start_web_node(lan, "alice", shield=30)
    bob = lan("bob", peers=[alice.node.address])
    alive_to_each_other(alice.node, bob)
    pair_with_qr(driver, alice)
    wait_page(driver, lambda d: shown(d, "suggest"), "the moments to tap while unplaced")
    picks = driver.execute_script(
        "return Array.from(document.querySelectorAll('#suggest .suggest-pick')).map(b => b.dataset.label)")
    assert "kickoff" in picks, picks

    bob.say("/now safety")
    alice.node.wait_for(lambda o: o["type"] == "moment_cue" and o["by"] == "bob", what="the cue")
    wait_page(driver, lambda d: "marked a moment" in text_of(d, "log"), "the cue on the page")
    handled(alice.node)
    assert "safety" not in driver.execute_script("return document.body.textContent").lower()
    assert not shown(driver, "now")
    screenshot(driver, "web-unplaced-cue-and-moments")

    tap(driver, driver.find_element("css selector", "#suggest .suggest-pick[data-label='kickoff']"))
    alice.node.wait_for(lambda o: o["type"] == "mark" and o["nick"] == "alice" and o["label"] == "kickoff",
                        what="alice's mark of kickoff from her phone")
