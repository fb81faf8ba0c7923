"""Pictures from the couch: a photo or a short clip sent from the console reaches a peer as a
message held back like any line, its bytes fetched ahead over the nodes' TCP sync connections,
and nothing about where or with what it was taken on the peer's disk or on the wire; the
console draws a photo and opens it."""

from __future__ import annotations

from pathlib import Path

import pytest

from huddletest.clips import MEDIA, leaked_clip_metadata, mp4_clip, webm_clip
from huddletest.node import calibrate, handled
from huddletest.pictures import leaked_metadata, photo_with_gps
from huddletest.polling import poll
from test_console import pane  # noqa: F401


def picture_message(node, caption: str, timeout: float = 20) -> dict:
    return node.wait_for(lambda o: o["type"] == "message" and o.get("picture") and o["text"] == caption,
                         timeout=timeout, what=f"the picture {caption!r}")


def every_file(directory: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file())


def leaks_on_disk(node, leaked) -> list[bytes]:
    """The markers `leaked` finds in the node's picture files: all of them in what is readable
    there (a shown picture), and in the sealed blobs and their chunk lists (ciphertext and
    hashes) only those of six bytes or more. A sealed blob of a few hundred kilobytes holds a
    3-byte marker such as b"GPS" by chance about one run in a hundred (one position in 2^24);
    a leak of the picture's metadata through them would be a longer string too."""
    pictures = node.data_dir / "pictures"
    readable = b"".join(p.read_bytes() for p in sorted(pictures.rglob("*"))
                        if p.is_file() and p.relative_to(pictures).parts[0] != "blobs")
    sealed = every_file(pictures / "blobs")
    return leaked(readable) + [marker for marker in leaked(sealed) if len(marker) >= 6]


def test_a_photo_with_gps_reaches_a_peer_without_it(lan, tmp_path):
    alice = lan("alice")
    bob = lan("bob", peers=[alice.address])
    bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == "alice")
    photo = tmp_path / "replay.jpg"
    photo.write_bytes(photo_with_gps("jpeg", size=(800, 600), seed=1))
    assert leaked_metadata(photo.read_bytes())

    alice.say(f"/photo {photo} the replay")
    mine = picture_message(alice, "the replay")
    assert mine["picture"]["ready"] and mine["picture"]["type"] == "image/jpeg"
    shown = picture_message(bob, "the replay")
    if not shown["picture"]["ready"]:
        # With the shield off it shows as it arrives: its bytes follow, and the line says so.
        shown = bob.wait_for(lambda o: o["type"] == "picture" and o["id"] == shown["id"], what="the picture's bytes")
    theirs = Path(shown["picture"]["path"])
    assert theirs.read_bytes() == Path(mine["picture"]["path"]).read_bytes()
    assert (shown["picture"]["width"], shown["picture"]["height"]) == (800, 600)
    assert leaked_metadata(theirs.read_bytes()) == []
    for node in (alice, bob):
        assert leaks_on_disk(node, leaked_metadata) == [], node.name


def test_nothing_of_a_picture_shows_before_its_moment(lan, tmp_path):
    alice = lan("alice")
    bob = lan("bob", peers=[alice.address])
    calibrate(alice, bob, 4)
    photo = tmp_path / "score.png"
    photo.write_bytes(photo_with_gps("png", size=(320, 240), seed=2))
    alice.say(f"/photo {photo} look at the score")
    sent = picture_message(alice, "look at the score")
    # The blob arrives long before the moment; no face says a word of it until then.
    root = Path(sent["picture"]["path"]).stem
    poll(lambda: (bob.data_dir / "pictures" / "blobs" / root).exists(), timeout=3, what="the blob on bob's disk")
    handled(bob)
    early = [o for o in bob.outputs if "picture" in o or "look at the score" in str(o)]
    assert early == []
    assert not list((bob.data_dir / "pictures").glob(f"{root}.*")), "the picture's own file before its moment"
    shown = picture_message(bob, "look at the score")
    assert shown["held_ms"] >= 3000 and shown["picture"]["ready"]
    assert Path(shown["picture"]["path"]).exists()


def test_the_console_draws_a_preview_and_opens_the_photo(lan, pane, tmp_path):
    """In a real terminal (tmux): the photo's line, a preview a few rows high drawn by libchafa in
    Unicode blocks (tmux passes no graphics), its number, and /open N hands its file to the
    desktop's viewer ($HUDDLE_OPENER stands in for xdg-open)."""
    opened = tmp_path / "opened.txt"
    opener = tmp_path / "opener.sh"
    opener.write_text(f"#!/bin/sh\necho \"$@\" >> {opened}\n")
    opener.chmod(0o755)
    bob = lan("bob")
    alice = pane("--peer", bob.address, env={"HUDDLE_OPENER": str(opener)}, rows=30)
    bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == "alice", what="alice's join")
    photo = tmp_path / "replay.jpg"
    photo.write_bytes(photo_with_gps("jpeg", size=(800, 600), seed=6))
    bob.say(f"/photo {photo} what a catch")
    rows = alice.wait_for(lambda rows: any(r.startswith("  photo 1: /open 1 ") for r in rows), what="the photo's number")
    line = next(i for i, r in enumerate(rows) if "bob: [photo 800×600" in r and "what a catch" in r)
    number = next(i for i, r in enumerate(rows) if r.startswith("  photo 1: /open 1 "))
    preview = [r for r in rows[line + 1:number] if "is here" not in r]
    blocks = set("▀▁▂▃▄▅▆▇█▌▐░▒▓▔▕▖▗▘▙▚▛▜▝▞▟")
    assert 4 <= len(preview) <= 8 and all(set(row) & blocks for row in preview), rows
    path = rows[number].split("/open 1 ", 1)[1].strip()  # its start: a long path wraps
    alice.type("/open 1")
    alice.press("Enter")
    alice.wait_for_text("opening photo 1")
    poll(lambda: opened.exists() and opened.read_text().strip(), timeout=5, what="the opener's call")
    opened_path = opened.read_text().strip()
    assert Path(opened_path).read_bytes()[:2] == b"\xff\xd8"
    assert opened_path.startswith(path[:40])
    alice.type("/open 2")
    alice.press("Enter")
    alice.wait_for_text("no photo 2: the photos shown are 1 to 1")


@pytest.mark.parametrize("kind", ["mp4", "webm"])
def test_a_clip_reaches_a_peer_as_it_is_without_where_or_when(lan, tmp_path, kind):
    """A short clip goes as it is (no transcoding), its length and size read from its header, its
    location, camera, date and title neutralized in place: the media bytes stay where they were."""
    alice = lan("alice")
    bob = lan("bob", peers=[alice.address])
    bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == "alice")
    data = mp4_clip(3.0) if kind == "mp4" else webm_clip(3.0)
    clip = tmp_path / f"replay.{kind}"
    clip.write_bytes(data)
    assert leaked_clip_metadata(data)
    alice.say(f"/clip {clip} the run")
    shown = picture_message(bob, "the run")
    if not shown["picture"]["ready"]:
        shown = bob.wait_for(lambda o: o["type"] == "picture" and o["id"] == shown["id"], what="the clip's bytes")
    picture = shown["picture"]
    assert (picture["type"], picture["milliseconds"], picture["width"], picture["height"]) == \
        (f"video/{kind}", 3000, 1280, 720)
    received = Path(picture["path"]).read_bytes()
    assert len(received) == len(data) and MEDIA in received and received.index(MEDIA) == data.index(MEDIA)
    assert leaked_clip_metadata(received) == []
    for node in (alice, bob):
        assert leaks_on_disk(node, leaked_clip_metadata) == [], node.name


def test_a_clip_over_30_seconds_is_refused_before_anything_is_sent(lan, tmp_path):
    alice = lan("alice")
    long = tmp_path / "long.mp4"
    long.write_bytes(mp4_clip(45.0))
    alice.say(f"/clip {long} all of it")
    error = alice.wait_for(lambda o: o["type"] == "error", what="the refusal")
    assert "too long" in error["message"] and "30 s" in error["message"], error
    handled(alice)
    assert not [o for o in alice.outputs if o["type"] == "message"]
