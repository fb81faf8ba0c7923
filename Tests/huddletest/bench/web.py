"""Figure 19: the phone's page (issue 33), on loopback, in headless Chromium emulating a phone:
page load to the first message shown, a tap on Now to the mark's time on the node, a key pressed
on the phone to the message shown on a peer (p50/p99), and the node's memory with three devices
attached against none."""

from __future__ import annotations

import time

from ..browser import missing, phone
from ..webclient import Phone
from .harness import BenchNode, Table, log, memory_kb, pct, temp_dir, wait_until

# Installed in every page before it loads: when the first message appears in the conversation,
# in ms since the navigation started (performance.now()).
FIRST_MESSAGE = """
window.__firstMessage = null;
document.addEventListener('DOMContentLoaded', () => {
  const log = document.getElementById('log');
  const check = () => {
    if (window.__firstMessage === null && log.textContent.includes('before the phone came')) {
      window.__firstMessage = performance.now();
    }
  };
  new MutationObserver(check).observe(log, {childList: true, subtree: true, characterData: true});
  check();
});
"""


def web_node(binary: str, name: str, base, **kwargs) -> tuple[BenchNode, dict]:
    node = BenchNode(binary, name, base / name, room="bench", extra=["--web", "--web-port", "0"], **kwargs)
    web = node.wait_for(lambda o: o["type"] == "web", what="the page's address")
    return node, web


def bench_web(binary: str, trials: int, table: Table) -> None:
    lacking = missing()
    if lacking:
        table.fail("19. the phone's page", f"needs {' and '.join(lacking)} (Scripts/bootstrap --test)")
        return
    base = temp_dir("web")
    alice, web = web_node(binary, "alice", base)
    bob = BenchNode(binary, "bob", base / "bob", room="bench", peers=[alice.address])
    port = web["url"].rsplit(":", 1)[1].strip("/")
    page = f"http://127.0.0.1:{port}/"
    bob.say("before the phone came")
    alice.message("before the phone came", timeout=30)
    with phone() as driver:
        log("pairing the browser by the QR code's link")
        driver.get(page + "#pair=" + web["pair_url"].rsplit("=", 1)[1])
        wait_until(lambda: driver.execute_script("return window.huddlePage && window.huddlePage.state().connected"),
                   30, "the page to pair and connect")

        # Page load -> first message shown (the node replays what it kept).
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": FIRST_MESSAGE})
        loads = []
        for _ in range(trials):
            driver.get("about:blank")
            driver.get(page)
            loads.append(wait_until(lambda: driver.execute_script("return window.__firstMessage"), 15,
                                    "the first message on the page"))
        table.add("page load -> first message shown (navigation to the kept message on screen)",
                  f"p50 {pct(loads, 50):.0f} ms, p99 {pct(loads, 99):.0f} ms", "", None)

        # A tap on Now -> the mark's time on the node.
        taps = []
        for i in range(trials):
            label = f"moment{i}"
            bob.say(f"/event {label}")
            wait_until(lambda: driver.execute_script(
                "const b=document.getElementById('now'); return b && !b.hidden && !b.classList.contains('is-sent')"
                " && document.getElementById('now-label').textContent.includes(arguments[0])", label), 15,
                f"the Now button offering {label}")
            tapped = driver.execute_script("""
                const b = document.getElementById('now');
                const r = b.getBoundingClientRect();
                const init = {bubbles: true, pointerType: 'touch', clientX: r.x + 10, clientY: r.y + 10, isPrimary: true};
                const at = Date.now();
                b.dispatchEvent(new PointerEvent('pointerdown', init));
                b.dispatchEvent(new PointerEvent('pointerup', init));
                b.dispatchEvent(new MouseEvent('click', {bubbles: true}));
                return at;""")
            mark = alice.wait_for(lambda o: o["type"] == "mark" and o["id"] == alice.id and o["label"] == label,
                                  timeout=15, what=f"alice's mark of {label}")
            taps.append(mark["at"] - tapped)
        table.add("tap on Now (in the page) -> the mark's time on the node (at - tap; the link's one-way delay is taken off)",
                  f"p50 {pct(taps, 50):.1f} ms, p99 {pct(taps, 99):.1f} ms", "", None)

        # A key on the phone -> shown on a peer.
        keys = []
        field = driver.find_element("id", "compose-text")
        driver.execute_script(
            "arguments[0].addEventListener('keydown', e => { if (e.key === 'Enter') window.__enterAt = Date.now(); }, true)",
            field)
        for i in range(trials * 3):
            text = f"from the couch {i}"
            field.send_keys(text)
            field.send_keys("\n")
            shown = bob.message(text, timeout=15)
            keys.append(shown["shown_at"] - driver.execute_script("return window.__enterAt"))
        table.add("Enter on the phone (its keydown) -> shown on a peer (loopback)",
                  f"p50 {pct(keys, 50):.1f} ms, p99 {pct(keys, 99):.1f} ms, max {max(keys):.1f} ms", "", None)

        # Memory: none attached, then three devices attached while the room talks.
        driver.get("about:blank")
        time.sleep(2)
        idle = memory_kb(alice.process.pid)
        phones = []
        for i in range(3):
            alice.say("/web")
            code = alice.wait_for(lambda o: o["type"] == "web", what="a new code")["code"]
            device = Phone(f"127.0.0.1:{port}")
            device.pair(code, name=f"device{i}")
            device.open()
            phones.append(device)
        for i in range(100):
            bob.say(f"busy {i}")
            time.sleep(0.01)
        for device in phones:
            device.line(lambda line: line.get("text") == "busy 99", timeout=30)
        attached = memory_kb(alice.process.pid)
        table.add("node memory, no device -> 3 devices attached (RssAnon, private)",
                  f"{idle['RssAnon'] / 1024:.1f} -> {attached['RssAnon'] / 1024:.1f} MB "
                  f"(RSS {idle['VmRSS'] / 1024:.1f} -> {attached['VmRSS'] / 1024:.1f} MB)", "", None)
        for device in phones:
            device.close()
