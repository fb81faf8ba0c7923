"""Test audio made on this machine, never downloaded: broadcasts of a made-up game and the copies
of them that viewers' microphones hear, each with a known delay (Scripts/audio-corpus, the audio
bench, the alignment tests).

A *broadcast* is a game bed (crowd noise that swells, referee whistles, a music bed) under
espeak-ng commentary. Two broadcasts of one game over different commentary share the bed seed and
differ in the commentary seed. A *viewer copy* is what a laptop beside one viewer's screen hears:
the broadcast delayed by a known number of seconds, through a TV speaker's or a laptop mic's band,
with reverb, room noise and room talk (another voice) at a given SNR, optionally another broadcast
heard faintly from the next room (crosstalk), a gain, 44.1 or 48 kHz, and a clock that runs
fast or slow by some ppm.

Everything is deterministic given the seeds: noise comes from Python's seeded `random` (sox's own
noise generators share one sequence, which would make "unrelated" broadcasts related), sox runs
with -R (repeatable dither), espeak-ng is deterministic. Needs espeak-ng and sox (Scripts/bootstrap
--test installs them).

Delay convention: a copy with delay d plays, at its second t, what the broadcast played at its
second t - d + PRE_ROLL (the broadcast starts PRE_ROLL seconds before any copy can), so copy B is
d_B - d_A seconds behind copy A. With drift p ppm the copy plays p ppm fast: at its second t it
plays the broadcast's moment PRE_ROLL - d + t * (1 + p/1e6), so the delay at t is d - t * p/1e6
(`delay_at`).
"""

from __future__ import annotations

import array
import json
import math
import random
import re
import shutil
import subprocess
import tempfile
import wave
from dataclasses import asdict, dataclass
from pathlib import Path

RATE = 48_000
PRE_ROLL = 100.0  # seconds of broadcast before t = 0 of any copy: room for delays up to 100 s

PLAYERS = ["Okafor", "Lindqvist", "Marchetti", "Dubois", "Hernandez", "Kowalski", "Tanaka", "Mbappe",
           "Fischer", "O'Brien", "Silva", "Novak", "Jensen", "Moreau", "Petrov", "Adeyemi"]
TEAMS = ["the Rovers", "United", "the Hawks", "City", "the Miners", "Athletic", "the Harriers", "Wanderers"]
PHRASES = [
    "{p} picks it up in midfield", "lovely ball from {p}", "{p} goes down, the referee waves play on",
    "that's a clever turn by {p}", "{t} are pressing high now", "{p} with the cross, and it's cleared",
    "a long throw for {t}", "{p} shoots, just wide", "what a save", "corner kick to {t}",
    "{p} is booked for that challenge", "the crowd are on their feet", "{p} finds {q} on the left",
    "{t} keeping it patient at the back", "here's {p}, he's through", "offside, says the flag",
    "a free kick in a dangerous area", "{p} lines it up", "that one hit the bar",
    "{q} wins the header", "{t} change it around", "it's been end to end this half",
    "{p} again, can he find a way through", "and that is a goal for {t}, {p} the scorer",
]
TALK = [
    "did you want another drink", "pass the crisps would you", "I think the oven is still on",
    "who is that again", "my phone is nearly dead", "are we still going on Saturday",
    "turn it up a bit", "I can't believe he missed that", "hang on, somebody is at the door",
    "that was never a foul", "where did you put the remote", "shall we order pizza",
]


def write_pcm16(path: Path, samples, rate: int) -> Path:
    """A 16-bit mono WAV of `samples` (ints in -32768..32767) at `rate`, with no tool: the e2e
    tests' small sounds."""
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(array.array("h", samples).tobytes())
    return path


def have_tools() -> bool:
    return all(shutil.which(tool) is not None for tool in ("sox", "espeak-ng"))


def require_tools() -> None:
    missing = [tool for tool in ("sox", "espeak-ng") if shutil.which(tool) is None]
    if missing:
        raise SystemExit(f"audio-corpus: needs {' and '.join(missing)} (Scripts/bootstrap --test installs them: "
                         f"apt-get install -y espeak-ng sox)")


def sox(*args: str | Path) -> str:
    """Runs sox repeatably (-R: the same dither every time); returns what it printed on stderr."""
    done = subprocess.run(["sox", "-R", "-V1", *map(str, args)], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"sox {' '.join(map(str, args))}: {done.stderr.strip()}")
    return done.stderr


def rms(path: Path) -> float:
    """RMS amplitude of a file, full scale 1."""
    text = subprocess.run(["sox", str(path), "-n", "stat"], capture_output=True, text=True).stderr
    match = re.search(r"RMS\s+amplitude:\s+([0-9.eE+-]+)", text)
    if not match:
        raise RuntimeError(f"sox stat {path}: {text.strip()}")
    return float(match.group(1))


def write_raw(path: Path, samples: array.array, rate: int, out: Path, *effects: str) -> None:
    """Writes 16-bit mono samples as raw, then sox converts them to a 48 kHz WAV through `effects`."""
    path.write_bytes(samples.tobytes())
    sox("-t", "raw", "-r", str(rate), "-e", "signed", "-b", "16", "-c", "1", path, "-r", str(RATE), out,
        *effects)
    path.unlink()


def noise(rng: random.Random, count: int) -> array.array:
    """White noise, uniform 16-bit samples, fast (randbytes)."""
    samples = array.array("h")
    samples.frombytes(rng.randbytes(2 * count))
    return samples


def envelope(rng: random.Random, seconds: float, step: float, low: float, high: float) -> list[float]:
    """A slowly wandering gain, one value per `step` seconds, eased between values."""
    return [rng.uniform(low, high) for _ in range(int(seconds / step) + 2)]


def crowd(rng: random.Random, seconds: float, work: Path, out: Path) -> None:
    """Crowd roar: band-passed noise whose loudness swells and falls every few seconds."""
    rate = 4_000
    samples = noise(rng, int(seconds * rate))
    gains = envelope(rng, seconds, 1.5, 0.15, 1.0)
    per = int(1.5 * rate)
    for i in range(len(samples)):
        k, frac = divmod(i, per)
        gain = gains[k] + (gains[k + 1] - gains[k]) * frac / per
        samples[i] = int(samples[i] * gain)
    write_raw(work / "crowd.raw", samples, rate, out, "sinc", "150-1900", "gain", "-n", "-6")


def whistles(rng: random.Random, seconds: float, work: Path, out: Path) -> None:
    """Referee whistles: trilled tones near 3 kHz, a few a minute."""
    rate = 16_000
    samples = array.array("h", bytes(2 * int(seconds * rate)))
    t = rng.uniform(2, 15)
    while t < seconds - 2:
        length = rng.choice([0.25, 0.4, 0.9, 1.4])
        pitch = rng.uniform(2900, 3400)
        trill = rng.uniform(18, 30)
        start = int(t * rate)
        for i in range(int(length * rate)):
            x = i / rate
            amp = 9000 * (0.6 + 0.4 * math.sin(2 * math.pi * trill * x)) * min(1.0, x * 50, (length - x) * 50)
            samples[start + i] = int(amp * math.sin(2 * math.pi * pitch * x))
        t += length + rng.uniform(4, 25)
    write_raw(work / "whistle.raw", samples, rate, out)


def music(rng: random.Random, seconds: float, work: Path, out: Path) -> None:
    """A music bed: a random walk of notes in a major scale over a bass, never looping."""
    rate = 8_000
    table_size = 1024
    wave = [math.sin(2 * math.pi * i / table_size) + 0.3 * math.sin(4 * math.pi * i / table_size)
            for i in range(table_size)]
    scale = [0, 2, 4, 5, 7, 9, 11]
    root = rng.choice([196.0, 220.0, 246.9, 261.6])
    samples = array.array("h", bytes(2 * int(seconds * rate)))
    t = 0.0
    degree = 7
    bass_degree = 0
    while t < seconds:
        length = rng.choice([0.25, 0.25, 0.5, 0.5, 0.75, 1.0])
        degree = max(0, min(16, degree + rng.choice([-2, -1, -1, 0, 1, 1, 2])))
        if rng.random() < 0.3:
            bass_degree = rng.choice([0, 3, 4, 5])
        notes = [(root * 2 ** ((12 * (degree // 7) + scale[degree % 7]) / 12), 2600.0),
                 (root / 2 * 2 ** (scale[bass_degree] / 12), 2200.0)]
        start = int(t * rate)
        n = min(int(length * rate), len(samples) - start)
        for frequency, level in notes:
            step = frequency * table_size / rate
            phase = 0.0
            for i in range(n):
                decay = math.exp(-3.0 * i / (length * rate))
                samples[start + i] += int(level * decay * wave[int(phase) % table_size])
                phase += step
        t += length
    write_raw(work / "music.raw", samples, rate, out)


def speech(rng: random.Random, seconds: float, lines: list[str], voices: list[str], work: Path, out: Path,
           gap: tuple[float, float], names: bool) -> None:
    """espeak-ng reading random lines with pauses between them, padded or cut to `seconds`."""
    parts = []
    spoken = 0.0
    while spoken < seconds:
        line = rng.choice(lines)
        if names:
            p, q = rng.sample(PLAYERS, 2)
            line = line.format(p=p, q=q, t=rng.choice(TEAMS))
        pause = rng.uniform(*gap)
        parts.append(f"{line}. <break time=\"{int(pause * 1000)}ms\"/>")
        spoken += 0.075 * len(line) + pause  # about 13 characters a second at -s 175
    text = "<speak>" + " ".join(parts) + "</speak>"
    raw = work / "speech.wav"
    voice = rng.choice(voices)
    speed = str(rng.randint(160, 200))
    pitch = str(rng.randint(30, 70))
    done = subprocess.run(["espeak-ng", "-m", "-v", voice, "-s", speed, "-p", pitch, "-w", str(raw), text],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"espeak-ng: {done.stderr.strip()}")
    sox(raw, "-r", str(RATE), out, "pad", "0", str(seconds), "trim", "0", str(seconds))
    raw.unlink()


def broadcast(out: Path, seconds: float, bed_seed: int, commentary_seed: int | None = None,
              commentary: bool = True) -> Path:
    """One broadcast, 48 kHz mono: the game bed of `bed_seed` under the commentary of
    `commentary_seed` (default: the bed seed), or music alone with `commentary=False` and a bed
    of just music (a music-only programme)."""
    require_tools()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="huddle-corpus-") as scratch:
        work = Path(scratch)
        rng = random.Random(f"bed {bed_seed}")
        music(rng, seconds, work, work / "music.wav")
        if not commentary:
            sox(work / "music.wav", out, "gain", "-n", "-3")
            return out
        crowd(rng, seconds, work, work / "crowd.wav")
        whistles(rng, seconds, work, work / "whistle.wav")
        talk_rng = random.Random(f"commentary {bed_seed if commentary_seed is None else commentary_seed}")
        speech(talk_rng, seconds, PHRASES, ["en-gb", "en-us", "en-gb-scotland", "en-029"], work,
               work / "commentary.wav", gap=(0.3, 2.5), names=True)
        sox("-m", "-v", "0.22", work / "crowd.wav", "-v", "0.35", work / "whistle.wav", "-v", "0.3",
            work / "music.wav", "-v", "1.0", work / "commentary.wav", out, "gain", "-n", "-3")
    return out


@dataclass
class Viewer:
    """How one viewer's microphone hears a broadcast. `delay` seconds behind the broadcast's
    t = PRE_ROLL; `snr_db` of room noise (with room talk) against the broadcast as heard; None for
    a quiet room."""
    delay: float
    seconds: float
    snr_db: float | None = None
    band: str | None = None  # "tv" (a TV speaker) or "laptop" (a laptop microphone)
    reverb: bool = False
    crosstalk: str | None = None  # path of another broadcast heard at crosstalk_db
    crosstalk_db: float = -15.0
    gain_db: float = 0.0
    rate: int = RATE
    drift_ppm: float = 0.0
    seed: int = 0
    pre_roll: float = PRE_ROLL  # where t = 0 of an undelayed copy falls in the broadcast

    def delay_at(self, t: float) -> float:
        """The true delay (seconds behind the broadcast) at the copy's own second t."""
        return self.delay - t * self.drift_ppm / 1e6


BANDS = {"tv": ["sinc", "180-9000", "equalizer", "2500", "1.5q", "4"],
         "laptop": ["sinc", "300-6500", "equalizer", "1200", "1q", "-4"]}


def viewer_copy(source: Path, out: Path, viewer: Viewer) -> Path:
    """The copy of `source` (a broadcast at 48 kHz, at least PRE_ROLL + seconds long) that
    `viewer` hears, written as 16-bit mono WAV at viewer.rate."""
    require_tools()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="huddle-corpus-") as scratch:
        work = Path(scratch)
        rng = random.Random(f"viewer {viewer.seed}")
        start = viewer.pre_roll - viewer.delay
        if start < 0:
            raise ValueError(f"a delay of {viewer.delay} s needs more than {viewer.pre_roll} s of pre-roll")
        factor = 1 + viewer.drift_ppm / 1e6
        heard = work / "heard.wav"
        effects = ["trim", f"{start:.6f}", f"{viewer.seconds * factor + 1:.6f}"]
        if viewer.drift_ppm:
            effects += ["speed", f"{factor:.9f}", "rate", "-v", str(RATE)]
        effects += BANDS.get(viewer.band or "", [])
        if viewer.reverb:
            effects += ["reverb", "40", "50", "60", "100", "0", "-4"]
        effects += ["trim", "0", f"{viewer.seconds:.6f}"]
        sox(source, heard, *effects)
        level = rms(heard)
        layers = [("1.0", heard)]
        if viewer.crosstalk:
            other = work / "crosstalk.wav"
            sox(viewer.crosstalk, other, "trim", f"{rng.uniform(0, viewer.pre_roll):.3f}", f"{viewer.seconds:.6f}",
                "reverb", "60", "pad", "0", str(viewer.seconds), "trim", "0", f"{viewer.seconds:.6f}")
            layers.append((f"{level / max(rms(other), 1e-9) * 10 ** (viewer.crosstalk_db / 20):.6f}", other))
        if viewer.snr_db is not None:
            room = work / "room.wav"
            hum = work / "hum.wav"
            write_raw(work / "hum.raw", noise(rng, int(viewer.seconds * 8000)), 8000, hum, "sinc", "-2500",
                      "bass", "+6", "pad", "0", "1", "trim", "0", f"{viewer.seconds:.6f}")
            talk = work / "talk.wav"
            speech(rng, viewer.seconds, TALK, ["en-us", "en-gb-x-rp", "en-gb-x-gbcwmd"], work, talk, gap=(0.5, 4.0),
                   names=False)
            sox("-m", "-v", "0.4", hum, "-v", "1.0", talk, room, "reverb", "30", "trim", "0", f"{viewer.seconds:.6f}")
            layers.append((f"{level / max(rms(room), 1e-9) * 10 ** (-viewer.snr_db / 20):.6f}", room))
        mixed = work / "mixed.wav"
        if len(layers) == 1:
            shutil.copy(heard, mixed)
        else:
            inputs = [arg for volume, path in layers for arg in ("-v", volume, str(path))]
            sox("-m", *inputs, mixed)
        # Normalised, then the viewer's gain (a quiet laptop at -20 dB is a fine test of gain).
        sox(mixed, "-r", str(viewer.rate), "-b", "16", "-c", "1", out, "gain", "-n", "-1", "gain",
            f"{min(viewer.gain_db, 0):.2f}")
    return out


def splice_silence(source: Path, out: Path, at: float, seconds: float) -> Path:
    """`source` with `seconds` of digital silence inserted at its second `at` (a rebuffer: from
    then on the viewer is `seconds` further behind), cut back to its length."""
    require_tools()
    length = float(subprocess.run(["soxi", "-D", str(source)], check=True, capture_output=True, text=True).stdout)
    sox(source, out, "pad", f"{seconds:.3f}@{at:.3f}", "trim", "0", f"{length:.6f}")
    return out


def silence(out: Path, seconds: float, rate: int = RATE, hiss_db: float | None = None, seed: int = 0) -> Path:
    """Digital silence, or with `hiss_db` a quiet room's hiss only (no broadcast at all)."""
    require_tools()
    out.parent.mkdir(parents=True, exist_ok=True)
    if hiss_db is None:
        sox("-n", "-r", str(rate), "-b", "16", "-c", "1", out, "trim", "0", str(seconds))
        return out
    with tempfile.TemporaryDirectory(prefix="huddle-corpus-") as scratch:
        work = Path(scratch)
        rng = random.Random(f"hiss {seed}")
        hiss = work / "hiss.wav"
        write_raw(work / "hiss.raw", noise(rng, int(seconds * 8000)), 8000, hiss, "sinc", "-3000")
        sox(hiss, "-r", str(rate), "-b", "16", out, "gain", "-n", f"{hiss_db:.1f}")
    return out


def demo_set(directory: Path, seed: int = 1, seconds: float = 40.0, pre_roll: float = 10.0) -> dict:
    """A small corpus with a manifest: one broadcast heard by three viewers 0, 3.2 and 7.5 s behind
    (quiet room; 10 dB room noise, TV band, reverb, 44.1 kHz, +100 ppm; 5 dB, laptop band,
    crosstalk), the same game over different commentary 5.0 s behind, an unrelated broadcast,
    music alone, and silence. Returns the manifest (also written as manifest.json)."""
    directory.mkdir(parents=True, exist_ok=True)
    length = pre_roll + seconds + 2
    game = broadcast(directory / "broadcast.wav", length, bed_seed=seed)
    other_commentary = broadcast(directory / "broadcast-other-commentary.wav", length, bed_seed=seed,
                                 commentary_seed=seed + 1000)
    unrelated = broadcast(directory / "broadcast-unrelated.wav", length, bed_seed=seed + 1)
    viewers = {
        "alice.wav": (game, Viewer(delay=0.0, seconds=seconds, seed=seed * 10 + 1)),
        "bob.wav": (game, Viewer(delay=3.2, seconds=seconds, snr_db=10, band="tv", reverb=True, rate=44_100,
                                 drift_ppm=100, seed=seed * 10 + 2)),
        "carol.wav": (game, Viewer(delay=7.5, seconds=seconds, snr_db=5, band="laptop", crosstalk=str(unrelated),
                                   gain_db=-12, seed=seed * 10 + 3)),
        "dave-other-commentary.wav": (other_commentary, Viewer(delay=5.0, seconds=seconds, snr_db=10, band="tv",
                                                               seed=seed * 10 + 4)),
        "erin-unrelated.wav": (unrelated, Viewer(delay=2.0, seconds=seconds, snr_db=10, seed=seed * 10 + 5)),
    }
    manifest: dict = {"seed": seed, "pre_roll": pre_roll, "files": {}}
    for name, (source, viewer) in viewers.items():
        viewer.pre_roll = pre_roll
        viewer_copy(source, directory / name, viewer)
        entry = asdict(viewer)
        entry["source"] = Path(source).name
        entry["delay_at_middle"] = viewer.delay_at(seconds / 2)
        manifest["files"][name] = entry
    music_only = broadcast(directory / "music-only-source.wav", length, bed_seed=seed + 2, commentary=False)
    viewer_copy(music_only, directory / "music-only.wav", Viewer(delay=1.0, seconds=seconds, seed=seed * 10 + 6,
                                                                 pre_roll=pre_roll))
    manifest["files"]["music-only.wav"] = {"source": music_only.name, "delay": 1.0, "seconds": seconds}
    silence(directory / "silence.wav", seconds)
    manifest["files"]["silence.wav"] = {"source": None, "seconds": seconds}
    for name in ("broadcast.wav", "broadcast-other-commentary.wav", "broadcast-unrelated.wav",
                 "music-only-source.wav"):
        (directory / name).unlink()
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest
