"""Figure 21: the Sunday test (issue 46). One scripted game across every feature at once, with real
processes on the two-homes bed (huddletest.homes, NAT mode; sunday_wire.py adds hosts), every line
any viewer could see checked against that viewer's own stream, as the spoiler audit (part 17,
spoilers.py) does, on every face: the laptops' --json output, the phones' page (its DOM, read in
headless Chromium), `/history` and `huddle history --json` asked at random, `huddle status --json`.

    Scripts/bench --only sunday            # the full game: 60 minutes (HUDDLE_BENCH_SUNDAY_SECONDS=N)
    Scripts/bench --only sunday --quick    # a 90 s game, under 3 minutes in all; runs in CI
    HUDDLE_BENCH_SUNDAY_STRICT=1 Scripts/bench --only sunday   # the full game, failing as --quick does

Exit status: unlike the other parts, the --quick run FAILS (Scripts/bench exits 1) if any line was
seen early by anyone on any face, any line was lost, or any byte of the private room's text (or
its passphrase) is in the capture of the wires; so does the full run with
HUDDLE_BENCH_SUNDAY_STRICT=1. Otherwise a missed target is marked MISSED and the run exits 0.
Root only (network namespaces); needs tcpdump, sox and espeak-ng, Chromium, chromedriver and
Selenium (Scripts/bootstrap --test).

The viewers (lags: how far each stream is behind alice's, whose sound starts the game):

    home A  alice  a1  laptop, listens to her stream (--audio-file), 0 s, never marks
            anna   a2  laptop, joins late (25 % in), 12 s; SIGKILLed at 60 % and started again
            pia    a3  a node nobody watches; her phone (a4) pairs with its page: 25 s; taps Now;
                       pauses and resumes on the page
    home B  bob    b1  laptop, listens (a copy 3.2 s behind in a noisy room, 44.1 kHz, +100 ppm),
                       started ~2 s after alice (~5 s); his stream rebuffers 5 s (silence spliced
                       in his file), never marks
            frank  b2  laptop, 150 s behind: /shield 180 as he sits down (README); marks
            quinn  b3  a node nobody watches; his phone (b4) pairs with its page: 45 s; taps Now;
                       the page sleeps (closed) and comes back
    a5      a stranger: the amplification flood at alice's UDP port, wrong pairing codes and idle
            connections at pia's page server

alice, bob and frank are also in a private room (`/private backroom`), anna writes bob direct
messages, quinn writes alice one from his phone, everyone chats about what is on their own screen
(phones by the page's compose field), and moments (kickoff, "q1 12:00", ...) are marked by the
laptops that mark and tapped on the phones exactly as they reach each stream. `huddle status`,
`huddle history` and (on a laptop) `/history 20` are asked at random moments, and once more on
every node 12 s after the game. The figures are printed by sunday_audit.py; sunday_phone.py
drives a phone, sunday_wire.py the bed, the capture and the stranger, sunday_sound.py makes the
sound. With --keep, the run's temp dir keeps every node's output lines (NAME-N.jsonl), every
phone's events, the capture (wire.pcap) and the nodes' stderr: what a reproduction starts from.

The sound is made once and cached (.build/audio-corpus/sunday-N; ~8 s for --quick, ~30 s for
the full run): it covers the first 600 s of a longer game (espeak-ng for an hour of commentary
would take many minutes), so in the full hour the listeners are placed by sound early, bob's
rebuffer falls at his second 580, and from 640 s on their nodes hear nothing more.

Scaled for --quick: a 90 s game (moments 10 s apart, a line every ~8 s a viewer), a 130 s sound,
the rebuffer at bob's second 40, the pause 8 s, the sleep 12 s, the flood 20 s. frank is 150 s
behind in both: in the quick game his stream never reaches kickoff, so he writes about his
pre-game and nothing written during the game is due on his screen; what he could see early (his
/shield 180 not holding) is audited all the same.
"""

from __future__ import annotations

import heapq
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from .. import ROOT
from .. import audio_corpus as corpus
from ..browser import missing as browser_missing
from ..processes import stop_process
from .harness import LIVE_PROCS, BenchNode, Table, log, memory_kb, stop_node, temp_dir
from .listening import cpu_seconds
from .spoilers import Action, Stream, labels
from .sunday_audit import audit
from .sunday_phone import PhoneProc
from .sunday_sound import BOB_DELAY, BOB_DRIFT_PPM, REBUFFER_SECONDS, SoundStream, make_sound
from .sunday_wire import SundayHomes, start_capture

ROOM, PRIVATE = "superbowl", "backroom"
PASSPHRASE = "blue 42 hut hut sunday"
SECRET = "sn-secret"  # every line of the private room starts with it: what the capture is searched for
TAG = os.environ.get("HUDDLE_BENCH_SUNDAY_TAG", "sn")
HOSTS = {"alice": "a1", "anna": "a2", "pia": "a3", "bob": "b1", "frank": "b2", "quinn": "b3"}
PHONE_HOST = {"pia": "a4", "quinn": "b4"}
STRANGER_HOST = "a5"
LAGS = {"anna": 12.0, "pia": 25.0, "frank": 150.0, "quinn": 45.0}  # alice's and bob's come from their sound
LISTENERS = ("alice", "bob")
PHONES = ("pia", "quinn")
MARKERS = ("anna", "frank")
FAR_BEHIND, FAR_SHIELD = "frank", 180
LATE, KILLED, PAUSER, SLEEPER, REBUFFERED = "anna", "anna", "pia", "quinn", "bob"
PRIVATE_MEMBERS = ("alice", "bob", "frank")
DEFAULT_SHIELD = 90.0
SEED = 46


class Run:
    """Everything one Sunday run starts and records; `audit` reads it."""

    def __init__(self, binary: str, seconds: float, quick: bool, base: Path):
        self.binary, self.seconds, self.quick, self.base = binary, seconds, quick, base
        self.bed = SundayHomes(TAG, "nat")
        self.nodes: dict[str, BenchNode] = {}          # the current process of each viewer
        self.processes: dict[str, list[BenchNode]] = {}  # every process each viewer ran (a restart)
        self.phones: dict[str, PhoneProc] = {}
        self.streams: dict[str, Stream] = {}
        self.web: dict[str, dict] = {}
        self.listening_started: dict[str, float] = {}
        self.history: list[tuple[str, str, float, list[dict]]] = []  # reader, kind, printed, lines
        self.statuses: list[tuple[str, float, str]] = []
        self.console_asked: dict[str, list[float]] = {}
        self.joined: dict[str, float] = {}
        self.events: dict[str, float] = {}
        self.lateness: list[float] = []
        self.skipped: list[str] = []
        self.peak_anon: dict[str, int] = {}
        self.cpu: dict[str, dict[int, float]] = {}
        self.alive_since: dict[str, list[tuple[float, float | None]]] = {}
        self.stranger: dict = {}
        self.listening_status: dict[str, dict] = {}
        self.capture_path = base / "wire.pcap"
        self.sampling = threading.Event()
        self.end = 0.0

    # -- nodes ------------------------------------------------------------------------------

    def start_node(self, name: str, extra: list[str] = (), shield=None) -> BenchNode:
        host = HOSTS[name]
        node = BenchNode(self.binary, name, self.base / name, port=7400, launcher=self.bed.on_host(host),
                         host_address=self.bed.address(host), peers=self.bed.seeds(host) if host in ("a1", "a2", "b1", "b2")
                         else [self.bed.address("a1" if host.startswith("a") else "b1") + ":7400"],
                         room=ROOM, shield=shield, extra=list(extra))
        self.nodes[name] = node
        self.processes.setdefault(name, []).append(node)
        self.alive_since.setdefault(name, []).append((time.time(), None))
        return node

    def join_private(self, name: str) -> None:
        """`/private backroom`, its passphrase on the next line, and once in, back to the public room."""
        node = self.nodes[name]
        node.say(f"/private {PRIVATE}")
        node.say(PASSPHRASE)
        node.wait_for(lambda o: o["type"] == "join" and o.get("room") == PRIVATE and o.get("id") == node.id,
                      timeout=60, what=f"{name} in {PRIVATE}")
        node.say(f"/join {ROOM}")

    def sample(self) -> None:
        """Peak private memory (RssAnon) and CPU of every node, every 2 s, until the run ends;
        the listeners' sound (`huddle status`), every 10 s, while they still listen."""
        rounds = 0
        while not self.sampling.wait(2.0):
            rounds += 1
            for name in LISTENERS if rounds % 5 == 0 else ():
                node = self.nodes.get(name)
                try:
                    listening = node.status().get("listening") if node and node.process.poll() is None else None
                except Exception:  # noqa: BLE001 - the next round
                    listening = None
                if listening:
                    self.listening_status[name] = listening
            for name, procs in list(self.processes.items()):
                for node in procs:
                    pid = node.process.pid
                    if node.process.poll() is not None:
                        continue
                    try:
                        anon = memory_kb(pid).get("RssAnon", 0)
                        self.peak_anon[name] = max(self.peak_anon.get(name, 0), anon)
                        self.cpu.setdefault(name, {})[pid] = cpu_seconds(pid)
                    except (OSError, RuntimeError, ValueError, IndexError):
                        pass

    # -- the script -------------------------------------------------------------------------

    def setup(self) -> None:
        alice_wav, bob_wav, self.rebuffer_file_second = make_sound(self.seconds)
        self.bed.up()
        self.capture = start_capture(self.bed, self.capture_path, leave_out=self.bed.address(STRANGER_HOST))
        LIVE_PROCS.append(self.capture)
        started = time.monotonic()
        # Those who are not the game's clock first: frank, the two nodes of the phones.
        frank = self.start_node("frank")
        frank.say(f"/shield {FAR_SHIELD}")
        for name in PHONES:
            node = self.start_node(name, extra=["--web", "--web-port", "0"])
            self.web[name] = node.wait_for(lambda o: o["type"] == "web", timeout=15, what="the page's address")
        for name in PHONES:
            web = self.web[name]
            self.phones[name] = PhoneProc(self.bed, PHONE_HOST[name], name, web["url"],
                                          web["pair_url"].rsplit("#pair=", 1)[1], self.base)
        # alice's sound starts the game; bob's ~2 s later in home B.
        alice = self.start_node("alice", extra=["--audio-file", str(alice_wav)])
        self.listening_started["alice"] = alice.wait_for(lambda o: o["type"] == "listening", timeout=15,
                                                         what="alice listening")["started_at"] / 1000
        self.start = self.listening_started["alice"]
        time.sleep(max(0.0, self.start + 2.0 - time.time()))
        bob = self.start_node("bob", extra=["--audio-file", str(bob_wav)])
        self.listening_started["bob"] = bob.wait_for(lambda o: o["type"] == "listening", timeout=15,
                                                     what="bob listening")["started_at"] / 1000
        for name in ("alice", "bob"):
            self.join_private(name)
        self.join_private("frank")
        for name, phone in self.phones.items():
            if not phone.wait(ev="paired", timeout=90):
                raise RuntimeError(f"{name}'s phone did not pair: {[e for e in phone.events if e.get('ev') == 'error']}"
                                   f"; see {phone.stderr.name}")
        log(f"bed, capture, five nodes and two phones up in {time.monotonic() - started:.0f} s; the game started "
            f"{time.time() - self.start:.0f} s ago (alice's sound)")
        start = self.start
        self.streams = {name: Stream(start, lag) for name, lag in LAGS.items()}
        self.streams["alice"] = SoundStream(start, self.listening_started["alice"], 0.0)
        bob_stream = SoundStream(start, self.listening_started["bob"], BOB_DELAY, BOB_DRIFT_PPM)
        self.rebuffer_at = self.listening_started["bob"] + self.rebuffer_file_second
        bob_stream.freezes.append((self.rebuffer_at, REBUFFER_SECONDS))
        self.streams["bob"] = bob_stream
        threading.Thread(target=self.sample, daemon=True).start()

    def plan(self) -> list[Action]:
        rng = random.Random(SEED)
        L, start, quick = self.seconds, self.start, self.quick
        step = 10.0 if quick else 40.0
        moments = [5.0 + k * step for k in range(int((L - 5.0) // step) + 1)]
        names = labels(len(moments))
        self.step = step
        actions: list[Action] = []
        order = [0]

        def at(when: float, what: str, run, kind: str = "") -> None:
            order[0] += 1
            heapq.heappush(actions, Action(when, order[0], what, run, kind))

        join_at = start + 0.25 * L
        kill_at, restart_after = start + 0.6 * L, 4.0
        pause_at, pause_for = start + 0.4 * L, 8.0 if quick else 30.0
        sleep_at, sleep_for = start + 0.5 * L, 12.0 if quick else 60.0
        flood_at, flood_for = start + 0.3 * L, 20.0 if quick else 120.0
        self.events.update(join=join_at, kill=kill_at, restart=kill_at + restart_after, pause=pause_at,
                           resume=pause_at + pause_for, sleep=sleep_at, wake=sleep_at + sleep_for, flood=flood_at,
                           flood_end=flood_at + flood_for, rebuffer=self.rebuffer_at)
        self.streams[PAUSER].freezes.append((pause_at, pause_for))
        dead = [(kill_at, kill_at + restart_after + 3.0)]

        def up(name: str, when: float) -> bool:
            if name == LATE and when < join_at + 4:
                return False
            return not (name == KILLED and any(a <= when <= b for a, b in dead))

        def say(name: str, line: str):
            def run() -> None:
                node = self.nodes.get(name)
                if node is None or node.process.poll() is not None:
                    self.skipped.append(f"{name}: {line}")
                    return
                try:
                    node.say(line)
                except (BrokenPipeError, ValueError, OSError):
                    self.skipped.append(f"{name}: {line}")
            return run

        def mark(name: str, label: str, planned: float):
            if name in PHONES:
                return lambda: self.phones[name].send({"cmd": "tap", "label": label, "planned": planned * 1000})

            def run() -> None:  # a wild mark asked about: pressed again, as a person would
                node = self.nodes.get(name)
                if node is None or node.process.poll() is not None:
                    self.skipped.append(f"{name}: /now {label}")
                    return
                since = len(node.outputs)
                node.say(f"/now {label}")

                def confirm() -> None:
                    deadline = time.time() + 3
                    while time.time() < deadline:
                        if any(o.get("type") == "confirm_mark" and o.get("label") == label
                               for o in list(node.outputs)[since:]):
                            node.say(f"/now {label}")
                            return
                        time.sleep(0.05)
                threading.Thread(target=confirm, daemon=True).start()
            return run

        asleep = (sleep_at - 1, sleep_at + sleep_for + 3)
        for name in MARKERS + PHONES:
            stream = self.streams[name]
            for label, g in zip(names, moments):
                when = stream.reaches(g)
                if name == SLEEPER and asleep[0] <= when <= asleep[1]:
                    continue  # the phone is asleep: its viewer taps nothing
                if up(name, when) and when < start + L + 30:
                    at(when, f"{name} marks {label}", mark(name, label, when), "mark")
        # Chat: everyone at random moments of his own screen; a phone by its compose field.
        chats = 0
        gap = 8.0 if quick else 20.0
        for name in list(HOSTS):
            stream = self.streams[name]
            t = max(start + 3.0, time.time() + 1.0)  # from when everyone is up
            while True:
                t += rng.expovariate(1 / gap)
                if t > start + L:
                    break
                if not up(name, t) or any(f <= t < f + s for f, s in stream.freezes):
                    continue
                if name == SLEEPER and asleep[0] <= t <= asleep[1]:
                    continue  # the phone is asleep: its viewer types nothing
                chats += 1
                g = stream.moment(t)
                text = f"{name} {chats}: on my screen, second {g:.1f}"
                if name in PHONES:
                    at(t, f"{name} chats", lambda n=name, x=text: self.phones[n].send({"cmd": "say", "text": x}), "chat")
                else:
                    at(t, f"{name} chats", say(name, text), "chat")
        self.chats = chats
        # The private room: alice, bob and frank, a few lines each (typed as three lines at once).
        private_every = 25.0 if quick else 240.0
        for name in PRIVATE_MEMBERS:
            t = max(start, time.time()) + rng.uniform(2, private_every)
            k = 0
            while t < start + L:
                k += 1
                g = self.streams[name].moment(t)
                text = f"{SECRET} {name} {k}: the play we saw at second {g:.1f}"

                def private(name=name, text=text) -> None:
                    for line in (f"/join {PRIVATE}", text, f"/join {ROOM}"):
                        say(name, line)()
                at(t, f"{name} in {PRIVATE}", private, "private")
                t += private_every
        # Direct messages: anna -> bob at the console, quinn -> alice from his phone.
        for k, frac in enumerate((0.35, 0.75)):
            t = start + frac * L
            if up("anna", t):
                at(t, "anna /msg bob", say("anna", f"/msg bob dm anna {k}: second {self.streams['anna'].moment(t):.1f}"),
                   "dm")
            t2 = start + (frac + 0.05) * L
            at(t2, "quinn /msg alice", lambda k=k, t2=t2: self.phones["quinn"].send(
                {"cmd": "say", "text": f"/msg alice dm quinn {k}: second {self.streams['quinn'].moment(t2):.1f}"}), "dm")
        # The late joiner, the kill and the restart.
        at(join_at, f"{LATE} joins", lambda: self.in_thread(self.late_join), "join")
        at(kill_at, f"{KILLED} SIGKILLed", self.kill, "kill")
        at(kill_at + restart_after, f"{KILLED} started again", lambda: self.in_thread(self.restart), "restart")
        # The phones: a pause and resume on pia's page, quinn's page asleep and back.
        at(pause_at, f"{PAUSER} pauses", lambda: self.phones[PAUSER].send({"cmd": "pause"}), "pause")
        at(pause_at + pause_for, f"{PAUSER} resumes", lambda: self.phones[PAUSER].send({"cmd": "resume"}), "resume")
        at(sleep_at, f"{SLEEPER}'s phone sleeps", lambda: self.phones[SLEEPER].send({"cmd": "sleep"}), "sleep")
        at(sleep_at + sleep_for, f"{SLEEPER}'s phone wakes", lambda: self.phones[SLEEPER].send({"cmd": "wake"}), "wake")
        # The stranger.
        at(flood_at, "the stranger floods", lambda: self.in_thread(lambda: self.flood(flood_for)), "flood")
        # History and status asked at random moments.
        for _ in range(8 if quick else 60):
            t = start + rng.uniform(5, L + 15)
            name = rng.choice(list(HOSTS))
            kind = rng.choice(["status", "huddle history"] + (["/history"] if name not in PHONES else []))
            at(t, f"{kind} on {name}", lambda n=name, k=kind: self.ask(n, k), "history")
        # And once more on every node after the game, when the most lines are due somewhere and
        # held somewhere else (frank's shield holds all the room's lines 180 s, not 90).
        for name in HOSTS:
            for kind in ("status", "huddle history") + (("/history",) if name not in PHONES else ()):
                at(start + L + 12, f"{kind} on {name}", lambda n=name, k=kind: self.ask(n, k), "history")
        return actions

    def in_thread(self, run) -> None:
        threading.Thread(target=run, daemon=True).start()

    def late_join(self) -> None:
        try:
            self.start_node(LATE)
            self.joined[LATE] = time.time()
        except Exception as error:  # noqa: BLE001 - reported in the table
            self.skipped.append(f"{LATE} did not start: {error}")

    def kill(self) -> None:
        node = self.nodes.get(KILLED)
        if node is None or node.process.poll() is not None:
            self.skipped.append(f"{KILLED} was not running to be killed")
            return
        node.process.send_signal(signal.SIGKILL)
        node.process.wait()
        self.alive_since[KILLED][-1] = (self.alive_since[KILLED][-1][0], time.time())

    def restart(self) -> None:
        try:
            self.start_node(KILLED)
        except Exception as error:  # noqa: BLE001 - reported in the table
            self.skipped.append(f"{KILLED} did not start again: {error}")

    def flood(self, seconds: float) -> None:
        udp = f"{self.bed.address('a1')}:7400"
        web = self.web[PAUSER]["url"].split("//", 1)[1].rstrip("/")
        env = dict(os.environ, PYTHONPATH=str(ROOT / "Tests"), PYTHONDONTWRITEBYTECODE="1")
        proc = subprocess.Popen([*self.bed.on_host(STRANGER_HOST), sys.executable, "-m",
                                 "huddletest.bench.sunday_wire", "stranger", udp, web, str(seconds)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        LIVE_PROCS.append(proc)
        try:
            out, err = proc.communicate(timeout=seconds + 60)
            self.stranger = json.loads(out.strip().splitlines()[-1]) if out.strip() else {"error": err[-500:]}
        except Exception as error:  # noqa: BLE001 - reported in the table
            self.stranger = {"error": str(error)}
        finally:
            if proc in LIVE_PROCS:
                LIVE_PROCS.remove(proc)

    def ask(self, name: str, kind: str) -> None:
        node = self.nodes.get(name)
        if node is None or node.process.poll() is not None:
            return
        if kind == "/history":
            self.console_asked.setdefault(name, []).append(time.time())
            node.say("/history 20")
            return

        def go() -> None:
            asked = time.time()
            args = ["status", "--json"] if kind == "status" else ["history", "--room", ROOM, "--json"]
            out = subprocess.run([self.binary, *args, "--data-dir", str(node.data_dir)], capture_output=True,
                                 text=True, timeout=60)
            if out.returncode != 0:
                self.skipped.append(f"{kind} on {name}: {out.stderr.strip()[:200]}")
            elif kind == "status":
                self.statuses.append((name, asked, out.stdout))
            else:
                # Seen when printed: the command reads the store when it has started (half a second
                # after it was asked, on a busy machine), and lists what the node has shown by then.
                printed = time.time()
                self.history.append((name, kind, printed, [json.loads(line) for line in out.stdout.splitlines()]))
        self.in_thread(go)

    def play(self, actions: list[Action]) -> None:
        L = self.seconds
        last = max(a.at for a in actions)
        self.settle_until = max(last + 3, self.start + L + (20 if self.quick else 60))
        log(f"{len(actions)} scripted actions ({self.chats} chat lines) over {last - self.start:.0f} s of the game, "
            f"then until {self.settle_until - self.start:.0f} s")
        while actions:
            action = heapq.heappop(actions)
            delay = action.at - time.time()
            if delay > 0:
                time.sleep(delay)
            if action.kind in ("mark", "pause", "resume", "chat"):
                self.lateness.append((time.time() - action.at) * 1000)
            action.run()
        time.sleep(max(0.0, self.settle_until - time.time()))
        self.end = time.time()

    def finish(self) -> None:
        """The end of the game: the sampling stops, the phones put away (their last DOM read)."""
        self.sampling.set()
        for phone in self.phones.values():
            phone.stop()

    def dump(self) -> None:
        """Every node's output lines and every phone's events, as read, into the run's temp dir
        (kept with --keep): what a reproduction starts from."""
        for name, procs in self.processes.items():
            for i, node in enumerate(procs):
                with open(self.base / f"{name}-{i}.jsonl", "w") as out:
                    for o in list(node.outputs):
                        out.write(json.dumps(o) + "\n")
        for name, phone in self.phones.items():
            with open(self.base / f"phone-{name}.jsonl", "w") as out:
                for event in list(phone.events):
                    out.write(json.dumps(event) + "\n")
        with open(self.base / "asked.json", "w") as out:
            json.dump({"start": getattr(self, "start", None), "events": self.events, "history": self.history,
                       "statuses": [(n, at) for n, at, _ in self.statuses], "console_asked": self.console_asked,
                       "lags": {n: st.lag(self.start + 30) for n, st in self.streams.items()}}, out)

    def teardown(self) -> None:
        try:
            self.dump()
        except Exception as error:  # noqa: BLE001 - the figures do not need it
            log(f"sunday: could not write the run's lines: {error}")
        self.sampling.set()
        for phone in self.phones.values():
            phone.stop()
        for procs in self.processes.values():
            for node in procs:
                stop_node(node)
        capture = getattr(self, "capture", None)
        if capture is not None:
            stop_process(capture)
            if capture in LIVE_PROCS:
                LIVE_PROCS.remove(capture)
        self.bed.down()


def bench_sunday(binary: str, seconds: float, quick: bool, table: Table) -> None:
    title = "21. the Sunday test"
    if os.geteuid() != 0:
        table.add(title, "skipped", "needs root (network namespaces): sudo Scripts/bench --only sunday")
        return
    lacking = [tool for tool in ("tcpdump", "iptables", "conntrack") if shutil.which(tool) is None]
    lacking += browser_missing()
    if not corpus.have_tools():
        lacking.append("sox and espeak-ng")
    if lacking:
        table.fail(title, f"needs {', '.join(lacking)} (Scripts/bootstrap --test installs them)")
        return
    strict = quick or os.environ.get("HUDDLE_BENCH_SUNDAY_STRICT") == "1"
    wall = time.monotonic()
    run = Run(binary, seconds, quick, temp_dir("sunday"))
    try:
        run.setup()
        actions = run.plan()
        run.play(actions)
        run.finish()
    finally:
        run.teardown()
    capture = run.capture_path.read_bytes() if run.capture_path.exists() else b""
    bad = audit(run, capture, table, title)
    table.note(f"sunday: {'quick' if quick else 'full'} run, {seconds:.0f} s game, {time.monotonic() - wall:.0f} s "
               f"in all (setup and teardown included)")
    if strict and bad:
        table.fail(title, "; ".join(bad))
