"""The Sunday test's sound (bench part 21, sunday.py): alice's and bob's copies of one made-up
broadcast (huddletest.audio_corpus), bob's with a 5 s rebuffer spliced in, and the stream of a
viewer who listens, as the script's truth knows it."""

from __future__ import annotations

import time
from pathlib import Path

from .. import ROOT
from .. import audio_corpus as corpus
from .harness import log
from .spoilers import Stream

BOB_DELAY, BOB_DRIFT_PPM = 3.2, 100.0
REBUFFER_SECONDS = 5.0


class SoundStream(Stream):
    """A listening viewer's stream: the file's own delay behind the broadcast (and its drift)
    from the instant the node started playing it."""

    search_below, search_above, search_steps = 5.0, 15.0, 80

    def __init__(self, start: float, played_from: float, delay: float, drift_ppm: float = 0.0):
        super().__init__(start, played_from - start + delay)
        self.played_from = played_from
        self.drift_ppm = drift_ppm

    def lag(self, t: float) -> float:
        return super().lag(t) - max(0.0, t - self.played_from) * self.drift_ppm / 1e6



def make_sound(game: float) -> tuple[Path, Path, float]:
    """alice's and bob's copies of one made-up broadcast (cached in .build/audio-corpus), and
    where bob's rebuffer is spliced in (his file's second)."""
    seconds = min(game, 600.0) + 40.0
    cache = ROOT / ".build" / "audio-corpus" / f"sunday-{seconds:.0f}"
    alice, bob = cache / "alice.wav", cache / "bob.wav"
    # Early enough that a re-check (every 120 s) can still hear it before the sound ends.
    rebuffer_at = min(0.45 * game, max(seconds - 200.0, 0.45 * min(game, 600.0)))
    stalled = cache / f"bob-rebuffers-at-{rebuffer_at:.0f}.wav"
    if not stalled.exists():
        started = time.monotonic()
        log(f"making the Sunday sound ({seconds:.0f} s) in {cache}")
        cache.mkdir(parents=True, exist_ok=True)
        pre_roll = 10.0
        game_wav = corpus.broadcast(cache / "broadcast.wav", pre_roll + seconds + 2, bed_seed=46)
        corpus.viewer_copy(game_wav, alice, corpus.Viewer(delay=0.0, seconds=seconds, seed=461, pre_roll=pre_roll))
        corpus.viewer_copy(game_wav, bob, corpus.Viewer(delay=BOB_DELAY, seconds=seconds, snr_db=10, band="tv",
                                                        reverb=True, rate=44_100, drift_ppm=BOB_DRIFT_PPM, seed=462,
                                                        pre_roll=pre_roll))
        corpus.splice_silence(bob, stalled, rebuffer_at, REBUFFER_SECONDS)
        (cache / "broadcast.wav").unlink()
        log(f"made in {time.monotonic() - started:.0f} s")
    return alice, stalled, rebuffer_at
