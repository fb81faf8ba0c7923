"""`/listen` and `/listen off` typed into a running node that records a real input: the default
source of a private PulseAudio server (a null sink's monitor, as in test_listening.py). What a
user would notice is checked where it shows: the node's `listening` lines, `huddle status`'s
`listening` and its sound-window counters, and whether the sound server has a recording stream
from the node open at all (`pactl list source-outputs`: the microphone in use, or not).

A second node, bob, plays a WAV file as his microphone (`--audio-file`) and sends alice a sound
window every 2 s whatever she does. alice counts each one, as taken (`sound_windows_in`) while
she listens and as dropped (`not_listening`) while she does not: those arrivals are the clock the
negative checks wait on (three of bob's windows span at least 4 s, two of alice's own windows),
never a sleep."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from huddletest.audio_corpus import write_pcm16
from huddletest.polling import poll
from huddletest.skips import cannot_run_here

WINDOW_S = 2  # a sound window is 2 s of sound (docs/AUDIO.md)


class SoundServer:
    """A private pulseaudio with one null sink, `screen`, whose monitor is the default input of
    every node started while it runs (PULSE_SERVER, PULSE_SOURCE)."""

    def __init__(self, runtime: Path):
        pulseaudio, self.pactl = shutil.which("pulseaudio"), shutil.which("pactl")
        if not pulseaudio or not self.pactl:
            cannot_run_here("needs pulseaudio and pactl (Scripts/bootstrap --test installs pulseaudio, pulseaudio-utils)",
                            "sound")
        runtime.mkdir()
        self.socket = runtime / "native"
        self.env = {"HOME": str(runtime), "XDG_RUNTIME_DIR": str(runtime), "PATH": "/usr/bin:/bin"}
        self.process = subprocess.Popen(
            [pulseaudio, "--daemonize=no", "-n", "--exit-idle-time=-1", "--disallow-exit", "--use-pid-file=no",
             "--load=module-null-sink sink_name=screen",
             f"--load=module-native-protocol-unix socket={self.socket} auth-anonymous=1"],
            env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        poll(lambda: self.socket.exists(), timeout=10, interval=0.05, what="pulseaudio's socket")

    def recording_streams(self) -> list[str]:
        """The streams recording from this server now, one line each (`pactl list short
        source-outputs`): the node's microphone while it listens, nothing once it stopped."""
        out = subprocess.run([self.pactl, f"--server=unix:{self.socket}", "list", "short", "source-outputs"],
                             env=self.env, capture_output=True, text=True, timeout=10)
        assert out.returncode == 0, out.stderr
        return [line for line in out.stdout.splitlines() if line.strip()]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


@pytest.fixture
def sound(tmp_path, monkeypatch):
    server = SoundServer(tmp_path / "pulse")
    monkeypatch.setenv("PULSE_SERVER", f"unix:{server.socket}")
    monkeypatch.setenv("PULSE_SOURCE", "screen.monitor")
    yield server
    server.stop()


def noise_wav(path: Path, seconds: float, rate: int = 16_000) -> Path:
    """Seeded white noise, 16-bit mono: a sound that sends windows, made without any tool."""
    rng = random.Random(7)
    return write_pcm16(path, (rng.randint(-8000, 8000) for _ in range(int(seconds * rate))), rate)


@pytest.fixture
def alice_and_bob(lan, sound, tmp_path):
    """alice, not listening yet, on the private sound server; bob, who hears a file and sends
    alice a window every 2 s, in her room."""
    alice = lan("alice")
    bob = lan("bob", peers=[alice.address], extra=["--audio-file", str(noise_wav(tmp_path / "bob.wav", 150))])
    alice.wait_for(lambda o: o["type"] == "join" and o["nick"] == "bob", what="bob's join")
    bob.wait_for(lambda o: o["type"] == "listening" and "source" in o, what="bob hearing his file")
    return alice, bob


def counters(node) -> dict:
    return node.status()["counters"]


def windows_from_bob(node) -> int:
    """bob's windows that reached `node`, taken or dropped because it was not listening."""
    now = counters(node)
    return now["sound_windows_in"] + now["drops"].get("not_listening", 0)


def after_bobs_next_windows(alice, count: int = 3) -> None:
    """Returns once `count` more of bob's windows have reached alice: at least (count - 1) * 2 s
    later, with alice's node reading the network all along."""
    start = windows_from_bob(alice)
    poll(lambda: windows_from_bob(alice) >= start + count, timeout=(count + 2) * WINDOW_S + 10, interval=0.2,
         what=f"{count} more of bob's sound windows at alice")


def started(o) -> bool:
    return o["type"] == "listening" and o.get("source") == "device"


def stopped(o) -> bool:
    return o["type"] == "listening" and o.get("state") == "stopped"


def listening_lines(node) -> list[dict]:
    return [o for o in list(node.outputs) if o["type"] == "listening"]


def assert_alive(node) -> None:
    assert node.process.poll() is None, f"{node.name} exited {node.process.returncode}: " \
                                        f"{node.stderr_path.read_text()[-2000:]}"
    node.say("/who")
    node.wait_for(lambda o: o["type"] == "info" and "bob" in o["message"], what="/who answered")


def assert_listening(alice, sound) -> None:
    """alice records the device (exactly one stream) and sends bob her sound again."""
    status = alice.status()
    assert status.get("listening") and status["listening"]["source"] == "device", status.get("listening")
    streams = poll(lambda: sound.recording_streams(), timeout=10, what="alice's recording stream")
    assert len(streams) == 1, f"alice records {len(streams)} streams: {streams}"
    sent = counters(alice)["sound_windows_out"]
    poll(lambda: counters(alice)["sound_windows_out"] > sent, timeout=3 * WINDOW_S + 10, interval=0.2,
         what="alice's next sound window to bob")


def test_listen_off_stops_the_microphone_and_the_windows_and_listen_starts_again(alice_and_bob, sound):
    alice, bob = alice_and_bob
    assert sound.recording_streams() == [], "nothing records before /listen"

    alice.say("/listen")
    alice.wait_for(started, what="listening to the device")
    assert_listening(alice, sound)

    alice.say("/listen off")
    line = alice.wait_for(stopped, what="stopped listening")
    assert line["reason"] == "/listen off", line
    assert not alice.status().get("listening"), alice.status()["listening"]
    poll(lambda: sound.recording_streams() == [], timeout=10, what="alice's recording stream closed")
    sent = counters(alice)["sound_windows_out"]
    # Two of alice's windows' worth of time, proven by bob's windows arriving (and dropped: she
    # does not listen): no window of hers went out, and the microphone stayed closed.
    after_bobs_next_windows(alice)
    assert counters(alice)["sound_windows_out"] == sent, "alice kept sending sound windows after /listen off"
    assert counters(alice)["drops"].get("not_listening", 0) >= 3
    assert sound.recording_streams() == []
    assert len([o for o in listening_lines(alice) if started(o)]) == 1, listening_lines(alice)

    alice.say("/listen")
    alice.wait_for(started, what="listening again")
    assert_listening(alice, sound)
    assert_alive(alice)


def test_listen_off_then_listen_at_once_ends_listening(alice_and_bob, sound):
    """Listening, then `/listen off` and `/listen` in one go: listening, on one stream."""
    alice, bob = alice_and_bob
    alice.say("/listen")
    alice.wait_for(started, what="listening to the device")
    assert_listening(alice, sound)

    alice.process.stdin.write("/listen off\n/listen\n")
    alice.process.stdin.flush()
    after_bobs_next_windows(alice)
    assert_listening(alice, sound)
    assert listening_lines(alice)[-1].get("source") == "device", listening_lines(alice)
    assert_alive(alice)


def test_listen_off_listen_typed_at_once_ends_listening(alice_and_bob, sound):
    """`/listen`, `/listen off`, `/listen` in one go, before the first has opened the device:
    the node ends listening (the last command), on one recording stream, not two."""
    alice, bob = alice_and_bob
    alice.process.stdin.write("/listen\n/listen off\n/listen\n")
    alice.process.stdin.flush()
    alice.wait_for(started, what="listening to the device")
    after_bobs_next_windows(alice)
    assert_listening(alice, sound)
    assert listening_lines(alice)[-1].get("source") == "device", listening_lines(alice)
    assert_alive(alice)


def test_listen_then_listen_off_at_once_ends_not_listening(alice_and_bob, sound):
    """`/listen` then `/listen off` in one go (a script, or a fast hand while the device takes
    its time to open): the node ends not listening, with no recording stream open."""
    alice, bob = alice_and_bob
    alice.process.stdin.write("/listen\n/listen off\n")
    alice.process.stdin.flush()
    # Long enough for the device to have opened twice over (it takes 20 ms to 2 s here).
    after_bobs_next_windows(alice)
    assert_alive(alice)
    status = alice.status()
    assert not status.get("listening"), (
        f"alice listens after `/listen off` was the last command: {status['listening']}; "
        f"her lines: {[o for o in alice.outputs if o['type'] in ('listening', 'info')]}")
    assert sound.recording_streams() == [], "alice's microphone is still open"
    # The node may have opened the device before it read the second line: then it says it
    # listened and stopped, in that order. What it said last is that it is not listening.
    lines = listening_lines(alice)
    assert not lines or not started(lines[-1]), lines
