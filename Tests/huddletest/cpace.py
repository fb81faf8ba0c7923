"""CPace for the tests: suite CPACE-X25519-SHA512 of draft-irtf-cfrg-cpace-21 (initiator-responder
mode), as Huddle's pairing uses it (docs/WEB.md, "Pairing"). Written from the draft, apart from the
page's crypto.js, with Python's own integers, `hashlib` and `cryptography`'s X25519; it reproduces
the draft's test vectors (Tests/e2e/test_web_crypto.py checks it against them, and crypto.js
against it).

Pairing, from the page's side (the initiator, A), for a raw-socket client:

    sid, ya, Ya = cpace.start(code)                   # code: what goes into PRS (see below)
    send {"t": "pair", "code": "typed" or "qr", "sid": b64u(sid), "pub": b64u(Ya), "name": NAME}
    receive {"t": "pair", "pub": Yb}
    kc, device_key = cpace.keys(sid, ya, Ya, Yb)      # ValueError: Yb is a low-order point
    send {"t": "proof", "tag": b64u(pair_tag(kc, Ya, Yb, "", "client"))}
    receive {"t": "paired", "device": ID, "name": NAME, "tag": S}
    check S == pair_tag(kc, Ya, Yb, "", "server"); keep ID and device_key

`code` is used as given, as UTF-8: a typed code normalised by the caller (8 Crockford base32
letters, upper case, no dash or spaces, O read as 0, I and L as 1), or the QR's SECRET as it is.
pair_tag is the existing tag (ChaCha20-Poly1305 sealing nothing, key kc, nonce "client" or
"server" padded with zeros to 12, additional data Ya ‖ Yb ‖ code), here with code "".

The node's side (the responder, B), for a test that plays the node: `respond(code, sid, Ya)`.
"""

from __future__ import annotations

import hashlib
import os

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey

#: The channel identifier of Huddle's pairing.
CI = b"huddle-pair-v1"

DSI = b"CPace255"
DSI_ISK = b"CPace255_ISK"
S_IN_BYTES = 128  # SHA-512's input block

P = 2**255 - 19
A = 486662
Z = 2  # the draft's non-square for Curve25519


def prepend_len(data: bytes) -> bytes:
    """LEB128(len(data)) ‖ data."""
    length, encoded = len(data), bytearray()
    while True:
        if length < 128:
            encoded.append(length)
        else:
            encoded.append((length & 0x7F) | 0x80)
        length >>= 7
        if length == 0:
            return bytes(encoded) + bytes(data)


def lv_cat(*parts: bytes) -> bytes:
    return b"".join(prepend_len(part) for part in parts)


def generator_string(prs: bytes, ci: bytes, sid: bytes, dsi: bytes = DSI, s_in_bytes: int = S_IN_BYTES) -> bytes:
    len_zpad = max(0, s_in_bytes - 1 - len(prepend_len(prs)) - len(prepend_len(dsi)))
    return lv_cat(dsi, prs, bytes(len_zpad), ci, sid)


def decode_u(data: bytes) -> int:
    """RFC 7748's decodeUCoordinate with 255 bits: little-endian, the top bit ignored (not reduced
    mod p: elligator2 works mod p)."""
    return int.from_bytes(data[:32], "little") & ((1 << 255) - 1)


def encode_u(u: int) -> bytes:
    return (u % P).to_bytes(32, "little")


def elligator2(r: int) -> int:
    """The draft's reference Elligator 2, over the integers mod p."""
    r %= P
    v = (-A * pow(1 + Z * r * r, -1, P)) % P
    e = pow((v * v * v + A * v * v + v) % P, (P - 1) // 2, P)  # 1, p - 1 (that is, -1) or 0
    half_a = A * pow(2, -1, P) % P
    return (e * v - (1 - e) * half_a) % P


def calculate_generator(prs: bytes, ci: bytes, sid: bytes) -> bytes:
    """g, 32 bytes: Elligator 2 of the first 32 bytes of SHA-512(generator_string)."""
    h = hashlib.sha512(generator_string(prs, ci, sid)).digest()
    return encode_u(elligator2(decode_u(h[:32])))


def x25519(scalar: bytes, u: bytes) -> bytes:
    """X25519(scalar, u) of RFC 7748 (the scalar clamped, u's top bit ignored). An all-zero result
    (u a low-order point) raises ValueError, as CPace's scalar_mult_vfy must abort."""
    return X25519PrivateKey.from_private_bytes(scalar).exchange(X25519PublicKey.from_public_bytes(u))


def transcript_ir(ya_pub: bytes, ad_a: bytes, yb_pub: bytes, ad_b: bytes) -> bytes:
    return lv_cat(ya_pub, ad_a) + lv_cat(yb_pub, ad_b)


def isk(sid: bytes, k: bytes, ya_pub: bytes, ad_a: bytes, yb_pub: bytes, ad_b: bytes) -> bytes:
    """The initiator-responder ISK, 64 bytes: SHA-512(lv_cat(DSI_ISK, sid, K) ‖ transcript_ir)."""
    return hashlib.sha512(lv_cat(DSI_ISK, sid, k) + transcript_ir(ya_pub, ad_a, yb_pub, ad_b)).digest()


def split(session_key: bytes) -> tuple[bytes, bytes]:
    """The ISK as Huddle uses it: kc (the confirmation key, bytes 0..<32), the device's key (32..<64)."""
    return session_key[:32], session_key[32:64]


# ---------------------------------------------------------------------------- the pairing's steps


def start(code: str, sid: bytes | None = None, ya: bytes | None = None) -> tuple[bytes, bytes, bytes]:
    """The page's first step: (sid, ya, Ya). sid is 16 random bytes and ya 32 unless given;
    Ya = X25519(ya, g), g from PRS = code as UTF-8 and CI = "huddle-pair-v1"."""
    sid = os.urandom(16) if sid is None else sid
    ya = os.urandom(32) if ya is None else ya
    return sid, ya, x25519(ya, calculate_generator(code.encode("utf-8"), CI, sid))


def keys(sid: bytes, ya: bytes, ya_pub: bytes, yb_pub: bytes) -> tuple[bytes, bytes]:
    """The page's keys once the node's Yb has come: (kc, device_key). ValueError if K is all
    zeros (Yb a low-order point): the pairing has failed."""
    return split(isk(sid, x25519(ya, yb_pub), ya_pub, b"", yb_pub, b""))


def respond(code: str, sid: bytes, ya_pub: bytes, yb: bytes | None = None) -> tuple[bytes, bytes, bytes]:
    """The node's side: (Yb, kc, device_key) for the page's sid and Ya. ValueError if Ya is a
    low-order point."""
    yb = os.urandom(32) if yb is None else yb
    yb_pub = x25519(yb, calculate_generator(code.encode("utf-8"), CI, sid))
    kc, device_key = split(isk(sid, x25519(yb, ya_pub), ya_pub, b"", yb_pub, b""))
    return yb_pub, kc, device_key
