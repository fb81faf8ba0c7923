"""The Sunday test's figures (bench part 21; the run is sunday.py): every line any viewer could see,
on every face, against the script's truth; lines lost; sound; the private room on the wire; each
node's memory and CPU; the phones' taps.

The rule is the spoiler audit's (spoilers.py): a line written at wall time w by W is of the moment
w - lag_W(w); reader R's stream reaches it at the first t with t - lag_R(t) >= that moment; seen
more than 250 ms before that, it is early. A line of `/history` or `huddle status` counts as
seen when it was asked for; a line of `huddle history` when the command printed it (a process of
its own, it reads the store once it has started, up to half a second after it was asked on a busy
machine: counted from the ask, a line the node showed on time in that half second was early); a
line on a phone's page when it appeared in the page's DOM. Lines shown early to bob between his rebuffer and the step his node finds are counted
apart: no node can know of a rebuffer before the sound tells it.

A line is lost if a reader in its room never showed it though it was due long enough before the
end: its moment reached the reader's stream, and the reader's shield (90 s, frank's 180 s, or what
the room grew it to) had passed since it was written, 10 s before the script stopped. On a phone
it must be on the page (the DOM) too, whether it came live or after the page woke.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .harness import Table, log, pct
from .sunday_wire import found_in

TOLERANCE_S = 0.25
GRACE_S = 10.0


@dataclass
class Seen:
    reader: str
    writer: str
    face: str  # "json", "block" (a late or restarted node's earlier lines), "/history", "huddle history", "status", "page"
    room: str
    sent_at: float
    seen_at: float
    text: str


def own_lines(run) -> dict[str, dict]:
    """Every line a viewer wrote, by text (texts are unique): writer, room, sent_at, from its own echo."""
    written: dict[str, dict] = {}
    for name, procs in run.processes.items():
        for node in procs:
            for o in list(node.outputs):
                if o.get("type") == "message" and o.get("from") == node.id and "shown_at" in o:
                    written.setdefault(o["text"], {"writer": name, "room": o.get("room"), "sent_at": o["sent_at"] / 1000,
                                                   "to": o.get("to")})
    return written


def readers_of(run, line: dict) -> list[str]:
    room = line["room"] or ""
    if room.startswith("@"):  # a direct message: on the writer's node the room is @THEM
        return [room[1:]]
    members = run.PRIVATE_MEMBERS if room == run.PRIVATE else list(run.HOSTS)
    return [m for m in members if m != line["writer"]]


def audit(run, capture: bytes, table: Table, title: str) -> list[str]:
    """Adds the figures to `table`; returns what must fail a strict run (early, lost, leaked)."""
    from . import sunday as s
    run.PRIVATE_MEMBERS, run.PRIVATE, run.HOSTS = s.PRIVATE_MEMBERS, s.PRIVATE, s.HOSTS
    ids = {node.id: name for name, procs in run.processes.items() for node in procs}
    written = own_lines(run)
    streams = run.streams
    seen: list[Seen] = []
    for name, procs in run.processes.items():
        asked = sorted(run.console_asked.get(name, []))
        for node in procs:
            for o in list(node.outputs):
                if o.get("type") != "message":
                    continue
                writer = ids.get(o.get("from"))
                if writer is None or writer == name:
                    continue
                if "shown_at" in o:
                    face, at = ("block" if o.get("earlier") else "json"), o["shown_at"] / 1000
                else:
                    rx = o["_rx_ns"] / 1e9
                    face, at = "/history", max((q for q in asked if q <= rx), default=rx)
                seen.append(Seen(name, writer, face, o.get("room", ""), o["sent_at"] / 1000, at, o.get("text", "")))
    for name, kind, printed, lines in run.history:
        for o in lines:
            writer = ids.get(o.get("from"))
            if writer and writer != name:
                seen.append(Seen(name, writer, kind, o.get("room", s.ROOM), o["sent_at"] / 1000, printed, o.get("text", "")))
    for name, asked, text in run.statuses:
        for line_text, line in written.items():
            if line["writer"] != name and line_text in text:
                seen.append(Seen(name, line["writer"], "status", line["room"], line["sent_at"], asked, line_text))
    page_seen: dict[str, dict[str, float]] = {}
    for name, phone in run.phones.items():
        first: dict[str, float] = {}
        for event in phone.events:
            for record in event.get("records", []) if event.get("ev") == "dom" else []:
                text = record.get("text", "")
                first[text] = min(first.get(text, float("inf")), record["at"] / 1000)
        page_seen[name] = first
        for text, at in first.items():
            line = written.get(text)
            if line and line["writer"] != name:
                seen.append(Seen(name, line["writer"], "page", line["room"], line["sent_at"], at, text))

    # Who is placed with whom, per reader and room, over time: its own offsets lines, where each
    # member's behind_you_ms is null unless the reader's node can place that member against the
    # reader (an offset_ms alone may be of another group of viewers, placed among themselves).
    views: dict[tuple[str, str], list[tuple[float, dict]]] = {}
    for name, procs in run.processes.items():
        for node in procs:
            for o in list(node.outputs):
                if o.get("type") == "offsets":
                    relative = {m.get("nick"): m.get("behind_you_ms") for m in o.get("members") or []}
                    views.setdefault((name, o.get("room")), []).append((o["_rx_ns"] / 1e9, relative))

    def placed(reader: str, writer: str, room: str, t: float) -> bool:
        if room.startswith("@"):
            room = s.ROOM  # a direct message is held by what the two share: the public room here
        view = next((off for at, off in reversed(views.get((reader, room), [])) if at <= t), {})
        return view.get(writer) is not None

    steps = sorted(o["_rx_ns"] / 1e9 for node in run.processes.get(s.REBUFFERED, []) for o in list(node.outputs)
                   if o.get("type") == "step" and o.get("nick") == s.REBUFFERED and o["_rx_ns"] / 1e9 >= run.rebuffer_at)
    step_found = steps[0] if steps else None
    dark_until = step_found if step_found is not None else float("inf")
    in_room_from = {name: run.start for name in s.HOSTS}
    if s.LATE in run.joined:
        in_room_from[s.LATE] = run.joined[s.LATE]

    early: dict[str, list[Seen]] = {}
    dark = dark_early = 0
    waits: dict[str, list[float]] = {"placed": [], "shielded": []}
    faces: dict[str, int] = {}
    for line in seen:
        moment = streams[line.writer].moment(line.sent_at)
        reaches = streams[line.reader].reaches(moment)
        ahead = reaches - line.seen_at
        faces[line.face] = faces.get(line.face, 0) + 1
        if line.reader == s.REBUFFERED and run.rebuffer_at <= line.seen_at <= dark_until:
            dark += 1
            dark_early += ahead > TOLERANCE_S
            continue
        if ahead > TOLERANCE_S:
            paused = any(f <= line.seen_at < f + span for f, span in streams[line.reader].freezes)
            state = ("reader's stream frozen" if paused else
                     "placed" if placed(line.reader, line.writer, line.room, line.seen_at) else "not placed")
            early.setdefault(f"{line.face}, {state}", []).append(line)
            log(f"EARLY by {ahead:.2f} s: {line.reader} saw {line.writer}'s line on {line.face} ({line.room}) "
                f"{line.text!r}: written {line.sent_at - run.start:.2f} s into the game (moment {moment:.2f}), seen "
                f"{line.seen_at - run.start:.2f} s, {line.reader}'s stream there at {reaches - run.start:.2f} s")
        if line.face == "json":
            due = max(reaches, line.sent_at, in_room_from.get(line.reader, run.start))
            group = "placed" if placed(line.reader, line.writer, line.room, due) else "shielded"
            waits[group].append(max(0.0, line.seen_at - due))
            if group == "placed" and line.seen_at - due > 5:
                log(f"waited {line.seen_at - due:.1f} s past its moment, placed: {line.reader} saw {line.writer}'s "
                    f"{line.text!r} ({line.room}) at {line.seen_at - run.start:.1f} s, due {due - run.start:.1f} s")

    # Lost: due long enough before the end and never shown (on the node; on a phone, the page too).
    # A reader not placed with the writer holds a line the shield from when the slowest stream
    # placed with the writer shows its moment (README); the shield is the reader's (90 s, frank's
    # 180 s) or the room's widest spread between placed streams and 30 s more. Both are taken at
    # their largest over the run, from every node's offsets lines: a bound, never short.
    shields = {name: s.FAR_SHIELD if name == s.FAR_BEHIND else s.DEFAULT_SHIELD for name in s.HOSTS}
    slowest_behind: dict[str, float] = {}
    spread = 0.0
    for (name, room), rows in views.items():
        for _, relative in rows:
            behind = [v / 1000 for v in relative.values() if v is not None]
            if behind:
                spread = max(spread, max(behind) - min(min(behind), 0.0))
                slowest_behind[name] = max(slowest_behind.get(name, 0.0), max(behind))
    for name in shields:
        shields[name] = max(shields[name], spread + 30.0)
    for name, procs in run.processes.items():
        for node in procs:
            for o in list(node.outputs):
                if o.get("type") in ("shield", "shield_grew") and isinstance(o.get("seconds"), (int, float)):
                    shields[name] = max(shields[name], float(o["seconds"]))
    shown_on: dict[str, set[str]] = {}
    for line in seen:
        if line.face in ("json", "block"):
            shown_on.setdefault(line.reader, set()).add(line.text)
    lost: list[str] = []
    lost_page: list[str] = []
    due_count = 0
    for text, line in written.items():
        moment = streams[line["writer"]].moment(line["sent_at"])
        for reader in readers_of(run, line):
            if reader not in streams:
                continue
            held = slowest_behind.get(line["writer"], 0.0) + shields[reader]
            due = max(streams[reader].reaches(moment), line["sent_at"] + held,
                      in_room_from.get(reader, run.start)) + GRACE_S
            if due > run.end:
                continue
            due_count += 1
            if text not in shown_on.get(reader, set()):
                lost.append(f"{reader} never showed {line['writer']}'s {text!r} ({line['room']})")
            if reader in run.phones and text not in page_seen.get(reader, {}):
                lost_page.append(f"{reader}'s page never showed {line['writer']}'s {text!r} ({line['room']})")
    for what in lost + lost_page:
        log(f"LOST: {what}")

    total_early = sum(len(v) for v in early.values())
    readers = len(run.processes)
    table.add(f"{title}: lines seen before their moment, any face ({len(seen)} seen by {readers} viewers)",
              f"{total_early}", "target 0", total_early == 0)
    for cause, lines in sorted(early.items()):
        table.add(f"  of which {cause}", f"{len(lines)} (up to {max(streams[x.reader].reaches(streams[x.writer].moment(x.sent_at)) - x.seen_at for x in lines):.1f} s early)")
    faces.setdefault("status", 0)
    table.add("  seen, by face (lines)", ", ".join(f"{k} {v}" for k, v in sorted(faces.items()))
              + f"; asked: huddle status {len(run.statuses)}, huddle history {len(run.history)}, "
              f"/history {sum(len(v) for v in run.console_asked.values())}")
    table.add(f"  {s.REBUFFERED} rebuffered: early between his rebuffer and the step found (the node cannot know)",
              f"{dark_early} of {dark}; step found "
              + (f"{step_found - run.rebuffer_at:.0f} s after" if step_found else "never (within the run)"))
    table.add(f"  lines lost ({due_count} line-readers due; on a phone, its page too)",
              f"{len(lost)} + {len(lost_page)} on pages", "target 0", not lost and not lost_page)
    for group, words in (("placed", "placed pairs"), ("shielded", "shielded lines")):
        values = waits[group]
        table.add(f"  wait past the moment, {words} (p50/p99, {len(values)})",
                  f"{pct(values, 50):.2f} / {pct(values, 99):.2f} s" if values else "none")

    sound_figures(run, table)

    # The private room on the wire.
    secrets = [t for t, line in written.items() if line["room"] == s.PRIVATE] + [s.PASSPHRASE, s.SECRET]
    hits = found_in(capture, secrets)
    leaked = sum(len(t.encode()) * n for t, n in hits.items())
    public = [t for t, line in written.items() if line["room"] == s.ROOM][:20]
    control = sum(found_in(capture, public).values())
    table.add(f"  private room's text in the capture of every wire ({len(capture) / 1e6:.1f} MB, "
              f"{len(secrets) - 2} private lines + passphrase searched)",
              f"{leaked} bytes", "target 0 (public lines found: "
              f"{control} of {len(public)}, the capture's own check)", leaked == 0 and control > 0)

    # Memory and CPU.
    for name in s.HOSTS:
        cpu = sum(run.cpu.get(name, {}).values())
        lived = sum(((end or run.end) - begin) for begin, end in run.alive_since.get(name, []))
        table.add(f"  {name}: peak private memory (RssAnon), CPU",
                  f"{run.peak_anon.get(name, 0) / 1024:.1f} MB, {cpu:.1f} s ({100 * cpu / max(lived, 1):.1f} % of a core)")

    # The phones' taps.
    errors, late = [], []
    for name, phone in run.phones.items():
        marks = {o["label"]: o["at"] for node in run.processes[name] for o in list(node.outputs)
                 if o.get("type") == "mark" and o.get("id") == node.id}
        for event in phone.events:
            if event.get("ev") == "tap" and event.get("how") in ("suggested", "now") and event["label"] in marks:
                errors.append(marks[event["label"]] - event["at"])
                if event.get("planned"):
                    late.append(event["at"] - event["planned"])
    typed = sum(1 for p in run.phones.values() for e in p.events if e.get("ev") == "tap" and e.get("how") == "typed")
    table.add(f"  phone: tap -> mark's time on its node (p50/p99/max of |err|, {len(errors)} taps; {typed} typed)",
              (f"{pct([abs(e) for e in errors], 50):.0f} / {pct([abs(e) for e in errors], 99):.0f} / "
               f"{max(abs(e) for e in errors):.0f} ms" if errors else "none"))
    if late:
        table.add("  phone: the tap's own lateness after its instant (the script and Selenium)",
                  f"p50 {pct(late, 50):.0f} ms, max {max(late):.0f} ms")
    phone_errors = [e for p in run.phones.values() for e in p.events if e.get("ev") == "error"]
    table.add("  the stranger", json.dumps(run.stranger) if run.stranger else "did not run")
    lateness = run.lateness
    table.note(f"sunday: lags (behind alice's stream, s) "
               + ", ".join(f"{n} {run.streams[n].lag(run.start + 30):.1f}" for n in s.HOSTS)
               + f"; events at game seconds " + ", ".join(f"{k} {v - run.start:.0f}" for k, v in run.events.items())
               + (f"; scripted actions late p50/p99/max {pct(lateness, 50):.0f}/{pct(lateness, 99):.0f}/"
                  f"{max(lateness):.0f} ms" if lateness else "")
               + (f"; skipped: {run.skipped[:6]}" if run.skipped else "")
               + (f"; phone errors: {[e.get('what') for e in phone_errors][:4]}" if phone_errors else ""))
    placed_waits, shielded_waits = waits["placed"], waits["shielded"]
    sound_first = getattr(run, "sound_first", None)
    summary = (f"early {total_early}, lost {len(lost) + len(lost_page)}, private bytes on the wire {leaked}; "
               f"sound placed in " + (f"{sound_first:.1f} s" if sound_first is not None else "never")
               + (f"; wait p99 placed {pct(placed_waits, 99):.2f} s" if placed_waits else "")
               + (f", shielded {pct(shielded_waits, 99):.0f} s" if shielded_waits else "")
               + (f"; tap error p99 {pct([abs(e) for e in errors], 99):.0f} ms" if errors else "")
               + f"; peak private memory {max(run.peak_anon.values(), default=0) / 1024:.0f} MB")
    table.add(f"{title}: summary", summary, "0 early, 0 lost, 0 bytes", not total_early and not lost
              and not lost_page and not leaked and control > 0)
    bad = []
    if total_early:
        bad.append(f"{total_early} lines seen early")
    if lost or lost_page:
        bad.append(f"{len(lost)} lines lost, {len(lost_page)} on pages")
    if leaked or not control:
        bad.append(f"{leaked} bytes of the private room on the wire" if leaked else "the capture holds nothing")
    return bad


def sound_figures(run, table: Table) -> None:
    """Offsets from sound against the truth, as alice's and bob's nodes print them; room sound."""
    from . import sunday as s
    truth_at = lambda t: (run.streams["bob"].lag(t) - run.streams["alice"].lag(t)) * 1000  # noqa: E731
    sound_from = max(run.listening_started.values())
    for name in s.LISTENERS:
        rows = [(o["_rx_ns"] / 1e9, o["offsets"]) for node in run.processes[name] for o in list(node.outputs)
                if o.get("type") == "offsets" and o.get("room") == s.ROOM]
        good = [(t, off["bob"] - off["alice"] - truth_at(t)) for t, off in rows
                if off.get("bob") is not None and off.get("alice") is not None]
        first = next((t for t, err in good if abs(err) <= 20 and t < run.rebuffer_at), None)
        after = next((t for t, err in good if abs(err) <= 20 and t > run.rebuffer_at + s.REBUFFER_SECONDS), None)
        last = good[-1][1] if good else None
        if name == "alice" and first is not None:
            run.sound_first = first - sound_from
        table.add(f"  sound on {name}'s node: bob on alice within 20 ms of the truth, after the later sound started",
                  (f"{first - sound_from:.1f} s" if first else "never")
                  + (f"; after the rebuffer {after - run.rebuffer_at:.0f} s" if after else "; rebuffer: never")
                  + (f"; last error {last:.0f} ms" if last is not None else ""),
                  "<= 15 s", first is not None and first - sound_from <= 15)
    received: dict[str, float] = {}
    for name in s.LISTENERS:
        sharing = (run.listening_status.get(name) or {}).get("sharing") or {}
        for member, secs in (sharing.get("shared_with") or {}).items():
            received[member] = received.get(member, 0.0) + float(secs)
    table.add("  room sound each member received (s, from alice's and bob's nodes)",
              ", ".join(f"{m} {received.get(m, 0.0):.0f}" for m in s.HOSTS))
