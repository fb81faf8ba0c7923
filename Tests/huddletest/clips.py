"""Short clips for the tests, built byte by byte: an MP4 and a WebM whose boxes and elements say
what a phone's camera app writes (a GPS position, the camera's make, when it was taken, a title)
around a few recognisable bytes of "media". Enough for a node to read a clip's length and size
and strip what says where and when, which is all a node does with a clip (it never decodes one);
not enough for a player to play.

`leaked_clip_metadata(data)` says which of the markers a clip still holds.
"""

from __future__ import annotations

import struct

CLIP_MARKERS = [b"+40.8135-074.0745/", b"HuddleCam", b"2025-02-09T18:31:07", b"our living room", b"GPS"]
MEDIA = b"\x00\x01MEDIA-BYTES-STAY-PUT\x02\x03" * 64


def leaked_clip_metadata(data: bytes) -> list[bytes]:
    return [marker for marker in CLIP_MARKERS if marker in data]


def _box(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", 8 + len(payload)) + kind + payload


def _full(kind: bytes, version: int, payload: bytes) -> bytes:
    return _box(kind, bytes([version, 0, 0, 0]) + payload)


def mp4_clip(seconds: float = 3.0, width: int = 1280, height: int = 720) -> bytes:
    """ftyp, moov (mvhd, a video trak, udta with a location and a camera, meta), mdat."""
    timescale = 1000
    duration = int(seconds * timescale)
    created = 3_822_000_000  # seconds since 1904: 2025
    mvhd = _full(b"mvhd", 0, struct.pack(">IIII", created, created, timescale, duration) + b"\x00" * 80)
    tkhd = _full(b"tkhd", 0, struct.pack(">IIIII", created, created, 1, 0, duration) + b"\x00" * 52
                 + struct.pack(">II", width << 16, height << 16))
    mdhd = _full(b"mdhd", 0, struct.pack(">IIII", created, created, timescale, duration) + b"\x00\x00\x00\x00")
    hdlr = _full(b"hdlr", 0, b"\x00" * 4 + b"vide" + b"\x00" * 12 + b"VideoHandler\x00")
    mdat_payload = MEDIA
    udta = _box(b"udta", _box(b"\xa9xyz", struct.pack(">HH", 18, 0) + b"+40.8135-074.0745/")
                + _box(b"\xa9mak", struct.pack(">HH", 9, 0) + b"HuddleCam")
                + _box(b"\xa9day", struct.pack(">HH", 19, 0) + b"2025-02-09T18:31:07"))
    meta = _full(b"meta", 0, _box(b"keys", b"\x00\x00\x00\x00\x00\x00\x00\x01" + _box(b"mdta", b"com.apple.quicktime.location.ISO6709"))
                 + _box(b"ilst", _box(b"\x00\x00\x00\x01", _box(b"data", b"\x00\x00\x00\x01\x00\x00\x00\x00+40.8135-074.0745/"))))
    ftyp = _box(b"ftyp", b"isom\x00\x00\x02\x00isomiso2avc1mp41")
    # The sample table names where the media starts: stripping must not move it.
    def moov_with(offset: int) -> bytes:
        stco = _full(b"stco", 0, struct.pack(">II", 1, offset))
        stbl = _box(b"stbl", stco)
        minf = _box(b"minf", stbl)
        mdia = _box(b"mdia", mdhd + hdlr + minf)
        trak = _box(b"trak", tkhd + mdia)
        return _box(b"moov", mvhd + trak + udta + meta)
    moov = moov_with(0)
    offset = len(ftyp) + len(moov) + 8
    return ftyp + moov_with(offset) + _box(b"mdat", mdat_payload)


def _ebml_id(value: int) -> bytes:
    length = (value.bit_length() + 7) // 8
    return value.to_bytes(length, "big")


def _ebml_size(size: int) -> bytes:
    for length in range(1, 9):
        if size < (1 << (7 * length)) - 1:
            return ((1 << (7 * length)) | size).to_bytes(length, "big")
    raise ValueError(size)


def _el(element: int, payload: bytes) -> bytes:
    return _ebml_id(element) + _ebml_size(len(payload)) + payload


def webm_clip(seconds: float = 3.0, width: int = 1280, height: int = 720) -> bytes:
    """EBML header (DocType webm), a Segment with Info (a date, a title, the apps), Tracks (one
    video track), Tags (a location), then a Cluster of "media"."""
    header = _el(0x1A45DFA3, _el(0x4286, b"\x01") + _el(0x42F7, b"\x01") + _el(0x4282, b"webm")
                 + _el(0x4287, b"\x04") + _el(0x4285, b"\x02"))
    info = _el(0x1549A966, _el(0x2AD7B1, struct.pack(">I", 1_000_000)) + _el(0x4489, struct.pack(">d", seconds * 1000))
               + _el(0x4461, struct.pack(">q", 792_000_000_000_000_000)) + _el(0x7BA9, b"our living room")
               + _el(0x4D80, b"HuddleCam muxer") + _el(0x5741, b"HuddleCam 2.0"))
    video = _el(0xE0, _el(0xB0, struct.pack(">H", width)) + _el(0xBA, struct.pack(">H", height)))
    tracks = _el(0x1654AE6B, _el(0xAE, _el(0xD7, b"\x01") + _el(0x83, b"\x01") + _el(0x86, b"V_VP8") + video))
    tags = _el(0x1254C367, _el(0x7373, _el(0x67C8, _el(0x45A3, b"GPS") + _el(0x4487, b"+40.8135-074.0745/"))))
    cluster = _el(0x1F43B675, _el(0xE7, b"\x00") + _el(0xA3, MEDIA))
    segment = _el(0x18538067, info + tracks + tags + cluster)
    return header + segment
