"""Watch the spoiler hold-back happen: three viewers on a simulated LAN, streams 0, 3 and 6 s late.

    sudo Scripts/demo              # viewers mark kickoff by hand
    sudo Scripts/demo --listen     # nobody marks: each node hears its own screen (a WAV file)

Builds huddle, makes three hosts (network namespaces, each with its own avahi-daemon), starts a
node on each with no --peer flags (they find each other over mDNS), then plays a short game:
each viewer marks kickoff when their own stream shows it, and when alice (live-ish) cheers a
touchdown, bob and carol see her message only once their streams have shown the play.
The transcript interleaves what each screen shows and what each chat prints. Cleans up after
itself, also on Ctrl-C.

With --listen nobody marks: each node plays a viewer's copy of one made-up broadcast with
--audio-file (Tests/huddletest/audio_corpus.py: bob's 3.2 s behind through a TV speaker in a noisy
room, carol's 7.5 s behind through a laptop mic with the next room's TV on), the nodes find their
offsets from the sound, and alice's cheer shows on each screen at that viewer's moment.
"""

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from . import ROOT
from . import audio_corpus as corpus
from .binary import built_binary
from .lan import Bed
from .node import Node, kill_all

BED = Bed("demo")  # namespaces huddle-demo-*, apart from any bed a developer or test has up
# The demo shows the product as a viewer gets it: the shield at its default (no --shield flag).
# Everyone is placed (by a mark, or by ear) before alice cheers, so it holds nothing back there.
SHIELD = None
VIEWERS = [("h1", "alice", 0.0), ("h2", "bob", 3.0), ("h3", "carol", 6.0)]  # host, nick, stream lag (s)
GAME = [(0.0, "kickoff"), (9.0, "a 60-yard pass... TOUCHDOWN")]  # (game second, what the screen shows)
COLORS = {"alice": "\033[35m", "bob": "\033[36m", "carol": "\033[33m"} if sys.stdout.isatty() else {}
RESET = "\033[0m" if COLORS else ""

start = 0.0
print_lock = threading.Lock()


def say(nick: str, text: str) -> None:
    with print_lock:
        color = COLORS.get(nick, "")
        print(f"{time.monotonic() - start:6.1f}s  {color}{nick:<6}{RESET} {text}", flush=True)


def lag_words(nick: str, behind_ms: int) -> str:
    if abs(behind_ms) < 50:
        return f"{nick} in step with you"
    return f"{nick} {abs(behind_ms) / 1000:.1f} s {'behind' if behind_ms > 0 else 'ahead of'} you"


def follow(node: Node) -> None:
    """Prints what the node's chat shows, as it shows it."""
    seen = 0
    told = ""
    while node.process.poll() is None:
        outputs = list(node.outputs)
        for o in outputs[seen:]:
            if o["type"] == "message" and o["nick"] != node.name:
                held = f"  (held {o['held_ms'] / 1000:.1f} s)" if o["held_ms"] >= 100 else ""
                say(node.name, f"💬 {o['nick']}: {o['text']}{held}")
            elif o["type"] == "offsets":
                # From this viewer's stream, as its console says it: who is ahead, who behind.
                lags = ", ".join(lag_words(m["nick"], m["behind_you_ms"]) for m in o["members"]
                                 if m["nick"] != node.name and m["behind_you_ms"] is not None)
                if lags and lags != told:
                    say(node.name, f"   {lags}")
                    told = lags
        seen = len(outputs)
        time.sleep(0.05)


def main_listening(binary: str, tmp: str) -> int:
    """The demo with nobody marking: offsets from each screen's sound."""
    global start
    if not corpus.have_tools():
        print("demo: --listen needs sox and espeak-ng (Scripts/bootstrap --test installs them)", file=sys.stderr)
        return 1
    files = ROOT / ".build" / "audio-corpus" / "demo"
    if not (files / "manifest.json").exists():
        print("demo: making the viewers' sound (espeak-ng commentary, sox crowd; ~15 s)...", flush=True)
        corpus.demo_set(files, seed=1, seconds=40)
    viewers = [("h1", "alice", 0.0), ("h2", "bob", 3.2), ("h3", "carol", 7.5)]
    nodes: list[Node] = []
    try:
        BED.run("up", "3", "--force")
        for host, nick, _ in viewers:
            nodes.append(Node(binary, nick, Path(tmp) / nick, mdns=True, launcher=BED.on_host(host),
                              host_address=BED.address(host), extra=["--audio-file", str(files / f"{nick}.wav")],
                              shield=SHIELD))
        started = {node.name: node.wait_for(lambda o: o["type"] == "listening", timeout=10,
                                            what="listening")["started_at"] for node in nodes}
        start = time.monotonic() - (time.time() * 1000 - started["alice"]) / 1000
        print("demo: alice, bob and carol each hear their own screen (a file here). Nobody marks anything.\n",
              flush=True)
        for node in nodes:
            threading.Thread(target=follow, args=(node,), daemon=True).start()
        alice = nodes[0]

        def heard_all() -> bool:
            for o in reversed(list(alice.outputs)):
                if o["type"] == "offsets":
                    return all(m.get("heard") for m in o["members"])
            return False

        deadline = time.monotonic() + 30
        while not heard_all():
            if time.monotonic() > deadline:
                print("demo: the sound placed nobody within 30 s", file=sys.stderr)
                return 1
            time.sleep(0.1)
        say("alice", "📺 a 60-yard pass... TOUCHDOWN")
        say("alice", "types: TOUCHDOWN!!! 🏈")
        alice.say("TOUCHDOWN!!! 🏈")
        late = []
        for node, (_, nick, delay) in zip(nodes[1:], viewers[1:]):
            shown = node.message("TOUCHDOWN!!! 🏈", timeout=20)
            truth = started[nick] - started["alice"] + delay * 1000
            held = shown["shown_at"] - shown["sent_at"]
            if abs(held - truth) > 50:
                late.append(f"{nick} (held {held} ms, stream {truth:.0f} ms behind)")
        time.sleep(0.3)
        if late:
            print(f"\ndemo: the hold-back was off for {', '.join(late)}", file=sys.stderr)
            return 1
        print("\ndemo: nobody marked, nobody was spoiled: the sound of each screen told the nodes how far apart")
        print("demo: the streams are, and the cheer waited for each of them to within 50 ms.")
        return 0
    finally:
        kill_all(nodes)
        BED.down()


def main() -> int:
    global start
    if os.geteuid() != 0:
        print("demo: needs root to create the simulated LAN (network namespaces): sudo Scripts/demo", file=sys.stderr)
        return 1
    if os.environ.get("HUDDLE_BIN"):
        binary = os.environ["HUDDLE_BIN"]
        print(f"demo: {binary} (HUDDLE_BIN), starting three simulated hosts...", flush=True)
    else:
        print("demo: building huddle (HUDDLE_BIN=PATH skips it) and starting three simulated hosts...", flush=True)
        subprocess.run(["swift", "build", "--product", "huddle"], cwd=ROOT, check=True, capture_output=True)
        binary = built_binary("debug")
    nodes: list[Node] = []
    with tempfile.TemporaryDirectory(prefix="huddle-demo-") as tmp:
        if "--listen" in sys.argv[1:]:
            return main_listening(binary, tmp)
        try:
            BED.run("up", "3", "--force")
            for host, nick, _ in VIEWERS:
                nodes.append(Node(binary, nick, Path(tmp) / nick, mdns=True, launcher=BED.on_host(host),
                                  host_address=BED.address(host), shield=SHIELD))
            for node in nodes:
                for _, other, _ in VIEWERS:
                    if other != node.name:
                        node.wait_for(lambda o, n=other: o["type"] == "join" and o["nick"] == n, timeout=30,
                                      what=f"{other} over mDNS")
            print("demo: alice, bob and carol found each other over mDNS; bob's stream is 3 s behind alice's,")
            print("demo: carol's 6 s. Each marks kickoff when their own screen shows it.\n", flush=True)
            start = time.monotonic()
            for node in nodes:
                threading.Thread(target=follow, args=(node,), daemon=True).start()
            plan = []  # (wall second, action)
            for node, (_, nick, lag) in zip(nodes, VIEWERS):
                for second, what in GAME:
                    plan.append((second + lag, lambda n=node, w=what: say(n.name, f"📺 {w}")))
                plan.append((lag + 0.2, lambda n=node: (say(n.name, "types /now kickoff"), n.say("/now kickoff"))))
            alice = nodes[0]
            plan.append((9.6, lambda: (say("alice", "types: TOUCHDOWN!!! 🏈"), alice.say("TOUCHDOWN!!! 🏈"))))
            plan.append((17.0, lambda: None))
            for at, action in sorted(plan, key=lambda p: p[0]):
                time.sleep(max(0, start + at - time.monotonic()))
                action()
            time.sleep(0.5)
            # Check what the transcript claims: each viewer got the cheer after their own touchdown.
            cheer_sent = 9.6
            late = []
            for node, (_, nick, lag) in zip(nodes[1:], VIEWERS[1:]):
                shown = [o for o in list(node.outputs) if o["type"] == "message" and o["nick"] == "alice"]
                held = shown[0]["held_ms"] / 1000 if shown else None
                if held is None or abs(held - lag) > 0.3:
                    late.append(f"{nick} (held {held} s, stream {lag} s behind)")
            if late:
                print(f"\ndemo: the hold-back was off for {', '.join(late)}", file=sys.stderr)
                return 1
            print(f"\ndemo: nobody's stream was spoiled: alice cheered at {cheer_sent} s on her screen, and bob and carol")
            print("demo: saw it just after their own streams showed the touchdown.")
            return 0
        finally:
            kill_all(nodes)
            BED.down()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
