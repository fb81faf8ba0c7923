"""Pictures from the couch: a photo sent from the console reaches a peer as a message held back
like any line, its bytes fetched ahead over the nodes' TCP sync connections, and nothing about
where or with what it was taken on the peer's disk or on the wire."""

from __future__ import annotations

import hashlib
from pathlib import Path

from huddletest.node import calibrate, handled
from huddletest.pictures import leaked_metadata, photo_with_gps
from huddletest.polling import poll


def picture_message(node, caption: str, timeout: float = 20) -> dict:
    return node.wait_for(lambda o: o["type"] == "message" and o.get("picture") and o["text"] == caption,
                         timeout=timeout, what=f"the picture {caption!r}")


def every_file(directory: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file())


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
        assert leaked_metadata(every_file(node.data_dir / "pictures")) == [], node.name


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
