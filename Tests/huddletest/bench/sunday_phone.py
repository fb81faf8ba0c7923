"""One phone of the Sunday test (bench part 21, sunday.py): the page in headless Chromium, run as
its own process inside the phone's network namespace of the two-homes bed (the phone is a host on
the home network; its browser reaches nothing but the bed), driven by JSON lines on stdin and
answering with JSON lines on stdout. `PhoneProc` is the script's end of it.

    ip netns exec huddle-sn-a4 python3 -m huddletest.bench.sunday_phone URL SECRET NAME

It pairs by the QR code's link (URL#pair=SECRET), then obeys:
  {"cmd": "tap", "label": L}   a tap as L reaches this phone's stream: the suggested "Now: L"
                               button, else the big Now if it offers L, else `/now L` typed
  {"cmd": "say", "text": T}    T typed in the compose field and sent
  {"cmd": "pause"} / {"cmd": "resume"}   the Pause button
  {"cmd": "sleep"} / {"cmd": "wake"}     the page closed (about:blank), then opened again
  {"cmd": "quit"}
and prints {"ev": "dom", "records": [...]} about every second: each message that appeared in the
conversation (its nick, text, whether it came in an earlier block) with the browser's Date.now()
when it appeared (a MutationObserver installed in every page before it loads), and one line per
command ({"ev": "tap", "label", "at", "how"}, {"ev": "done", "cmd"}, {"ev": "error", ...}).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

from .. import ROOT
from ..browser import phone
from ..processes import stop_process
from .harness import LIVE_PROCS

OBSERVER = """
window.__sunday = [];
document.addEventListener('DOMContentLoaded', () => {
  const log = document.getElementById('log');
  const take = (node) => {
    if (!(node instanceof Element)) return;
    const msgs = node.matches('article.msg') ? [node] : Array.from(node.querySelectorAll('article.msg'));
    for (const m of msgs) {
      const text = m.querySelector('.msg-text');
      const nick = m.querySelector('.msg-nick');
      window.__sunday.push({at: Date.now(), text: text ? text.textContent : '',
                            nick: nick ? nick.textContent : '', earlier: m.classList.contains('is-earlier'),
                            own: m.classList.contains('is-own')});
    }
  };
  new MutationObserver((list) => { for (const r of list) for (const n of r.addedNodes) take(n); })
    .observe(log, {childList: true, subtree: true});
  take(log);
});
"""

TAP = """
const el = arguments[0];
const r = el.getBoundingClientRect();
const init = {bubbles: true, pointerType: 'touch', clientX: r.x + 5, clientY: r.y + 5, isPrimary: true};
const at = Date.now();
el.dispatchEvent(new PointerEvent('pointerdown', init));
el.dispatchEvent(new PointerEvent('pointerup', init));
el.dispatchEvent(new MouseEvent('click', {bubbles: true}));
return at;
"""

FIND = """
const label = arguments[0];
for (const b of document.querySelectorAll('.suggest-pick')) {
  if (b.dataset.label === label && !b.disabled && b.offsetParent !== null) return ['suggested', b];
}
const now = document.getElementById('now');
const text = (document.getElementById('now-label') || {}).textContent || '';
if (now && !now.hidden && !now.classList.contains('is-sent') && text.toLowerCase().includes(label.toLowerCase())) {
  return ['now', now];
}
return null;
"""

SAY = """
const field = document.getElementById('compose-text');
field.value = arguments[0];
const at = Date.now();
document.getElementById('compose').requestSubmit();
return at;
"""


class PhoneProc:
    """sunday_phone.py on the phone's host: commands in, events out (kept in `events`)."""

    def __init__(self, bed, host: str, name: str, url: str, secret: str, logs: Path):
        env = dict(os.environ, PYTHONPATH=str(ROOT / "Tests"), PYTHONDONTWRITEBYTECODE="1")
        self.name = name
        self.stderr = open(logs / f"phone-{name}.stderr", "w")
        self.proc = subprocess.Popen([*bed.on_host(host), sys.executable, "-u", "-m", "huddletest.bench.sunday_phone",
                                      url, secret, name], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, text=True, bufsize=1, env=env)
        LIVE_PROCS.append(self.proc)
        self.events: list[dict] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                event = {"ev": "unparsed", "line": line}
            event["_rx"] = time.time()
            self.events.append(event)

    def send(self, cmd: dict) -> None:
        try:
            with self.lock:
                self.proc.stdin.write(json.dumps(cmd) + "\n")
                self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            self.events.append({"ev": "error", "what": f"{self.name}'s phone is gone: {cmd}", "_rx": time.time()})

    def wait(self, ev: str, timeout: float) -> dict | None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            found = next((e for e in list(self.events) if e.get("ev") == ev), None)
            if found or self.proc.poll() is not None:
                return found
            time.sleep(0.1)
        return None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.send({"cmd": "quit"})
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
        stop_process(self.proc)
        if self.proc in LIVE_PROCS:
            LIVE_PROCS.remove(self.proc)
        self.stderr.close()


def emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> int:
    url, secret, name = sys.argv[1], sys.argv[2], sys.argv[3]
    page = url if url.endswith("/") else url + "/"
    with phone() as driver:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": OBSERVER})
        driver.get(page + "#pair=" + secret)
        deadline = time.monotonic() + 60
        while not driver.execute_script("return !!(window.huddlePage && window.huddlePage.state().connected)"):
            if time.monotonic() > deadline:
                emit({"ev": "error", "what": "the page did not pair and connect within 60 s"})
                return 1
            time.sleep(0.1)
        emit({"ev": "paired", "name": name, "at": time.time() * 1000})
        awake = True

        def harvest() -> None:
            if not awake:
                return
            records = driver.execute_script("const r = window.__sunday || []; window.__sunday = []; return r;")
            if records:
                emit({"ev": "dom", "records": records})

        last = 0.0
        while True:
            ready, _, _ = select.select([sys.stdin], [], [], 0.25)
            if not ready:
                if time.monotonic() - last >= 1.0:
                    try:
                        harvest()
                    except Exception as error:  # noqa: BLE001 - a page mid-navigation; next time
                        emit({"ev": "error", "what": f"harvest: {error}"[:300]})
                    last = time.monotonic()
                continue
            line = sys.stdin.readline()
            if not line:
                break
            try:
                cmd = json.loads(line)
                what = cmd["cmd"]
                if what == "quit":
                    harvest()
                    emit({"ev": "done", "cmd": "quit"})
                    break
                if what == "tap":
                    found = driver.execute_script(FIND, cmd["label"])
                    if found:
                        how, element = found
                        at = driver.execute_script(TAP, element)
                    else:
                        how, at = "typed", driver.execute_script(SAY, f"/now {cmd['label']}")
                    emit({"ev": "tap", "label": cmd["label"], "at": at, "how": how, "planned": cmd.get("planned")})
                elif what == "say":
                    at = driver.execute_script(SAY, cmd["text"])
                    emit({"ev": "said", "text": cmd["text"], "at": at})
                elif what in ("pause", "resume"):
                    button = driver.find_element("id", "act-pause")
                    pressed = button.get_attribute("aria-pressed") == "true"
                    if pressed != (what == "resume"):
                        emit({"ev": "error", "what": f"{what}: the button says pressed={pressed}"})
                    at = driver.execute_script(TAP, button)
                    emit({"ev": "done", "cmd": what, "at": at})
                elif what == "sleep":
                    harvest()
                    awake = False
                    driver.get("about:blank")
                    emit({"ev": "done", "cmd": "sleep", "at": time.time() * 1000})
                elif what == "wake":
                    driver.get(page)
                    awake = True
                    deadline = time.monotonic() + 30
                    while not driver.execute_script(
                            "return !!(window.huddlePage && window.huddlePage.state().connected)"):
                        if time.monotonic() > deadline:
                            emit({"ev": "error", "what": "wake: not connected within 30 s"})
                            break
                        time.sleep(0.1)
                    emit({"ev": "done", "cmd": "wake", "at": time.time() * 1000})
            except Exception as error:  # noqa: BLE001 - reported to the script, which counts it
                emit({"ev": "error", "what": f"{line.strip()[:100]}: {error}"[:600],
                      "trace": traceback.format_exc()[-800:]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
