"""Test pictures made on this machine with Pillow: photos that carry what a phone's camera writes
(a GPS position, the camera's make, model and serial number, the time it was taken, XMP), a large
photo, and the header of a decompression bomb; and a check for which of that metadata a picture
still carries (`leaked_metadata`), for the tests that send pictures through nodes.

Everything is deterministic given the seed.
"""

from __future__ import annotations

import io
import random
import struct
import zlib

from PIL import Image, PngImagePlugin
from PIL.TiffImagePlugin import IFDRational

# Byte strings whose presence in a picture means metadata leaked: GPS tags' text, the serial
# number, the camera's make, an Exif header, an XMP namespace.
LOCATION_MARKERS = [b"GPS", b"SN-12345", b"HuddleCam", b"Exif\x00\x00", b"http://ns.adobe.com/xap"]

_TAKEN = "2025:02:09 18:31:07"
_XMP = (
    '<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?>'
    '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
    '<rdf:Description xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmlns:exif="http://ns.adobe.com/exif/1.0/"'
    f' xmp:CreateDate="{_TAKEN}" exif:GPSLatitude="40,48.81N" exif:GPSLongitude="74,4.47W"/>'
    '</rdf:RDF></x:xmpmeta><?xpacket end="w"?>'
).encode()


def leaked_metadata(data: bytes) -> list[bytes]:
    """The LOCATION_MARKERS that appear in `data`: empty when nothing leaked."""
    return [marker for marker in LOCATION_MARKERS if marker in data]


def photo_with_gps(kind: str = "jpeg", size: tuple[int, int] = (640, 480), seed: int = 0) -> bytes:
    """A picture ("jpeg", "png" or "webp") of noise over a gradient (so it is as large as a
    photo of that size, not a few bytes of flat colour), with Exif holding a GPS position, make
    "HuddleCam", model "Serial SN-12345", a body serial number and the time it was taken, and
    an XMP packet (JPEG: an APP1 segment; PNG: an iTXt chunk; WebP: an XMP chunk). Its pixel
    data never contains a LOCATION_MARKERS string by chance (see `_clean_pixels`)."""
    if kind not in _SAVERS:
        raise ValueError(f"no such picture kind: {kind!r} (jpeg, png or webp)")
    image = _clean_pixels(kind, size, seed, noise=0.35, quality=90)
    return _SAVERS[kind](image, 90, True)


def big_photo(bytes_at_least: int = 1_000_000, seed: int = 0) -> bytes:
    """A JPEG of at least `bytes_at_least` bytes (and not much more): high-quality noise, 4:3,
    with the same metadata as photo_with_gps."""
    width = 640
    while True:
        size = (width, width * 3 // 4)
        data = _save_jpeg(_clean_pixels("jpeg", size, seed, noise=1.0, quality=95), 95, True)
        if len(data) >= bytes_at_least:
            return data
        # Bytes grow with pixels: aim a little past the target so one more try is enough.
        width = max(width + 16, int(width * (bytes_at_least / len(data)) ** 0.5 * 1.02) // 16 * 16)


def png_bomb_header(width: int = 50000, height: int = 50000) -> bytes:
    """A tiny PNG that claims width x height pixels: signature, IHDR (8-bit RGB) with a correct
    CRC, one small IDAT, IEND. A node must refuse it from the header, before decoding."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
            + chunk(b"IEND", b""))


def _pixels(size: tuple[int, int], seed: int, noise: float) -> Image.Image:
    """Seeded RGB noise blended over a diagonal gradient; `noise` from 0 (all gradient) to 1."""
    width, height = size
    noisy = Image.frombytes("RGB", size, random.Random(seed).randbytes(width * height * 3))
    gradient = Image.linear_gradient("L").rotate(45).resize(size).convert("RGB")
    return Image.blend(gradient, noisy, noise)


def _clean_pixels(kind: str, size: tuple[int, int], seed: int, noise: float, quality: int) -> Image.Image:
    """`_pixels` whose encoded data, saved without metadata, holds no LOCATION_MARKERS string.

    Compressed pixels are random-looking bytes: a megabyte holds b"GPS" by chance about one time
    in sixteen, and a test would then see a leak that is not one. The encoder writes the same
    pixel data with or without metadata, so checking the bare file is enough; another noise seed
    is tried until it is clean."""
    for attempt in range(100):
        image = _pixels(size, seed * 1000 + attempt, noise)
        if not leaked_metadata(_SAVERS[kind](image, quality, False)):
            return image
    raise RuntimeError("no clean noise in 100 tries")  # about 0.94 ** 100: never


def _save_jpeg(image: Image.Image, quality: int, metadata: bool) -> bytes:
    out = io.BytesIO()
    if not metadata:
        image.save(out, "JPEG", quality=quality)
        return out.getvalue()
    image.save(out, "JPEG", quality=quality, exif=_exif())
    return _with_jpeg_xmp(out.getvalue(), _XMP)


def _save_png(image: Image.Image, quality: int, metadata: bool) -> bytes:
    out = io.BytesIO()
    if not metadata:
        image.save(out, "PNG")
        return out.getvalue()
    info = PngImagePlugin.PngInfo()
    info.add_itxt("XML:com.adobe.xmp", _XMP.decode())
    image.save(out, "PNG", exif=_exif(), pnginfo=info)
    return out.getvalue()


def _save_webp(image: Image.Image, quality: int, metadata: bool) -> bytes:
    out = io.BytesIO()
    if not metadata:
        image.save(out, "WEBP", quality=quality)
    else:
        image.save(out, "WEBP", quality=quality, exif=_exif(), xmp=_XMP)
    return out.getvalue()


# Encoders by kind: (image, quality, with metadata?) -> bytes.
_SAVERS = {"jpeg": _save_jpeg, "png": _save_png, "webp": _save_webp}


def _exif() -> Image.Exif:
    """Exif as a phone writes it: camera, serial number, times, and a GPS IFD (MetLife Stadium)."""
    exif = Image.Exif()
    exif[0x010F] = "HuddleCam"          # Make
    exif[0x0110] = "Serial SN-12345"    # Model
    exif[0x0132] = _TAKEN               # DateTime
    # Sub-IFDs as dicts: Pillow 9 writes those, where it ignores changes made through get_ifd.
    exif[0x8769] = {                    # the Exif IFD
        0x9003: _TAKEN,                 # DateTimeOriginal
        0xA431: "SN-12345",             # BodySerialNumber
    }
    exif[0x8825] = {                    # the GPS IFD, at MetLife Stadium
        0x0000: b"\x02\x02\x00\x00",    # GPSVersionID
        0x0001: "N",
        0x0002: (IFDRational(40), IFDRational(48), IFDRational(4886, 100)),
        0x0003: "W",
        0x0004: (IFDRational(74), IFDRational(4), IFDRational(2820, 100)),
        0x001B: b"ASCII\x00\x00\x00GPS",  # GPSProcessingMethod, as phones write it
    }
    return exif


def _with_jpeg_xmp(jpeg: bytes, xmp: bytes) -> bytes:
    """`jpeg` with an APP1 XMP segment after its leading APP0/APP1 segments (works on every
    Pillow version, where Pillow's own `xmp=` for JPEG is recent)."""
    payload = b"http://ns.adobe.com/xap/1.0/\x00" + xmp
    segment = b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload
    offset = 2
    while jpeg[offset] == 0xFF and jpeg[offset + 1] in (0xE0, 0xE1):
        offset += 2 + struct.unpack(">H", jpeg[offset + 2:offset + 4])[0]
    return jpeg[:offset] + segment + jpeg[offset:]
