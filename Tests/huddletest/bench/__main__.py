"""Huddle's benchmarks, each figure printed beside its target.

    Scripts/bench            # builds the release binary, then ~75 s of measuring
    Scripts/bench --quick    # smaller counts (~40 s once built)
    Scripts/bench --only discovery   # one part (latency, holdback, ingest, serf, discovery, marks, loss, attacks, private,
                                     # flap, console, audio, homes, machine, listening, spoilers, privacy, web, pictures,
                                     # sunday)
    HUDDLE_BIN=/path/to/huddle Scripts/bench   # skip the build, use that binary

Figures (BENCHMARKS.md says how each is measured and what it does and doesn't show):
  1. delivery latency send -> shown, 5 nodes, no hold-back (p50/p99/max), beside the machine's floor: the
     same way taken by a bare pipeline of five C processes (read, sign, send; receive, verify, print)
  2. hold-back release error |shown - intended|, 3 calibrated nodes (p50/p99/max)
  3. ingest rate: a fresh node pulling a room's history (verified + stored) from a peer
  4. idle RSS per node (and, for comparison, per Serf agent)
  5. Serf comparison: a user event reaching all 4 other agents vs a Huddle message shown
     on all 4 other nodes
  6. discovery over mDNS on a simulated LAN (Scripts/lan, root only): a new node on h1 listed by
     the node on h2, beside avahi-publish on h1 -> a running avahi-browse on h2 resolving it
  7. keypress -> mark: Enter pressed in a tmux pane running the interactive console at a known
     time, against the mark's `at` a peer receives; one-key (Enter on an empty line) and typed
     (/now LABEL, Enter) side by side (needs tmux)
  8. delivery on a lossy LAN (Scripts/lan, root only): three hosts that each drop 20 % of the
     packets they receive; 100 messages from h1, 100 ms apart, and 30 lone messages 1 s apart;
     sent -> shown on h2 and h3 (p50/p99/max), and how many were missing or shown twice
  9. chat delivery alice -> bob (p50/p99/max, 50 messages 100 ms apart) with no attack, under an
     amplification flood (datagrams of 300 copies of one event + 1 badly signed one) and under a
     slowloris on bob's sync port (32 connections trickling 1 byte/s), and a late joiner's time to
     show bob's history with and without the slowloris, and under a UDP flood from one address
 10. figure 3 in a private room: every event sealed by the source and opened by the sink
 11. peers that flap: false "not answering" / "gone" per node-hour among 4 nodes on loopback while
     two busy loops hog both cores (5 minutes; --quick 1 minute; HUDDLE_BENCH_FLAP_SECONDS=N),
     then a SIGKILLed node's time to be reported gone by the other three, the loops still running;
     then the same on a simulated LAN of 3 hosts at 20 % loss (root only; its own bed, tag lg)
 12. the console on long lines: a 4,000-byte paste, then keys moving across and editing it, each
     timed from its write to the node's pty until the redrawn row comes back (target p99 <= 5 ms a
     key); and a peer's probe -> ack round trips to that node, idle and while 64 KiB pastes and
     64 KiB of typing arrive (its peers must never see it as not answering)
 13. offsets from sound: `huddle align` on viewer copies of broadcasts made on this machine (espeak-ng, sox)
     a random 0-90 s apart at 20, 10 and 5 dB with room talk, reverb, band limits, crosstalk, 44.1/48 kHz and
     +-100 ppm drift (50 trials a row; --quick 10), beside plain cross-correlation and the thumb model; false
     matches over unrelated pairs, seconds of sound until a reliable match, a re-check from 4 s of B's sound
     (answered, wrong, and false matches over the unrelated pairs), CPU, bytes a second. The corpus
     is cached in .build/audio-corpus/bench (the first full run spends ~10 minutes making it)
 14. friends in two homes (root only; huddletest.homes, its own bed huddle-bh-*): four nodes in route, nat and
     strict mode; sent -> shown between the two nodes that do not bridge the homes (p50/p99/max, target p99 <=
     50 ms), missing and doubled

Parts 1-5 use only loopback; their nodes run with --no-mdns and Serf without -discover, so
nothing multicasts. Part 6 multicasts only inside the network namespaces of its own bed
(HUDDLE_LAN_TAG=bench Scripts/lan up 3), which it tears down again; without root, or where
namespaces cannot be made, it prints a skip line. Every process started here is stopped (by pid)
and every temp dir removed, also on failure or Ctrl-C. This is not a test: it exits 0 when a
target is missed (marked MISSED), and non-zero only when a measurement could not be made at all.
 15. the node machine (issue 18), before and after in one run (HUDDLE_BIN_BEFORE=old huddle):
     delivery send -> shown among 5 nodes, quiet and busy room, on a fast disk and with every
     fsync 50 ms longer; ingest rate of each (only with --only machine)
 16. listening nodes: three nodes on viewers' copies of one 300 s broadcast (--audio-file, nobody marks)
     and one not listening; seconds of sound until placed, hold-back error (p50/p99/max), CPU and RSS of
     a listening node against the one that does not listen, bytes a second of sound windows per peer;
     with the default re-checks, how soon bob's 2 s stall at his second 150 is found, and how much room
     sound left each node once placed (seconds an hour) and reached the one not listening
 17. spoiler audit (issue 29): a scripted game (10 minutes; --quick 2; HUDDLE_BENCH_SPOILER_SECONDS=N) with
     four viewers lagging 0, 3, 8 and 45 s on the default shield, a late joiner, an unmark, a pause, a
     5 s rebuffer and history asked at random moments; every line any reader could see before its
     moment on that reader's stream (target 0, by cause; the rebuffered viewer's lines before his step
     is found apart), and how long lines waited past their moment (p50/p99), placed and shielded
 18. what sound features reveal (issue 30): ten spoken words recognised by classifiers trained on other
     voices, from exactly what a peer reads in a window it is sent (`huddle align --dump-features`), in a
     quiet room and under a TV at 10 and 0 dB, and over an hour from all a room member is sent at worst
     (3,000 words; --quick 600; needs scikit-learn: Tests/bench-requirements.txt)

 19. the phone's page (issue 33), in headless Chromium emulating a phone: page load to the first message
     shown, a tap on Now to the mark's time on the node, Enter on the phone to shown on a peer (p50/p99),
     the node's memory with 3 devices attached against none
 20. pictures (issue 44), on loopback: a 1 MB photo from the sender's own line to all 5 peers holding it
     (target 300 ms), one picture of the 16 MiB cap to one peer (throughput, target 50 MB/s), the sender's
     and a peer's private memory while 5 pictures of 3 MB go to 5 peers, bytes on a peer's disk per byte
 21. the Sunday test (issue 46; root only; only with --only sunday): one scripted game across every feature
     on the two-homes bed (its own tag, sn): six viewers (four laptops, two listening; two phones' pages in
     headless Chromium), a late joiner, a rebuffer, a pause, a phone asleep, a node SIGKILLed and restarted,
     a stranger's floods, a private room, direct messages; every line any viewer could see on any face
     (JSON, page, /history, huddle history, huddle status) against his own stream (target 0 early, 0 lost),
     offsets from sound, waits past the moment, room sound, the private room in a capture of every wire
     (0 bytes), each node's memory and CPU, the phones' tap -> mark error. A 60-minute game
     (HUDDLE_BENCH_SUNDAY_SECONDS=N); --quick 90 s, under 3 minutes in all. The one part whose missed
     targets fail the run: --quick (and HUDDLE_BENCH_SUNDAY_STRICT=1) exits 1 on any early, lost or leaked line

Every node of every part but 17 runs with --shield off (huddletest.node.TEST_SHIELD): those parts
measure delivery between viewers who are not placed, which the default shield would hold 90 s.
"""

from __future__ import annotations

import argparse
import atexit
import os
import signal
import subprocess
import sys
import time

from .. import ROOT
from ..binary import built_binary
from . import harness
from .attacks import bench_attacks
from .audio import bench_audio
from .console import bench_console
from .discovery import bench_discovery
from .flap import bench_flap, bench_flap_lan
from .harness import LIVE_NODES, Table, cleanup, log, stop_node
from .holdback import bench_holdback
from .homes import bench_homes
from .ingest import bench_ingest
from .latency import bench_latency
from .listening import bench_listening
from .machine import bench_machine
from .loss import bench_loss
from .marks import bench_marks
from .serf import bench_serf
from .pictures import bench_pictures
from .privacy import bench_privacy
from .spoilers import bench_spoilers
from .strangers import bench_strangers
from .sunday import bench_sunday
from .web import bench_web


def on_signal(signum, _frame):
    raise SystemExit(128 + signum)


def build_binary() -> str:
    explicit = os.environ.get("HUDDLE_BIN")
    if explicit:
        log(f"using HUDDLE_BIN={explicit}")
        return explicit
    log("building: swift build -c release --product huddle")
    started = time.monotonic()
    built = subprocess.run(["swift", "build", "-c", "release", "--product", "huddle"], cwd=ROOT,
                           capture_output=True, text=True, timeout=1800)
    if built.returncode != 0:
        sys.stderr.write(built.stdout[-4000:] + built.stderr[-4000:])
        raise SystemExit("bench: the release build failed (output above)")
    binary = built_binary("release")
    log(f"built in {time.monotonic() - started:.0f} s: {binary}")
    return binary


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller counts (latency 50, hold-back 30, ingest 2,000)")
    parser.add_argument("--keep", action="store_true", help="keep the temp dirs (node logs, stores) for a look")
    parser.add_argument("--only", choices=["latency", "holdback", "ingest", "serf", "discovery", "marks", "loss", "attacks", "private",
                                           "flap", "console", "audio", "homes", "machine", "listening", "spoilers",
                                           "privacy", "web", "pictures", "sunday"],
                        action="append",
                        help="run only these parts (repeatable); the Serf comparison needs latency for Huddle's side")
    args = parser.parse_args()
    harness.KEEP_TEMP = args.keep

    binary = build_binary()
    if not os.access(binary, os.X_OK):
        raise SystemExit(f"bench: {binary} is not an executable")
    os.environ["HUDDLE_BIN"] = binary  # node.Node.status() runs `huddle status` from it
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()

    quick = args.quick
    latency_n = 50 if quick else 200
    holdback_n = 30 if quick else 100
    ingest_n = 2_000 if quick else 20_000
    serf_n = 10 if quick else 20
    discovery_n = 3 if quick else 8
    marks_n = 10 if quick else 30
    loss_stream, loss_lone = (50, 10) if quick else (100, 30)
    flap_seconds = float(os.environ.get("HUDDLE_BENCH_FLAP_SECONDS", 60 if quick else 300))
    audio_n = int(os.environ.get("HUDDLE_BENCH_AUDIO_TRIALS", 10 if quick else 50))
    spoiler_seconds = float(os.environ.get("HUDDLE_BENCH_SPOILER_SECONDS", 120 if quick else 600))
    homes_n = 20 if quick else 50
    sunday_seconds = float(os.environ.get("HUDDLE_BENCH_SUNDAY_SECONDS", 90 if quick else 3600))
    parts = args.only or ["latency", "holdback", "ingest", "serf", "discovery", "marks", "loss", "attacks", "private",
                          "flap", "console", "audio", "homes", "listening", "spoilers", "privacy", "web", "pictures"]
    console_rounds = 5 if quick else 20

    table = Table()
    huddle_all: dict = {}
    started = time.monotonic()
    runs = {
        "latency": ("1. delivery latency + idle RSS", lambda: bench_latency(binary, latency_n, 0.02, table, huddle_all)),
        "holdback": ("2. hold-back release error", lambda: bench_holdback(binary, holdback_n, 0.02, table)),
        "ingest": ("3. ingest", lambda: bench_ingest(binary, ingest_n, holdback_n, table)),
        "serf": ("5. Serf comparison", lambda: bench_serf(serf_n, 0.3, table, huddle_all)),
        "discovery": ("6. discovery over mDNS (simulated LAN)", lambda: bench_discovery(binary, discovery_n, table)),
        "marks": ("7. keypress -> mark", lambda: bench_marks(binary, marks_n, table)),
        "loss": ("8. delivery on a lossy LAN", lambda: bench_loss(binary, loss_stream, loss_lone, table)),
        "attacks": ("9. delivery under attack", lambda: (bench_attacks(binary, 50, 0.1, 200, table),
                                                         bench_strangers(binary, 50, 0.1, table))),
        "private": ("10. ingest in a private room",
                    lambda: bench_ingest(binary, ingest_n, holdback_n, table, passphrase="blue 42 hut hut")),
        "flap": ("11. peers that flap: a busy machine, a lossy LAN",
                 lambda: (bench_flap(binary, flap_seconds, table), bench_flap_lan(binary, flap_seconds, table))),
        "console": ("12. the console on long lines", lambda: bench_console(binary, console_rounds, table)),
        "audio": ("13. offsets from sound", lambda: bench_audio(binary, audio_n, table)),
        "homes": ("14. friends in two homes", lambda: bench_homes(binary, homes_n, table)),
        "listening": ("16. listening nodes", lambda: bench_listening(binary, 20 if quick else 40, table)),
        "spoilers": ("17. spoiler audit", lambda: bench_spoilers(binary, spoiler_seconds, table)),
        "privacy": ("18. what sound features reveal", lambda: bench_privacy(binary, quick, table)),
        "web": ("19. the phone's page", lambda: bench_web(binary, 10 if quick else 20, table)),
        "pictures": ("20. pictures", lambda: bench_pictures(binary, 5 if quick else 20, table)),
        "sunday": ("21. the Sunday test", lambda: bench_sunday(binary, sunday_seconds, quick, table)),
        "machine": ("15. the node machine, before and after",
                    lambda: bench_machine(binary, os.environ.get("HUDDLE_BIN_BEFORE"), latency_n, ingest_n, table)),
    }
    for key in ["latency", "holdback", "ingest", "serf", "discovery", "marks", "loss", "attacks", "private", "flap",
                "console", "audio", "homes", "machine", "listening", "spoilers", "privacy", "web", "pictures", "sunday"]:
        if key not in parts:
            continue
        title, run = runs[key]
        log(f"--- {title}")
        try:
            run()
        except (Exception, AssertionError) as error:  # noqa: B014 - AssertionError from Node.wait_for
            table.fail(title, f"{type(error).__name__}: {error}"[:1500])
        cleanup_between = [n for n in LIVE_NODES]
        for n in cleanup_between:
            stop_node(n)

    cpu = os.cpu_count()
    model = ""
    try:
        model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                      if line.startswith("model name")), "")
    except OSError:
        pass
    print(f"\nHuddle benchmarks (loopback; discovery on a simulated LAN): {version or binary}, {cpu} CPUs ({model}), "
          f"{'quick' if quick else 'full'} run, {time.monotonic() - started:.0f} s")
    table.print()
    return 1 if table.failures else 0


if __name__ == "__main__":
    atexit.register(cleanup)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    try:
        code = main()
    except KeyboardInterrupt:
        code = 130
    finally:
        cleanup()
    sys.exit(code)
