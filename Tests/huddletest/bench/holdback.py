"""Figure 2: hold-back release error, |shown - intended| for messages three calibrated nodes
hold back 1-2 s (p50/p99/max)."""

from __future__ import annotations

import time

from .harness import Table, log, pct, start_mesh, stop_node, temp_dir


def bench_holdback(binary: str, count: int, spacing: float, table: Table) -> None:
    base = temp_dir("holdback")
    names = ["ahead", "mid", "behind"]
    nodes = start_mesh(binary, names, base)
    ahead, mid, behind = nodes
    try:
        log("calibrating: mid marks 1 s and behind 2 s after ahead (real sleeps)")
        start = time.monotonic()

        def at(seconds: float) -> None:
            time.sleep(max(0.0, start + seconds - time.monotonic()))

        ahead.say("/now kickoff")
        at(1.0)
        mid.say("/now kickoff")
        at(2.0)
        behind.say("/now kickoff")

        def settled(o):
            offs = o.get("offsets", {})
            return o["type"] == "offsets" and all(offs.get(n) is not None for n in names)

        views = {n.name: n.wait_for(settled, timeout=20, what="all three calibrated")["offsets"] for n in nodes}
        # The latest offsets each node printed (later lines may refine the first settled one).
        time.sleep(0.5)
        for n in nodes:
            later = [o for o in list(n.outputs) if o.get("type") == "offsets" and settled(o)]
            if later:
                views[n.name] = later[-1]["offsets"]
        offsets = views["ahead"]
        if any(v != offsets for v in views.values()):
            table.note(f"hold-back: nodes disagree on offsets: {views}")
        table.note("hold-back offsets (ms, from the nodes' own `offsets` output): "
                   + ", ".join(f"{k} {v:+d}" for k, v in offsets.items()))

        log(f"ahead sends {count} messages, {spacing * 1000:.0f} ms apart; they are held ~1 s and ~2 s")
        for i in range(count):
            ahead.say(f"hb {i}")
            time.sleep(spacing)
        last = f"hb {count - 1}"
        wait_s = 10 + (max(offsets.values()) - min(offsets.values())) / 1000
        for r in (mid, behind):
            r.message(last, timeout=wait_s)

        sent = {o["text"]: o for o in ahead.messages() if o["text"].startswith("hb ")}
        errors: list[int] = []
        held: list[int] = []
        missing = 0
        for r in (mid, behind):
            view = views[r.name]
            shown = {o["text"]: o for o in r.messages() if o["text"].startswith("hb ")}
            for text, s in sent.items():
                if text not in shown:
                    missing += 1
                    continue
                intended = s["sent_at"] - view["ahead"] + view[r.name]
                errors.append(abs(shown[text]["shown_at"] - intended))
                held.append(shown[text]["held_ms"])
        if not errors:
            raise RuntimeError("no held-back message was shown")
        table.add("hold-back release error p50 (3 nodes, held 1-2 s)", f"{pct(errors, 50):.0f} ms")
        table.add("hold-back release error p99 (3 nodes, held 1-2 s)", f"{pct(errors, 99):.0f} ms",
                  "target <= 20 ms", pct(errors, 99) <= 20 and missing == 0)
        table.add("hold-back release error max (3 nodes, held 1-2 s)", f"{max(errors):.0f} ms")
        table.note(f"hold-back: {len(sent)} messages x 2 readers = {len(errors)} samples, {missing} missing; "
                   f"held_ms ranged {min(held)}-{max(held)}; intended = sent_at - offset(sender) + "
                   f"offset(reader), whole ms")
    finally:
        for n in nodes:
            stop_node(n)
