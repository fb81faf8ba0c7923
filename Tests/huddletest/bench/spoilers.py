"""Figure 17: a spoiler audit (issue 29). A scripted game with real `huddle run --json --no-mdns`
nodes on loopback, all with the product's default shield (no --shield flag), and every line any
of them shows checked against the reader's own stream.

    Scripts/bench --only spoilers                          # a 10-minute game (~11 minutes)
    Scripts/bench --only spoilers --quick                  # a 2-minute game (~3 minutes)
    HUDDLE_BENCH_SPOILER_SECONDS=300 Scripts/bench --only spoilers

The script: five viewers whose streams lag the stadium 0, 3, 8, 45 and 150 s (alice, bob, carol,
dave, frank; frank knows he is far behind and sets `/shield 180` as he starts, as the README says).
Moments ("kickoff", "q1 12:00", ...) are marked by each viewer exactly when they reach its stream
(the script knows each lag at every instant), and every viewer chats at random, writing about
what is on its own screen now; now and then one posts the score when a moment reaches it. Along
the way:
- carol takes her only mark back (`/unmark kickoff`) and is unplaced until she marks the next
  moment;
- bob pauses his stream (`/pause`, then `/resume`: his lag grows by the pause);
- dave's stream rebuffers: it freezes 5 s and runs on 5 s further behind. His node cannot know
  until his marks tell it: he marks the next moments on the new lag, the first is set aside as a
  stray, the second confirms the step;
- erin joins at 40 % of the game with a 20 s lag (a late joiner: the room's history, and no
  offset until he marks the next moment that reaches his screen);
- `/history 20` on a console and `huddle history --json` on a node's store, at random moments;
- plays whose names are the play ("touchdown 3"): one viewer marks each when it reaches his
  screen (issue 43), and every other viewer's line naming it is audited like a message.

What is counted: every line a reader could see (a message or score shown, a late joiner's block,
a line of `/history` or `huddle history`, another's mark of a play by its name) whose moment its
stream had not reached yet. A line
written at wall time w by W is of the moment w - lag_W(w); reader R's stream reaches it at the
first t with t - lag_R(t) >= that moment; a line seen more than 250 ms before that is early
(a history line counts as seen when it was asked for). Target: none. Lines shown early to dave
between his rebuffer and the step his node finds are counted apart: no node can know of a
rebuffer before a mark (or sound) tells it. And how long lines waited past their moment (p50/p99),
for pairs of viewers placed with each other and for lines the shield held (reader or writer not
placed): the shield's cost.
"""

from __future__ import annotations

import heapq
import json
import random
import subprocess
import threading
import time
from dataclasses import dataclass, field

from .harness import BenchNode, Table, log, pct, stop_node, temp_dir, wait_until

ROOM = "superbowl"
VIEWERS = [("alice", 0.0), ("bob", 3.0), ("carol", 8.0), ("dave", 45.0), ("frank", 150.0)]
FAR_BEHIND, FAR_SHIELD = "frank", 180  # knows his stream is far behind: /shield 180 at start
LATE_JOINER = ("erin", 20.0)
PAUSER, UNMARKER, REBUFFERED = "bob", "carol", "dave"
REBUFFER_SECONDS = 5.0
TOLERANCE_S = 0.25  # TIMING_TOLERANCE_MS of the tests: a timer firing late, a busy machine
SEED = 17


class Stream:
    """One viewer's screen over wall-clock time: how far it lags the stadium. The base lag, plus
    each freeze (a pause, a rebuffer) from the moment it starts, as it goes on."""

    # How far below and above its lag without drift `reaches` looks, and in how many halvings:
    # a stream whose lag drifts (SoundStream) needs a wider bracket.
    search_below, search_above, search_steps = 0.0, 1.0, 60

    def __init__(self, start: float, lag: float):
        self.start = start
        self.base = lag
        self.freezes: list[tuple[float, float]] = []  # (wall time it starts, seconds)

    def lag(self, t: float) -> float:
        return self.base + sum(min(max(t - at, 0.0), span) for at, span in self.freezes)

    def moment(self, t: float) -> float:
        """The game second on this screen at wall time t (0: the game's start)."""
        return t - self.start - self.lag(t)

    def reaches(self, g: float) -> float:
        """The first wall time at which this screen shows game second g."""
        low = self.start + self.base + g - self.search_below
        high = low + self.search_below + sum(span for _, span in self.freezes) + self.search_above
        for _ in range(self.search_steps):
            middle = (low + high) / 2
            if self.moment(middle) >= g:
                high = middle
            else:
                low = middle
        return high


@dataclass(order=True)
class Action:
    at: float
    order: int
    what: str = field(compare=False)
    run: object = field(compare=False)
    kind: str = field(default="", compare=False)


@dataclass
class Seen:
    """One line a reader could see: who wrote it and when, when the reader could see it."""
    reader: str
    writer: str
    kind: str  # "message", "score", "block" (a late joiner's), "/history", "huddle history"
    sent_at: float  # wall s, the writer's clock
    seen_at: float  # wall s
    text: str


PLAY = "touchdown "  # a play's name: the play itself (not in SpoilerFreeMoment)


def labels(count: int) -> list[str]:
    names = ["kickoff"]
    for k in range(1, count):
        quarter, slot = 1 + (k - 1) // 4, (k - 1) % 4
        names.append(f"q{quarter} {12 - 3 * slot}:00")
    return names


def bench_spoilers(binary: str, seconds: float, table: Table) -> None:
    title = "17. spoiler audit"
    rng = random.Random(SEED)
    base = temp_dir("spoilers")
    step = min(40.0, max(8.0, seconds / 15))
    moments = [5.0 + k * step for k in range(int((seconds - 5.0) // step) + 1)]
    names = labels(len(moments))
    log(f"a {seconds:.0f} s game: {len(moments)} moments {step:.0f} s apart, viewers lag "
        + ", ".join(f"{n} {lag:.0f} s" for n, lag in VIEWERS) + f", {LATE_JOINER[0]} joins at 40 % of it, "
        f"{LATE_JOINER[1]:.0f} s behind; all with the default shield")

    # The room: alice first, the others seeded with her; everyone with the product's shield.
    nodes: dict[str, BenchNode] = {}
    first = BenchNode(binary, "alice", base / "alice", room=ROOM, shield=None)
    nodes["alice"] = first
    for name, _ in VIEWERS[1:]:
        nodes[name] = BenchNode(binary, name, base / name, room=ROOM, peers=[first.address], shield=None)
    try:
        for node in nodes.values():
            for other, _ in VIEWERS:
                if other != node.name:
                    node.wait_for(lambda o, n=other: o["type"] == "join" and o.get("nick") == n, timeout=30,
                                  what=f"{other} joining")
        wait_until(lambda: all(len([p for p in n.status()["peers"] if p["state"] == "alive"]) >= len(VIEWERS) - 1
                               for n in nodes.values()), 30, "everyone alive to everyone", interval=0.3)
        audit(binary, nodes, seconds, moments, names, rng, base, table, title)
    finally:
        for node in list(nodes.values()):
            stop_node(node)


def audit(binary, nodes, seconds, moments, names, rng, base, table, title) -> None:
    start = time.time() + 2.0
    streams = {name: Stream(start, lag) for name, lag in VIEWERS + [LATE_JOINER]}
    step = moments[1] - moments[0] if len(moments) > 1 else seconds

    # The script's events, on wall time.
    pause_at = start + 0.3 * seconds
    pause_for = min(30.0, max(8.0, seconds / 12))
    streams[PAUSER].freezes.append((pause_at, pause_for))
    rebuffer_at = start + 0.55 * seconds
    streams[REBUFFERED].freezes.append((rebuffer_at, REBUFFER_SECONDS))
    join_at = start + 0.4 * seconds
    late, late_lag = LATE_JOINER

    actions: list[Action] = []
    order = [0]

    def plan(at: float, what: str, run, kind: str = "") -> None:
        order[0] += 1
        heapq.heappush(actions, Action(at, order[0], what, run, kind))

    def say(name: str, line: str):
        def run() -> None:
            node = nodes.get(name)
            if node is None or node.process.poll() is not None:
                skipped.append(f"{name}: {line}")
                return
            node.say(line)
        return run

    skipped: list[str] = []

    def confirming(name: str, label: str):
        """A mark that may be asked about first (frank's first puts him 150 s behind alice, past
        what a first mark makes without asking): he presses again when asked, as a person would,
        and the mark is timed at his first press."""
        def run() -> None:
            node = nodes.get(name)
            if node is None:
                return
            since = len(node.outputs)
            node.say(f"/now {label}")

            def confirm() -> None:
                deadline = time.time() + 3
                while time.time() < deadline:
                    if any(o.get("type") == "confirm_mark" and o.get("label") == label for o in list(node.outputs)[since:]):
                        node.say(f"/now {label}")
                        return
                    time.sleep(0.05)
            threading.Thread(target=confirm, daemon=True).start()
        return run
    # frank knows he is far behind: /shield 180 as he sits down.
    plan(start - 1.0, f"{FAR_BEHIND} /shield {FAR_SHIELD}", say(FAR_BEHIND, f"/shield {FAR_SHIELD}"), "shield")
    # Plays by name: 7 s after every fourth moment, one viewer (not frank: his marks would come
    # after the game) marks "touchdown N" when it reaches his screen; nobody else marks it.
    for k, g in enumerate(moments):
        if k % 4 != 1:
            continue
        name = rng.choice([n for n, lag in VIEWERS if n != FAR_BEHIND])
        play = f"{PLAY}{k}"
        plan(streams[name].reaches(g + 7.0), f"{name} /now {play}", say(name, f"/now {play}"), "play")
    # Marks: each viewer at the instant each moment reaches its screen; carol takes her first back.
    unmark_at = None
    for name, _ in VIEWERS + [LATE_JOINER]:
        stream = streams[name]
        for label, g in zip(names, moments):
            at = stream.reaches(g)
            if name == late and at < join_at + 5:
                continue  # before erin is in the room (or has had time to start)
            if name == UNMARKER and label != "kickoff" and unmark_at is None:
                unmark_at = (stream.reaches(moments[0]) + at) / 2
                plan(unmark_at, f"{name} /unmark kickoff", say(name, "/unmark kickoff"), "unmark")
            run = confirming(name, label) if name == FAR_BEHIND else say(name, f"/now {label}")
            plan(at, f"{name} /now {label}", run, "mark")
    # Scores: at every third moment, one viewer posts one when it reaches his screen.
    home = guest = 0
    for k, g in enumerate(moments):
        if k % 3 != 2:
            continue
        if k % 2 == 0:
            home += 7
        else:
            guest += 3
        name = rng.choice([n for n, _ in VIEWERS])
        plan(streams[name].reaches(g) + 0.5, f"{name} /score {home}-{guest}", say(name, f"/score {home}-{guest}"),
             "score")
    # Pause and resume.
    plan(pause_at, f"{PAUSER} /pause", say(PAUSER, "/pause"), "pause")
    plan(pause_at + pause_for, f"{PAUSER} /resume", say(PAUSER, "/resume"), "resume")
    # Chat: each viewer at random moments of its own screen, from just after kickoff to the end.
    chats = 0
    for name, _ in VIEWERS + [LATE_JOINER]:
        stream = streams[name]
        g = moments[0] + 1 if name != late else stream.moment(join_at + 3)
        while True:
            g += rng.expovariate(1 / 5.0)
            if g > seconds:
                break
            at = stream.reaches(g)
            frozen = any(f <= at < f + span for f, span in stream.freezes)
            if frozen:
                continue
            chats += 1
            plan(at, f"{name} chats", say(name, f"{name} {chats}: on my screen, second {g:.1f}"), "chat")
    # The late joiner.
    joined: dict[str, float] = {}

    def start_late() -> None:
        def go() -> None:
            try:
                nodes[late] = BenchNode(binary, late, base / late, room=ROOM, peers=[nodes["alice"].address],
                                        shield=None)
                joined[late] = time.time()
            except Exception as error:  # noqa: BLE001 - reported in the table below
                skipped.append(f"{late} did not start: {error}")
        threading.Thread(target=go, daemon=True).start()

    plan(join_at, f"{late} joins", start_late, "join")
    # History queries at random moments: /history on a console, or `huddle history` on a store.
    queries: list[tuple[str, str, float, list[dict]]] = []  # (reader, kind, asked at, lines)
    console_asked: dict[str, list[float]] = {}
    threads: list[threading.Thread] = []
    query_count = max(8, int(seconds / 10))
    for _ in range(query_count):
        at = start + rng.uniform(10, seconds + 40)
        name = rng.choice([n for n, _ in VIEWERS] + [late])
        if rng.random() < 0.5:
            def console(name=name) -> None:
                node = nodes.get(name)
                if node is None:
                    return
                console_asked.setdefault(name, []).append(time.time())
                node.say("/history 20")
            plan(at, f"{name} /history 20", console, "history")
        else:
            def cli(name=name) -> None:
                node = nodes.get(name)
                if node is None:
                    return

                def go() -> None:
                    asked = time.time()
                    out = subprocess.run([binary, "history", "--room", ROOM, "--json", "--data-dir",
                                          str(node.data_dir)], capture_output=True, text=True, timeout=60)
                    if out.returncode != 0:
                        skipped.append(f"huddle history on {name}: {out.stderr.strip()[:200]}")
                        return
                    queries.append((name, "huddle history", asked, [json.loads(line) for line in
                                                                     out.stdout.splitlines()]))
                thread = threading.Thread(target=go, daemon=True)
                threads.append(thread)
                thread.start()
            plan(at, f"huddle history on {name}", cli, "history")

    last = max(a.at for a in actions)
    # The last line anyone writes reaches the laggiest screen (dave's, 45 s + 5 s rebuffered)
    # that much after the game's end.
    settle_until = max(last + 3, start + seconds + max(lag for _, lag in VIEWERS) + REBUFFER_SECONDS + 5)
    log(f"{len(actions)} scripted actions ({chats} chat lines) over {last - start:.0f} s, then "
        f"{settle_until - last:.0f} s for the last lines to reach the laggiest screen")

    # Run the script. Only writes to stdin happen here: starting erin and `huddle history` run
    # in threads of their own, so no mark waits for them.
    lateness: list[float] = []
    while actions:
        action = heapq.heappop(actions)
        delay = action.at - time.time()
        if delay > 0:
            time.sleep(delay)
        if action.kind in ("mark", "pause", "resume", "unmark"):
            lateness.append((time.time() - action.at) * 1000)
        action.run()
    time.sleep(max(0.0, settle_until - time.time()))
    for thread in threads:
        thread.join(timeout=60)

    analyse(nodes, streams, start, join_at, rebuffer_at, queries, console_asked, lateness, skipped, table, title,
            seconds, step, pause_for)


def analyse(nodes, streams, start, join_at, rebuffer_at, queries, console_asked, lateness, skipped, table, title,
            seconds, step, pause_for) -> None:
    nick_of = {node.id: name for name, node in nodes.items()}
    seen: list[Seen] = []
    for name, node in nodes.items():
        asked = sorted(console_asked.get(name, []))
        for o in list(node.outputs):
            kind = o.get("type")
            if kind == "message":
                writer = nick_of.get(o.get("from"))
                if "shown_at" in o:
                    what = "block" if o.get("earlier") else "message"
                    at = o["shown_at"] / 1000
                else:  # a line of /history: seen as early as the question was asked
                    what = "/history"
                    rx = o["_rx_ns"] / 1e9
                    at = max((q for q in asked if q <= rx), default=rx)
                seen.append(Seen(name, writer, what, o["sent_at"] / 1000, at, o.get("text", "")))
            elif kind == "score" and "shown_at" in o:
                writer = nick_of.get(o.get("by_id"))
                what = "block" if o.get("earlier") else "score"
                seen.append(Seen(name, writer, what, o["sent_at"] / 1000, o["shown_at"] / 1000,
                                 f"score {o['home']}-{o['guest']}"))
    for name, kind, asked, lines in queries:
        for o in lines:
            seen.append(Seen(name, nick_of.get(o.get("from")), kind, o["sent_at"] / 1000, asked, o.get("text", "")))
    # Another's mark of a play, by its name ("touchdown 3"): the name is the play (issue 43).
    for name, node in nodes.items():
        for o in list(node.outputs):
            if o.get("type") == "mark" and o.get("label", "").startswith(PLAY):
                seen.append(Seen(name, nick_of.get(o.get("id")), "name of a play", o["at"] / 1000,
                                 o["_rx_ns"] / 1e9, o["label"]))

    # Each reader's view of who is placed, over time (from its own offsets lines).
    views: dict[str, list[tuple[float, dict]]] = {
        name: [(o["_rx_ns"] / 1e9, o["offsets"]) for o in list(node.outputs) if o.get("type") == "offsets"]
        for name, node in nodes.items()}

    def placed(reader: str, writer: str, t: float) -> bool:
        view = next((offsets for at, offsets in reversed(views.get(reader, [])) if at <= t), {})
        return view.get(reader) is not None and view.get(writer) is not None

    dave = nodes.get(REBUFFERED)
    steps = [o["_rx_ns"] / 1e9 for o in list(dave.outputs) if o.get("type") == "step" and o.get("nick") == REBUFFERED
             and o["_rx_ns"] / 1e9 >= rebuffer_at] if dave else []
    step_found = steps[0] if steps else None
    in_the_dark_until = step_found if step_found is not None else float("inf")
    in_room_from = {name: start for name, _ in VIEWERS}
    if LATE_JOINER[0] in nodes:
        in_room_from[LATE_JOINER[0]] = join_at

    audited = 0
    labels_audited = sum(1 for line in seen if line.kind == "name of a play" and line.writer not in (None, line.reader))
    early: dict[str, list[float]] = {}
    dark_lines = dark_early = 0
    dark_worst = 0.0
    waits: dict[str, list[float]] = {"placed": [], "shielded": []}
    for line in seen:
        if line.writer is None or line.writer == line.reader:
            continue  # one's own words: shown at once, of one's own moment
        moment = streams[line.writer].moment(line.sent_at)
        reaches = streams[line.reader].reaches(moment)
        ahead = reaches - line.seen_at  # > 0: seen before the reader's stream got there
        audited += 1
        if line.reader == REBUFFERED and rebuffer_at <= line.seen_at <= in_the_dark_until:
            dark_lines += 1
            if ahead > TOLERANCE_S:
                dark_early += 1
                dark_worst = max(dark_worst, ahead)
            continue
        if ahead > TOLERANCE_S:
            state = ("reader paused" if line.reader == PAUSER and any(
                f <= line.seen_at < f + span for f, span in streams[PAUSER].freezes)
                else "placed" if placed(line.reader, line.writer, line.seen_at) else "not placed")
            early.setdefault(f"{line.kind}, {state}", []).append(ahead)
            log(f"EARLY by {ahead:.2f} s: {line.reader} saw {line.writer}'s {line.kind} {line.text!r}")
        if line.kind in ("message", "score", "block"):
            # Due when the reader's stream reaches it, but never before it was written, nor
            # before the reader was in the room.
            due = max(reaches, line.sent_at, in_room_from.get(line.reader, start))
            group = "placed" if placed(line.reader, line.writer, due) else "shielded"
            waits[group].append(max(0.0, line.seen_at - due))

    # Every line shown to every reader in the room by the end?
    written = [(name, o) for name, node in nodes.items() for o in list(node.outputs)
               if o.get("type") == "message" and "shown_at" in o and nick_of.get(o.get("from")) == name]
    shown_ids = {name: {o["id"] for o in list(node.outputs) if o.get("type") == "message" and "shown_at" in o}
                 for name, node in nodes.items()}
    missing = sum(1 for writer, o in written for reader in nodes if reader != writer
                  and o["id"] not in shown_ids[reader])

    total_early = sum(len(v) for v in early.values())
    table.add(f"{title}: lines seen before their moment ({audited} audited, {len(nodes)} readers)",
              f"{total_early}", "target 0", total_early == 0)
    table.add("  of them names of plays (another's mark of \"touchdown N\")", f"{labels_audited} audited")
    for cause, values in sorted(early.items()):
        table.add(f"  of which {cause}", f"{len(values)} (up to {max(values):.1f} s early)")
    table.add(f"  {REBUFFERED} rebuffered: lines early between the rebuffer and his step found "
              f"(the node cannot know)", f"{dark_early} of {dark_lines}"
              + (f" (up to {dark_worst:.1f} s)" if dark_early else ""))
    after = [o for o in list(dave.outputs) if o.get("type") == "mark" and o.get("id") == dave.id
             and o["at"] / 1000 > rebuffer_at + 0.5] if dave else []
    before_step = [o for o in after if step_found is None or o["_rx_ns"] / 1e9 <= step_found + 0.5]
    set_aside = sum(1 for o in list(dave.outputs) if o.get("type") == "mark_set_aside"
                    and o.get("nick") == REBUFFERED) if dave else 0
    table.add(f"  {REBUFFERED}'s rebuffer found as a step after",
              (f"{step_found - rebuffer_at:.1f} s, at his mark {len(before_step)} on the new lag"
               if step_found else f"never ({len(after)} marks on the new lag)")
              + f", {set_aside} set aside", f"moments {step:.0f} s apart")
    for group, words in (("placed", "placed pairs"), ("shielded", "held by the shield (a side not placed)")):
        values = waits[group]
        table.add(f"  wait past the moment, {words} (p50/p99/max, {len(values)})",
                  f"{pct(values, 50):.2f} / {pct(values, 99):.2f} / {max(values):.2f} s" if values else "none")
    histories = sum(1 for q in queries) + sum(len(v) for v in console_asked.values())
    table.add("  history asked (/history and huddle history)",
              f"{histories} times, {sum(1 for s in seen if s.kind in ('/history', 'huddle history'))} lines")
    table.add("  lines never shown to a reader in the room by the end", f"{missing}", "0", missing == 0)
    confirms = sum(1 for node in nodes.values() for o in list(node.outputs) if o.get("type") == "confirm_mark")
    unplaced = {name: sum(1 for o in list(node.outputs) if o.get("type") == "unplaced") for name, node in nodes.items()}
    table.note(f"spoiler audit: a {seconds:.0f} s game, moments every {step:.0f} s; lags "
               + ", ".join(f"{n} {lag:.0f} s" for n, lag in VIEWERS + [LATE_JOINER])
               + f"; {PAUSER} paused {pause_for:.0f} s at {0.3 * seconds:.0f} s, {UNMARKER} took back her only mark, "
               f"{REBUFFERED}'s stream froze {REBUFFER_SECONDS:.0f} s at {rebuffer_at - start:.0f} s, "
               f"{LATE_JOINER[0]} joined at {join_at - start:.0f} s. A line is early if seen more than "
               f"{TOLERANCE_S * 1000:.0f} ms before the reader's stream showed its moment (a history line: from "
               f"when it was asked for). Marks, pauses and the unmark were typed p50/p99/max "
               f"{pct(lateness, 50):.0f}/{pct(lateness, 99):.0f}/{max(lateness):.0f} ms after their instant "
               f"(a mark typed late moves that viewer's offset by as much). 'unplaced' lines: {unplaced}; "
               f"wild marks asked about: {confirms} ({FAR_BEHIND}'s first mark, 150 s behind alice, and no other)."
               + (f" Skipped: {skipped[:5]}" if skipped else ""))
    if lateness and max(lateness) > 1000 * TOLERANCE_S:
        table.note("spoiler audit: some marks went out more than 250 ms late (a busy machine): an early line "
                   "of up to that much may be the script's, not the node's")
