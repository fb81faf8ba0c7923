"""An independent Python client of the Huddle wire protocol, written from docs/PROTOCOL.md.

Two layers:

- the codec: one small `encode_*` function per message kind and per building block, and one
  strict `decode_message` (canonical, bounded, rejects anything the doc does not describe);
- `WireClient`: a node identity with a UDP socket on loopback that probes, acks, pushes its own
  signed events (right seq, causal context = what it has delivered), reads pushes into its own
  room logs and pulls history over TCP.

Every encoder takes raw values as well as well-formed ones, so a test can play a hostile peer:
a `str` field also takes `bytes` (sent verbatim after the u16 length), a `vv` field also takes
a list of `(origin, seq)` pairs (kept in the given order, zeros allowed) or pre-encoded `bytes`,
an event list also takes pre-encoded `bytes` items, a count can be overridden with `count=`,
`envelope` takes any magic/version/kind, and every message encoder takes `trailing=` bytes.
`encode_event(event, key=None, sign=False)` leaves the signature out (64 zero bytes unless
`signature=` is given).

Version 3 adds private rooms (the doc's § Private rooms): `RoomKey` derives a room's wire id,
seals bodies (`Sealed`, tag 7) and opens them, and makes the name tags of a probe's or ack's
card; `agreement_public_key` and `direct_key` give a direct-message room's key. A `WireClient`
given `keys=[RoomKey(...)]` is in those rooms: its events there are sealed, what it receives
there is opened first, and its probes and acks carry its card.

Kinds 7 and 8 (the doc's § probeRequest and § nack) are membership's indirect probes: the
`ProbeRequest` / `Nack` dataclasses, `encode_probe_request` and `encode_nack`, signed like probes.

Version 5 adds listening (the doc's § Sound): the `Heard` body (tag 11), a match a node found
between its own sound and a peer's, and the ephemeral `SoundWindow` (kind 11, `encode_sound_window`),
sealed for its one receiver with the pair's direct key (`direct_key`): `RoomKey.seal_sound` /
`RoomKey.open_sound`.

Pictures (the doc's § Pictures): the `Picture` body (tag 12) names a blob by its root;
`seal_picture` seals a picture file into that blob's chunks, list and root exactly as the doc
says; `PieceRequest` / `Piece` (kinds 12 and 13, `encode_piece_request` / `encode_piece`) ask for
and carry one piece over a sync connection; and `PieceServer` is a peer's side of that: it
listens for TCP on a client's port, serves the blobs it holds (piece 0 the list, piece i chunk
i − 1), can corrupt a piece, say it holds nothing or never answer, and records every connection
and request (`client_with_pieces` makes a client and its server on one port number). The other
way, `fetch_pieces` asks a node's sync port for pieces and `fetch_picture` fetches, checks and
opens a picture as a member does.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os

import queue
import socket
import struct
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Iterable, Union

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

# --------------------------------------------------------------------------------------------
# Constants

MAGIC = b"HD"
VERSION = 6

KIND_EVENTS = 1
KIND_DIGEST = 2
KIND_SYNC_REQUEST = 3
KIND_SYNC_RESPONSE = 4
KIND_PROBE = 5
KIND_ACK = 6
KIND_PROBE_REQUEST = 7  # "probe this node for me" (SWIM's ping-req)
KIND_NACK = 8           # a helper's "it did not answer me either"
KIND_LEAVING = 9        # a node's signed goodbye: it stops on purpose
KIND_RELAY = 10         # "pass this on to that node": a wrapper around one signed message, UDP only
RELAYABLE_KINDS = (1, 5, 6, 9)  # events, probe, ack, leaving: what proves itself by a signature
RELAY_HEADER_BYTES = 4 + 32 + 32 + 2
MAX_RELAY_PAYLOAD_BYTES = 60_000 - RELAY_HEADER_BYTES  # 59 930
KIND_SOUND_WINDOW = 11  # a few seconds of a listening node's sound features (ephemeral)
KIND_PIECE_REQUEST = 12  # "send me piece i of the blob with this root" (TCP, a sync connection)
KIND_PIECE = 13          # one piece of a picture's blob, or length 0: "I do not hold it" (TCP)

TAG_JOIN = 1
TAG_LEAVE = 2
TAG_CHAT = 3
TAG_CALIBRATION = 4
TAG_MARK = 5
TAG_DELAY_NUDGE = 6
TAG_SEALED = 7
TAG_SCORE = 8
TAG_TEAMS = 9
TAG_UNMARK = 10
TAG_HEARD = 11
TAG_PICTURE = 12
TAG_VOIDED = 13

PICTURE_JPEG = 1
PICTURE_PNG = 2
PICTURE_WEBP = 3
CLIP_MP4 = 4
CLIP_WEBM = 5
PICTURE_ROOT_TAG = b"huddle picture v1"  # starts what a picture's root hashes (no terminator)

STATE_ALIVE = 1
STATE_SUSPECT = 2
STATE_GONE = 3

SIGNING_TAG = b"huddle-event-v1\x00"  # 16 bytes: an event with no link (previous all zeros)
LINKED_SIGNING_TAG = b"huddle-event-v2\x00"  # 16 bytes: an event that names its previous
NO_LINK = bytes(32)
MEMBER_SIGNING_TAG = b"huddle-member-v1\x00"  # 17 bytes: probes and acks
SOUND_SIGNING_TAG = b"huddle-sound-v1\x00"  # 16 bytes: sound windows, and their seals' associated data
SIGNATURE_BYTES = 64
ID_BYTES = 32

SEAL_TAG = b"huddle-seal-v1\x00"  # starts a sealed body's associated data
ROOM_SALT_TAG = b"huddle-room-v1\x00"  # scrypt salt of a room's master: + the room's name
NAME_SALT = b"huddle-room-name-v1\x00"  # scrypt salt of a room's name key
NAME_CHECK_TAG = b"huddle-room-check-v1\x00"  # starts what a name tag's HMAC covers
PRIVATE_PREFIX = "~"  # a private room's wire id: "~" + 24 base32 characters
AGREEMENT_KEY_BYTES = 32
ROOM_TAG_BYTES = 16
NO_AGREEMENT_KEY = bytes(AGREEMENT_KEY_BYTES)
NO_ROOM_TAG = bytes(ROOM_TAG_BYTES)


class Limits:
    """`WireLimits` from the doc's § Limits."""
    max_datagram_bytes = 60_000
    max_frame_bytes = 4_194_304
    max_nick_bytes = 64
    max_room_bytes = 64
    max_label_bytes = 64
    max_chat_text_bytes = 4_096
    max_host_bytes = 255
    max_version_vector_entries = 1_024
    max_events_per_batch = 1_024
    max_peers_per_list = 256
    max_rooms_per_node = 32
    min_event_bytes = 149
    max_event_bytes = 45_302  # a sealed 4 096-byte chat in a 64-byte room, 1 024 context entries
    seal_overhead_bytes = 28  # 12-byte nonce + 16-byte Poly1305 tag
    min_sealed_bytes = 29  # around a 1-byte leave
    max_sealed_bytes = 4_127  # around the largest chat body (1 + 2 + 4 096)
    max_sound_frames = 1_000  # 10 s of sound in one window
    max_caption_bytes = 1_024  # a picture's caption
    picture_chunk_bytes = 262_144  # plaintext bytes of a picture's chunk (the last may be shorter)
    max_piece_bytes = 262_160  # a piece's length: a sealed chunk (chunk + 16-byte tag)


class WireError(ValueError):
    """A message the protocol rejects. `code` names the reason (the doc's names where it has
    one: badMagic, unsupportedVersion, unknownMessageKind, unsortedVersionVector, zeroSequence,
    unknownEventBody, lengthOutOfRange; otherwise truncated, tooLong, tooMany, badUTF8,
    controlCharacter, badBool, badPeerState, trailingBytes)."""

    def __init__(self, code: str, detail: str = ""):
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail


# --------------------------------------------------------------------------------------------
# Building blocks: encoding (never fails, never validates: hostile values go out as given)

def enc_u8(v: int) -> bytes:
    return struct.pack(">B", v)


def enc_u16(v: int) -> bytes:
    return struct.pack(">H", v)


def enc_u32(v: int) -> bytes:
    return struct.pack(">I", v)


def enc_u64(v: int) -> bytes:
    return struct.pack(">Q", v)


def enc_i64(v: int) -> bytes:
    return struct.pack(">q", v)


def enc_bool(v: Union[bool, int]) -> bytes:
    """`True`/`False`, or any int 0-255 to send a non-canonical boolean."""
    return enc_u8(int(v))


def enc_id(v: bytes) -> bytes:
    """32 bytes; any other length goes out as given (a hostile peer's choice)."""
    return bytes(v)


def enc_str(v: Union[str, bytes], length: int | None = None) -> bytes:
    """u16 length + UTF-8. `bytes` are sent verbatim; `length` overrides the length field."""
    raw = v.encode("utf-8") if isinstance(v, str) else bytes(v)
    return enc_u16(len(raw) if length is None else length) + raw


def enc_list(items: Iterable[bytes], count: int | None = None) -> bytes:
    """u16 count + the already-encoded items; `count` overrides the count field."""
    items = list(items)
    return enc_u16(len(items) if count is None else count) + b"".join(items)


# --------------------------------------------------------------------------------------------
# Version vectors

class VersionVector(dict):
    """origin (32-byte id) -> highest seq. Encodes canonically: ascending origins, no zeros."""

    def get_seq(self, origin: bytes) -> int:
        return self.get(origin, 0)

    def covers(self, other: "VersionVector") -> bool:
        return all(self.get(o, 0) >= s for o, s in other.items())

    def merged(self, other: "VersionVector") -> "VersionVector":
        out = VersionVector(self)
        for o, s in other.items():
            if s > out.get(o, 0):
                out[o] = s
        return out

    def copy(self) -> "VersionVector":
        return VersionVector(self)

    def entries(self) -> list[tuple[bytes, int]]:
        return sorted((o, s) for o, s in self.items() if s > 0)


VectorLike = Union[VersionVector, dict, list, tuple, bytes, None]


def enc_vv(vector: VectorLike, count: int | None = None) -> bytes:
    """A `VersionVector`/dict encodes canonically (sorted, zero entries left out). A list of
    `(origin, seq)` pairs goes out in the given order, zeros and duplicates kept. `bytes` are
    taken as an already-encoded vector."""
    if vector is None:
        vector = VersionVector()
    if isinstance(vector, (bytes, bytearray)):
        return bytes(vector)
    if isinstance(vector, dict):
        pairs = VersionVector(vector).entries()
    else:
        pairs = list(vector)
    return enc_list((enc_id(o) + enc_u64(s) for o, s in pairs), count)


# --------------------------------------------------------------------------------------------
# Event bodies

@dataclass(frozen=True)
class Join:
    nick: Union[str, bytes]
    tag = TAG_JOIN


@dataclass(frozen=True)
class Leave:
    tag = TAG_LEAVE


@dataclass(frozen=True)
class Chat:
    text: Union[str, bytes]
    tag = TAG_CHAT


@dataclass(frozen=True)
class CalibrationEvent:
    label: Union[str, bytes]
    tag = TAG_CALIBRATION


@dataclass(frozen=True)
class Mark:
    label: Union[str, bytes]
    tag = TAG_MARK


@dataclass(frozen=True)
class Unmark:
    """label:str — takes back the origin's mark of the label (the latest by seq decides)."""
    label: Union[str, bytes]
    tag = TAG_UNMARK


@dataclass(frozen=True)
class DelayNudge:
    milliseconds: int
    tag = TAG_DELAY_NUDGE


@dataclass(frozen=True)
class Sealed:
    """A private room's body as it travels: 12-byte nonce, ChaCha20-Poly1305 ciphertext of a
    plain body's encoding, 16-byte tag (see `RoomKey.seal`). `length` overrides the u16 length
    field (a hostile peer's choice)."""
    data: bytes
    length: int | None = None
    tag = TAG_SEALED


@dataclass(frozen=True)
class Score:
    """home:u16 guest:u16 — the score on the sender's stream, held back like a chat."""
    home: int
    guest: int
    tag = TAG_SCORE


@dataclass(frozen=True)
class Teams:
    """home:str guest:str (each <= 64 bytes) — the two sides' names."""
    home: str
    guest: str
    tag = TAG_TEAMS


@dataclass(frozen=True)
class Heard:
    """peer:32 at:i64 lag:i64 sigma:u32 confidence:u16 -- the origin matched its own sound
    against `peer`'s: the peer heard the moment at `at` (ms, origin's clock) `lag` µs later on
    its clock, with standard deviation `sigma` µs and confidence in tenths."""
    peer: bytes
    at: int
    lag: int
    sigma: int
    confidence: int
    tag = TAG_HEARD


@dataclass(frozen=True)
class Picture:
    """type:u8 bytes:u32 width:u16 height:u16 milliseconds:u32 root:32 key:32 caption:str
    (<= 1 024) -- a message with a picture or a clip: `size` is the doc's `bytes` (the file's
    size), `root` and `key` name and open its blob (see `seal_picture`), `milliseconds` a clip's
    length (0 for a still; last here so the fields before it keep their places as arguments).
    Any values encode, a type other than 1-5 too."""
    type: int
    size: int
    width: int
    height: int
    root: bytes
    key: bytes
    caption: Union[str, bytes] = ""
    milliseconds: int = 0
    tag = TAG_PICTURE


@dataclass(frozen=True)
class Voided:
    """from:u64 -- the origin's seqs from `from` up to this event's own, those a reader lacks,
    will never come (a power cut took them; PROTOCOL.md, "After a power cut")."""
    start: int
    tag = TAG_VOIDED


@dataclass(frozen=True)
class RawBody:
    """Any bytes as a body (an unknown tag, a truncated field...)."""
    data: bytes


Body = Union[Join, Leave, Chat, CalibrationEvent, Mark, Unmark, DelayNudge, Sealed, Score, Teams, Heard, RawBody]
Body = Union[Body, Picture, Voided]


def encode_body(body: Body) -> bytes:
    if isinstance(body, RawBody):
        return bytes(body.data)
    if isinstance(body, Join):
        return enc_u8(TAG_JOIN) + enc_str(body.nick)
    if isinstance(body, Leave):
        return enc_u8(TAG_LEAVE)
    if isinstance(body, Chat):
        return enc_u8(TAG_CHAT) + enc_str(body.text)
    if isinstance(body, CalibrationEvent):
        return enc_u8(TAG_CALIBRATION) + enc_str(body.label)
    if isinstance(body, Mark):
        return enc_u8(TAG_MARK) + enc_str(body.label)
    if isinstance(body, DelayNudge):
        return enc_u8(TAG_DELAY_NUDGE) + enc_i64(body.milliseconds)
    if isinstance(body, Sealed):
        return enc_u8(TAG_SEALED) + enc_str(body.data, body.length)
    if isinstance(body, Score):
        return enc_u8(TAG_SCORE) + enc_u16(body.home) + enc_u16(body.guest)
    if isinstance(body, Teams):
        return enc_u8(TAG_TEAMS) + enc_str(body.home) + enc_str(body.guest)
    if isinstance(body, Unmark):
        return enc_u8(TAG_UNMARK) + enc_str(body.label)
    if isinstance(body, Heard):
        return (enc_u8(TAG_HEARD) + enc_id(body.peer) + enc_i64(body.at) + enc_i64(body.lag) + enc_u32(body.sigma)
                + enc_u16(body.confidence))
    if isinstance(body, Picture):
        return (enc_u8(TAG_PICTURE) + enc_u8(body.type) + enc_u32(body.size) + enc_u16(body.width)
                + enc_u16(body.height) + enc_u32(body.milliseconds) + enc_id(body.root) + enc_id(body.key)
                + enc_str(body.caption))
    if isinstance(body, Voided):
        return enc_u8(TAG_VOIDED) + enc_u64(body.start)
    raise TypeError(f"not an event body: {body!r}")


# --------------------------------------------------------------------------------------------
# Events and signing

@dataclass
class Event:
    origin: bytes
    seq: int
    room: Union[str, bytes]
    created_at: int  # ms since the Unix epoch, the origin's clock
    context: VectorLike
    body: Body
    signature: bytes | None = None
    # For an event of a private room opened with its key (`RoomKey.open`): the sealed bytes,
    # which are what travels and what the signature covers; `body` is then the plain body.
    seal: bytes | None = None
    # SHA-256 of the origin's event at seq - 1 in the room (its wire bytes), or 32 zero bytes:
    # no link (seq 1, a void, or an event made before wire version 6).
    previous: bytes = NO_LINK

    @property
    def key(self) -> tuple[bytes, int]:
        return (self.origin, self.seq)

    @property
    def wire_body(self) -> Body:
        """The body as it travels and is signed: the sealed one of an opened event."""
        return Sealed(self.seal) if self.seal is not None else self.body

    @property
    def room_name(self) -> str:
        return self.room if isinstance(self.room, str) else self.room.decode("utf-8", "replace")


def encode_event_unsigned(event: Event, link: bool = True) -> bytes:
    """origin seq previous room createdAt context body: the event without its signature (an
    opened private event with its sealed body); without `previous` if not `link`."""
    return (enc_id(event.origin) + enc_u64(event.seq) + (bytes(event.previous) if link else b"")
            + enc_str(event.room) + enc_i64(event.created_at) + enc_vv(event.context)
            + encode_body(event.wire_body))


def signed_bytes(event: Event) -> bytes:
    """`Event.signedBytes`: the domain-separation tag, then the event without its signature.
    An event with no link is signed as before links: tag v1, no `previous` field."""
    if bytes(event.previous) == NO_LINK:
        return SIGNING_TAG + encode_event_unsigned(event, link=False)
    return LINKED_SIGNING_TAG + encode_event_unsigned(event)


def event_digest(event: Event) -> bytes:
    """What the origin's next event names as its `previous`: SHA-256 of this one's wire bytes."""
    digest = hashes.Hash(hashes.SHA256())
    digest.update(encode_event(event, sign=False))
    return digest.finalize()


def sign_event(event: Event, key: Ed25519PrivateKey) -> Event:
    """A copy of `event` signed by `key` (which should be the origin's)."""
    return replace(event, signature=key.sign(signed_bytes(event)))


def verify_event(event: Event, public_key: bytes | None = None) -> bool:
    """Whether the signature verifies with `public_key` (default: the event's origin)."""
    if event.signature is None or len(event.signature) != SIGNATURE_BYTES:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public_key or event.origin).verify(
            event.signature, signed_bytes(event))
        return True
    except (InvalidSignature, ValueError):
        return False


def encode_event(event: Event, key: Ed25519PrivateKey | None = None, sign: bool = True,
                 signature: bytes | None = None) -> bytes:
    """The event's wire bytes. The signature is, first that applies: `signature` as given (any
    length), a fresh one by `key` if `sign`, the event's own, or 64 zero bytes."""
    unsigned = encode_event_unsigned(event)
    if signature is None:
        if sign and key is not None:
            signature = key.sign(signed_bytes(event))
        elif event.signature is not None:
            signature = event.signature
        else:
            signature = bytes(SIGNATURE_BYTES)
    return unsigned + bytes(signature)


def _event_bytes(item: Union[Event, bytes]) -> bytes:
    return bytes(item) if isinstance(item, (bytes, bytearray)) else encode_event(item, sign=False)


# --------------------------------------------------------------------------------------------
# Peer records

@dataclass
class PeerRecord:
    id: bytes
    nick: Union[str, bytes]
    host: Union[str, bytes]
    port: int
    state: int = STATE_ALIVE
    incarnation: int = 0


def encode_peer_record(p: PeerRecord) -> bytes:
    return (enc_id(p.id) + enc_str(p.nick) + enc_str(p.host) + enc_u16(p.port) + enc_u8(p.state)
            + enc_u64(p.incarnation))


def _peer_bytes(item: Union[PeerRecord, bytes]) -> bytes:
    return bytes(item) if isinstance(item, (bytes, bytearray)) else encode_peer_record(item)


# --------------------------------------------------------------------------------------------
# Messages: one dataclass and one encoder per kind

@dataclass
class Events:
    events: list[Event]
    kind = KIND_EVENTS


@dataclass
class Digest:
    from_id: bytes
    room: str
    vector: VersionVector
    # origin -> chain fingerprint at the vector's seq (absent: sent as 0, "not given")
    fingerprints: dict = field(default_factory=dict)
    kind = KIND_DIGEST


@dataclass
class SyncRequest:
    from_id: bytes
    room: str
    have: VersionVector
    limit: int
    kind = KIND_SYNC_REQUEST


@dataclass
class SyncResponse:
    room: str
    events: list[Event]
    more: bool
    kind = KIND_SYNC_RESPONSE


@dataclass
class Probe:
    from_id: bytes
    nick: str
    incarnation: int
    sequence: int
    sent_at: int  # the sender's monotonic clock, µs
    port: int
    rooms: list[str]
    peers: list[PeerRecord]
    signature: bytes = bytes(64)  # Ed25519 by from_id over MEMBER_SIGNING_TAG + the message without it
    # The card (on the wire after the peers, before the signature; kept last here so that older
    # positional callers still work): X25519 public key (zeros: none), one 16-byte name tag per
    # room (an empty list: all zeros).
    agreement_key: bytes = NO_AGREEMENT_KEY
    room_tags: list[bytes] = field(default_factory=list)
    kind = KIND_PROBE


@dataclass
class Ack:
    from_id: bytes
    nick: str
    incarnation: int
    sequence: int
    echoed_sent_at: int
    rooms: list[str]
    peers: list[PeerRecord]
    signature: bytes = bytes(64)
    agreement_key: bytes = NO_AGREEMENT_KEY  # the card, as in `Probe`
    room_tags: list[bytes] = field(default_factory=list)
    kind = KIND_ACK


@dataclass
class ProbeRequest:
    """from:32 target:32 sentAt:i64 signature:64 -- signed like a probe."""
    from_id: bytes
    target: bytes
    sent_at: int
    signature: bytes = bytes(64)
    kind = KIND_PROBE_REQUEST


@dataclass
class Nack:
    """from:32 target:32 sentAt:i64 signature:64 -- the helper's answer to a failed request."""
    from_id: bytes
    target: bytes
    sent_at: int
    signature: bytes = bytes(64)
    kind = KIND_NACK


@dataclass
class Leaving:
    """from:32 incarnation:u64 signature:64 -- a node's goodbye, signed like a probe."""
    from_id: bytes
    incarnation: int
    signature: bytes = bytes(64)
    kind = KIND_LEAVING


@dataclass
class SoundWindow:
    """from:32 room:str sentAt:i64 start:i64 frames:u16 sealed signature:64 -- `frames` 10-ms
    frames heard from `start` (sender's clock, ms), `sealed` (nonce, ciphertext of their public
    form, tag) for one receiver with the pair's direct key; `bits` (one u32 a frame) and `loud`
    (one flag a frame) are filled by `RoomKey.open_sound`."""
    from_id: bytes
    room: Union[str, bytes]
    sent_at: int
    start: int
    frames: int
    bits: list[int] = field(default_factory=list)
    loud: list[bool] = field(default_factory=list)
    sealed: bytes | None = None
    signature: bytes = bytes(64)
    kind = KIND_SOUND_WINDOW


@dataclass
class PieceRequest:
    """root:32 index:u32 -- piece `index` of the blob named `root` (0: its chunk list, i >= 1:
    its chunk i - 1)."""
    root: bytes
    index: int
    kind = KIND_PIECE_REQUEST


@dataclass
class Piece:
    """root:32 index:u32 length:u32 bytes<length> -- the answer to a `PieceRequest` of the same
    root and index; empty `data` means "I do not hold it"."""
    root: bytes
    index: int
    data: bytes = b""
    kind = KIND_PIECE


Message = Union[Events, Digest, SyncRequest, SyncResponse, Probe, Ack, ProbeRequest, Nack, Leaving, SoundWindow]
Message = Union[Message, PieceRequest, Piece]


def envelope(kind: int, payload: bytes, magic: bytes = MAGIC, version: int = VERSION) -> bytes:
    return bytes(magic) + enc_u8(version) + enc_u8(kind) + payload


def encode_events(events: Iterable[Union[Event, bytes]], count: int | None = None,
                  trailing: bytes = b"", **env) -> bytes:
    """kind 1. Events go out with the signature they carry (see `encode_event`)."""
    return envelope(KIND_EVENTS, enc_list((_event_bytes(e) for e in events), count) + trailing, **env)


def encode_digest(from_id: bytes, room: Union[str, bytes], vector: VectorLike,
                  fingerprints: dict | None = None, trailing: bytes = b"", **env) -> bytes:
    """kind 2: the vector, then one u64 chain fingerprint per vector entry, in the vector's
    order (0 where `fingerprints` has none). With a pre-encoded `vector` (bytes), nothing is
    added: put the fingerprints in `trailing`."""
    fingerprints = fingerprints or {}
    if isinstance(vector, (bytes, bytearray)):
        pairs = []
    elif isinstance(vector, dict) or vector is None:
        pairs = VersionVector(vector or {}).entries()
    else:
        pairs = list(vector)
    prints = b"".join(enc_u64(fingerprints.get(o, 0)) for o, _ in pairs)
    return envelope(KIND_DIGEST, enc_id(from_id) + enc_str(room) + enc_vv(vector) + prints + trailing, **env)


def chain_fingerprint(previous: int, signature: bytes) -> int:
    """f(n) = first 8 bytes (big-endian) of SHA-256(f(n-1) as u64 || signature of seq n); f(0) = 0."""
    return int.from_bytes(hashlib.sha256(previous.to_bytes(8, "big") + signature).digest()[:8], "big")


def encode_sync_request(from_id: bytes, room: Union[str, bytes], have: VectorLike, limit: int,
                        trailing: bytes = b"", **env) -> bytes:
    """kind 3."""
    return envelope(KIND_SYNC_REQUEST,
                    enc_id(from_id) + enc_str(room) + enc_vv(have) + enc_u16(limit) + trailing, **env)


def encode_sync_response(room: Union[str, bytes], events: Iterable[Union[Event, bytes]],
                         more: Union[bool, int], count: int | None = None, trailing: bytes = b"",
                         **env) -> bytes:
    """kind 4."""
    return envelope(KIND_SYNC_RESPONSE,
                    enc_str(room) + enc_list((_event_bytes(e) for e in events), count)
                    + enc_bool(more) + trailing, **env)


def sign_membership(unsigned: bytes, key: Ed25519PrivateKey | None,
                    signature: bytes | None = None) -> bytes:
    """Appends the 64-byte signature a probe or ack ends with: `signature` if given, else
    `key`'s over MEMBER_SIGNING_TAG + the message so far, else 64 zero bytes (never valid)."""
    if signature is None:
        signature = key.sign(MEMBER_SIGNING_TAG + unsigned) if key is not None else bytes(64)
    return unsigned + signature


def verify_membership(data: bytes, from_id: bytes) -> bool:
    """Whether a probe or ack datagram's last 64 bytes are `from_id`'s signature over the rest."""
    try:
        Ed25519PublicKey.from_public_bytes(from_id).verify(data[-64:], MEMBER_SIGNING_TAG + data[:-64])
        return True
    except Exception:
        return False


def encode_card(agreement_key: bytes | None = None, room_tags: Iterable[bytes] | None = None,
                rooms: int = 0, count: int | None = None) -> bytes:
    """A probe's or ack's card: `agreementKey:32` (default zeros), then `count:u16` and one
    16-byte tag per room. Tags are padded with zeros up to `rooms` (so none given: all zeros);
    more tags than rooms are all written, and `count` overrides the count field (both hostile:
    a receiver requires count == number of rooms). Keys and tags go out at the length given."""
    tags = [bytes(t) for t in (room_tags or [])]
    tags += [NO_ROOM_TAG] * max(0, rooms - len(tags))
    key = NO_AGREEMENT_KEY if agreement_key is None else bytes(agreement_key)
    return key + enc_list(tags, count)


def encode_probe(from_id: bytes, nick: Union[str, bytes], incarnation: int, sequence: int,
                 sent_at: int, port: int, rooms: Iterable[Union[str, bytes]] = (),
                 peers: Iterable[Union[PeerRecord, bytes]] = (), rooms_count: int | None = None,
                 peers_count: int | None = None, trailing: bytes = b"",
                 key: Ed25519PrivateKey | None = None, signature: bytes | None = None,
                 agreement_key: bytes | None = None, room_tags: Iterable[bytes] | None = None,
                 tags_count: int | None = None, card: bytes | None = None, **env) -> bytes:
    """kind 5, signed by `key` (or carrying `signature`, or zeros). `trailing` goes after it.
    The card is `encode_card(agreement_key, room_tags, ...)`, or the raw bytes `card`."""
    rooms = list(rooms)
    if card is None:
        card = encode_card(agreement_key, room_tags, len(rooms), tags_count)
    unsigned = envelope(KIND_PROBE,
                        enc_id(from_id) + enc_str(nick) + enc_u64(incarnation) + enc_u64(sequence)
                        + enc_i64(sent_at) + enc_u16(port)
                        + enc_list((enc_str(r) for r in rooms), rooms_count)
                        + enc_list((_peer_bytes(p) for p in peers), peers_count) + card, **env)
    return sign_membership(unsigned, key, signature) + trailing


def encode_ack(from_id: bytes, nick: Union[str, bytes], incarnation: int, sequence: int,
               echoed_sent_at: int, rooms: Iterable[Union[str, bytes]] = (),
               peers: Iterable[Union[PeerRecord, bytes]] = (), rooms_count: int | None = None,
               peers_count: int | None = None, trailing: bytes = b"",
               key: Ed25519PrivateKey | None = None, signature: bytes | None = None,
               agreement_key: bytes | None = None, room_tags: Iterable[bytes] | None = None,
               tags_count: int | None = None, card: bytes | None = None, **env) -> bytes:
    """kind 6, signed like a probe, with a card like a probe's."""
    rooms = list(rooms)
    if card is None:
        card = encode_card(agreement_key, room_tags, len(rooms), tags_count)
    unsigned = envelope(KIND_ACK,
                        enc_id(from_id) + enc_str(nick) + enc_u64(incarnation) + enc_u64(sequence)
                        + enc_i64(echoed_sent_at)
                        + enc_list((enc_str(r) for r in rooms), rooms_count)
                        + enc_list((_peer_bytes(p) for p in peers), peers_count) + card, **env)
    return sign_membership(unsigned, key, signature) + trailing


def encode_probe_request(from_id: bytes, target: bytes, sent_at: int, trailing: bytes = b"",
                         key: Ed25519PrivateKey | None = None, signature: bytes | None = None,
                         **env) -> bytes:
    """kind 7: ask the receiver to probe `target` with `sent_at` and forward its ack (or nack)."""
    unsigned = envelope(KIND_PROBE_REQUEST, enc_id(from_id) + enc_id(target) + enc_i64(sent_at), **env)
    return sign_membership(unsigned, key, signature) + trailing


def encode_nack(from_id: bytes, target: bytes, sent_at: int, trailing: bytes = b"",
                key: Ed25519PrivateKey | None = None, signature: bytes | None = None, **env) -> bytes:
    """kind 8: `target` did not answer the probe `from_id` ran for the request with `sent_at`."""
    unsigned = envelope(KIND_NACK, enc_id(from_id) + enc_id(target) + enc_i64(sent_at), **env)
    return sign_membership(unsigned, key, signature) + trailing


def encode_leaving(from_id: bytes, incarnation: int, trailing: bytes = b"",
                   key: Ed25519PrivateKey | None = None, signature: bytes | None = None, **env) -> bytes:
    """kind 9: `from_id` stops on purpose; `incarnation` is the one that ends."""
    unsigned = envelope(KIND_LEAVING, enc_id(from_id) + enc_u64(incarnation), **env)
    return sign_membership(unsigned, key, signature) + trailing


def sound_frames_data(bits: list[int], loud: list[bool]) -> bytes:
    """The public form of frames: each frame's u32, then the loudness flags eight a byte, frame i
    in bit i % 8 (lowest first) of byte i // 8."""
    flags = bytearray((len(loud) + 7) // 8)
    for i, is_loud in enumerate(loud):
        if is_loud:
            flags[i // 8] |= 1 << (i % 8)
    return b"".join(enc_u32(b) for b in bits) + bytes(flags)


def encode_sound_window(from_id: bytes, room: Union[str, bytes], sent_at: int, start: int, bits: list[int],
                        loud: list[bool], key: Ed25519PrivateKey | None = None, pair_key: "RoomKey | None" = None,
                        to_id: bytes | None = None, nonce: bytes | None = None, frames: int | None = None,
                        sealed: bytes | None = None, signature: bytes | None = None, trailing: bytes = b"",
                        **env) -> bytes:
    """kind 11, its frames sealed for `to_id` with `pair_key` (the two's direct key) and signed
    by `key` over SOUND_SIGNING_TAG + the message so far. `frames=` overrides the count,
    `sealed=` the data."""
    count = len(bits) if frames is None else frames
    head = enc_id(from_id) + enc_str(room) + enc_i64(sent_at) + enc_i64(start) + enc_u16(count)
    if sealed is None:
        if pair_key is None or to_id is None:
            raise ValueError("a sound window is sealed for its receiver: give pair_key and to_id (or sealed=)")
        sealed = pair_key.seal_sound(from_id, to_id, room, sent_at, start, bits, loud, nonce=nonce)
    data = sealed
    unsigned = envelope(KIND_SOUND_WINDOW, head + data, **env)
    if signature is None:
        signature = key.sign(SOUND_SIGNING_TAG + unsigned) if key is not None else bytes(64)
    return unsigned + signature + trailing


def verify_sound_window(data: bytes, from_id: bytes) -> bool:
    """Whether a sound window's last 64 bytes are `from_id`'s signature over the rest."""
    try:
        Ed25519PublicKey.from_public_bytes(from_id).verify(data[-64:], SOUND_SIGNING_TAG + data[:-64])
        return True
    except (InvalidSignature, ValueError):
        return False


def encode_piece_request(root: bytes, index: int, trailing: bytes = b"", **env) -> bytes:
    """kind 12: ask for piece `index` of the blob named `root`."""
    return envelope(KIND_PIECE_REQUEST, enc_id(root) + enc_u32(index) + trailing, **env)


def encode_piece(root: bytes, index: int, data: bytes = b"", length: int | None = None, trailing: bytes = b"",
                 **env) -> bytes:
    """kind 13: piece `index` of the blob named `root` (no `data`: "I do not hold it");
    `length` overrides the length field."""
    return envelope(KIND_PIECE, enc_id(root) + enc_u32(index) + enc_u32(len(data) if length is None else length)
                    + bytes(data) + trailing, **env)


def encode_message(m: Message) -> bytes:
    """A decoded message back to bytes (canonical: decode then encode gives the same bytes)."""
    if isinstance(m, Events):
        return encode_events(m.events)
    if isinstance(m, Digest):
        return encode_digest(m.from_id, m.room, m.vector, m.fingerprints)
    if isinstance(m, SyncRequest):
        return encode_sync_request(m.from_id, m.room, m.have, m.limit)
    if isinstance(m, SyncResponse):
        return encode_sync_response(m.room, m.events, m.more)
    if isinstance(m, Probe):
        return encode_probe(m.from_id, m.nick, m.incarnation, m.sequence, m.sent_at, m.port,
                            m.rooms, m.peers, signature=m.signature, agreement_key=m.agreement_key,
                            room_tags=m.room_tags)
    if isinstance(m, Ack):
        return encode_ack(m.from_id, m.nick, m.incarnation, m.sequence, m.echoed_sent_at,
                          m.rooms, m.peers, signature=m.signature, agreement_key=m.agreement_key,
                          room_tags=m.room_tags)
    if isinstance(m, ProbeRequest):
        return encode_probe_request(m.from_id, m.target, m.sent_at, signature=m.signature)
    if isinstance(m, Nack):
        return encode_nack(m.from_id, m.target, m.sent_at, signature=m.signature)
    if isinstance(m, Leaving):
        return encode_leaving(m.from_id, m.incarnation, signature=m.signature)
    if isinstance(m, SoundWindow):
        return encode_sound_window(m.from_id, m.room, m.sent_at, m.start, m.bits, m.loud, frames=m.frames,
                                   sealed=m.sealed, signature=m.signature)
    if isinstance(m, PieceRequest):
        return encode_piece_request(m.root, m.index)
    if isinstance(m, Piece):
        return encode_piece(m.root, m.index, m.data)
    raise TypeError(f"not a message: {m!r}")


# --------------------------------------------------------------------------------------------
# Decoding: strict, canonical, bounded

class Reader:
    def __init__(self, data: bytes, pos: int = 0):
        self.data = bytes(data)
        self.pos = pos

    @property
    def left(self) -> int:
        return len(self.data) - self.pos

    def take(self, n: int) -> bytes:
        if n > self.left:
            raise WireError("truncated", f"need {n} bytes at {self.pos}, {self.left} left")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def u8(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        return struct.unpack(">H", self.take(2))[0]

    def u32(self) -> int:
        return struct.unpack(">I", self.take(4))[0]

    def u64(self) -> int:
        return struct.unpack(">Q", self.take(8))[0]

    def i64(self) -> int:
        return struct.unpack(">q", self.take(8))[0]

    def bool(self) -> bool:
        v = self.u8()
        if v not in (0, 1):
            raise WireError("badBool", str(v))
        return v == 1

    def id(self) -> bytes:
        return self.take(ID_BYTES)

    def str(self, limit: int) -> str:
        n = self.u16()
        if n > limit:
            raise WireError("tooLong", f"string of {n} bytes, limit {limit}")
        raw = self.take(n)
        try:
            text = raw.decode("utf-8", "strict")  # rejects overlong forms, surrogates, > U+10FFFF
        except UnicodeDecodeError as e:
            raise WireError("badUTF8", str(e)) from None
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
            raise WireError("controlCharacter", repr(text))
        return text

    def count(self, limit: int, smallest: int) -> int:
        n = self.u16()
        if n > limit:
            raise WireError("tooMany", f"count {n}, limit {limit}")
        if n * smallest > self.left:
            raise WireError("truncated", f"count {n} x {smallest} bytes > {self.left} left")
        return n

    def vv(self) -> VersionVector:
        n = self.count(Limits.max_version_vector_entries, ID_BYTES + 8)
        out = VersionVector()
        previous = None
        for _ in range(n):
            origin, seq = self.id(), self.u64()
            if previous is not None and origin <= previous:
                raise WireError("unsortedVersionVector")
            if seq == 0:
                raise WireError("zeroSequence")
            out[origin] = seq
            previous = origin
        return out

    def body(self) -> Body:
        tag = self.u8()
        if tag == TAG_JOIN:
            return Join(self.str(Limits.max_nick_bytes))
        if tag == TAG_LEAVE:
            return Leave()
        if tag == TAG_CHAT:
            return Chat(self.str(Limits.max_chat_text_bytes))
        if tag == TAG_CALIBRATION:
            return CalibrationEvent(self.str(Limits.max_label_bytes))
        if tag == TAG_MARK:
            return Mark(self.str(Limits.max_label_bytes))
        if tag == TAG_DELAY_NUDGE:
            return DelayNudge(self.i64())
        if tag == TAG_SEALED:
            n = self.u16()
            if not Limits.min_sealed_bytes <= n <= Limits.max_sealed_bytes:
                raise WireError("lengthOutOfRange", f"sealed body of {n} bytes, allowed "
                                f"{Limits.min_sealed_bytes} to {Limits.max_sealed_bytes}")
            return Sealed(self.take(n))
        if tag == TAG_SCORE:
            return Score(self.u16(), self.u16())
        if tag == TAG_TEAMS:
            return Teams(self.str(Limits.max_label_bytes), self.str(Limits.max_label_bytes))
        if tag == TAG_UNMARK:
            return Unmark(self.str(Limits.max_label_bytes))
        if tag == TAG_HEARD:
            return Heard(self.id(), self.i64(), self.i64(), self.u32(), self.u16())
        if tag == TAG_PICTURE:
            kind = self.u8()
            if kind not in (PICTURE_JPEG, PICTURE_PNG, PICTURE_WEBP, CLIP_MP4, CLIP_WEBM):
                raise WireError("unknownPictureType", str(kind))
            size, width, height, milliseconds = self.u32(), self.u16(), self.u16(), self.u32()
            root, key = self.id(), self.id()
            return Picture(kind, size, width, height, root, key, self.str(Limits.max_caption_bytes), milliseconds)
        if tag == TAG_VOIDED:
            return Voided(self.u64())
        raise WireError("unknownEventBody", str(tag))

    def event(self) -> Event:
        origin, seq = self.id(), self.u64()  # seq 0 decodes: a node refuses just that event
        previous = self.take(32)
        room = self.str(Limits.max_room_bytes)
        created_at = self.i64()
        context = self.vv()
        body = self.body()
        signature = self.take(SIGNATURE_BYTES)
        return Event(origin, seq, room, created_at, context, body, signature, previous=previous)

    def events(self) -> list[Event]:
        n = self.count(Limits.max_events_per_batch, Limits.min_event_bytes)
        return [self.event() for _ in range(n)]

    def peer(self) -> PeerRecord:
        pid = self.id()
        nick = self.str(Limits.max_nick_bytes)
        host = self.str(Limits.max_host_bytes)
        port = self.u16()
        state = self.u8()
        if state not in (STATE_ALIVE, STATE_SUSPECT, STATE_GONE):
            raise WireError("badPeerState", str(state))
        return PeerRecord(pid, nick, host, port, state, self.u64())

    def rooms(self) -> list[str]:
        n = self.count(Limits.max_rooms_per_node, 2)
        return [self.str(Limits.max_room_bytes) for _ in range(n)]

    def peers(self) -> list[PeerRecord]:
        # smallest record: id + two empty strings + port + state + incarnation
        n = self.count(Limits.max_peers_per_list, ID_BYTES + 2 + 2 + 2 + 1 + 8)
        return [self.peer() for _ in range(n)]

    def card(self, rooms: int) -> tuple[bytes, list[bytes]]:
        """agreementKey:32, then count:u16 == `rooms` and one 16-byte tag per room; all-zero
        tags read as none (an empty list), so decoding then encoding gives the same bytes."""
        agreement_key = self.take(AGREEMENT_KEY_BYTES)
        n = self.u16()
        if n != rooms:
            raise WireError("lengthOutOfRange", f"{n} room tags for {rooms} rooms")
        tags = [self.take(ROOM_TAG_BYTES) for _ in range(n)]
        return agreement_key, ([] if all(t == NO_ROOM_TAG for t in tags) else tags)


@dataclass
class Relay:
    """kind 10: from:32 to:32 length:u16 payload -- one whole message (events, probe, ack or
    leaving) that `from_id` asks a common peer to pass on, untouched, to `to`."""
    from_id: bytes
    to: bytes
    payload: bytes
    message: "Message | None" = None


def encode_relay(from_id: bytes, to: bytes, payload: bytes, length: int | None = None, trailing: bytes = b"",
                 **env) -> bytes:
    """kind 10: wraps `payload` (an encoded message, signed by its sender) for `to`."""
    n = len(payload) if length is None else length
    return envelope(KIND_RELAY, enc_id(from_id) + enc_id(to) + enc_u16(n) + payload + trailing, **env)


def decode_relay(data: bytes) -> Relay:
    """Decodes one relay datagram or raises `WireError`: a length from 4 to 59 930, a payload
    that is exactly one message of a relayable kind (never another relay), nothing after it."""
    r = Reader(data)
    if r.left < 2 or r.take(2) != MAGIC:
        raise WireError("badMagic")
    if not r.left or (version := r.u8()) != VERSION:
        raise WireError("unsupportedVersion" if r.left or data[2:3] else "truncated")
    if not r.left or (kind := r.u8()) != KIND_RELAY:
        raise WireError("unknownMessageKind", "not a relay")
    from_id, to = r.id(), r.id()
    length = r.u16()
    if not 4 <= length <= MAX_RELAY_PAYLOAD_BYTES:
        raise WireError("lengthOutOfRange", f"relay payload of {length} bytes")
    payload = bytes(r.take(length))
    if r.left:
        raise WireError("trailingBytes", f"{r.left} bytes after the relay")
    if payload[3:4] == bytes([KIND_RELAY]):
        raise WireError("notRelayable", "a relay of a relay")
    message = decode_message(payload)
    if message.kind not in RELAYABLE_KINDS:
        raise WireError("notRelayable", f"kind {message.kind}")
    return Relay(from_id, to, payload, message)


def read_sound_frames(r: Reader, frames: int) -> tuple[list[int], list[bool]]:
    """`frames` frames' public form, refusing any other encoding of them (nonCanonicalSound)."""
    bits = [r.u32() for _ in range(frames)]
    flags = r.take((frames + 7) // 8)
    if frames % 8 and flags[-1] >> (frames % 8):
        raise WireError("nonCanonicalSound", "unused loudness bits set")
    loud = [bool(flags[i // 8] >> (i % 8) & 1) for i in range(frames)]
    if any(b and not l for b, l in zip(bits, loud)):
        raise WireError("nonCanonicalSound", "a quiet frame with bits")
    return bits, loud


def read_dumped_window(data: bytes) -> tuple[int, int, list[int], list[bool]]:
    """A window as its receiver reads it once opened, as `huddle align --dump-features` prints
    it: start:i64 frames:u16, then the frames' public form. Returns (start, frames, bits, loud)."""
    r = Reader(data)
    start, frames = r.i64(), r.u16()
    bits, loud = read_sound_frames(r, frames)
    if r.left:
        raise WireError("trailingBytes", f"{r.left} bytes after the window")
    return start, frames, bits, loud


def decode_message(data: bytes) -> Message:
    """Decodes one whole message (a datagram or a frame's payload) or raises `WireError`."""
    r = Reader(data)
    if r.left < 2 or r.take(2) != MAGIC:
        raise WireError("badMagic")
    version = r.u8() if r.left else None
    if version is None:
        raise WireError("truncated", "no version")
    if version != VERSION:
        raise WireError("unsupportedVersion", str(version))
    if not r.left:
        raise WireError("truncated", "no kind")
    kind = r.u8()
    if kind == KIND_EVENTS:
        m = Events(r.events())
    elif kind == KIND_DIGEST:
        from_id, room, vector = r.id(), r.str(Limits.max_room_bytes), r.vv()
        prints = {}
        for origin, _ in vector.entries():
            fingerprint = r.u64()
            if fingerprint:
                prints[origin] = fingerprint
        m = Digest(from_id, room, vector, prints)
    elif kind == KIND_SYNC_REQUEST:
        m = SyncRequest(r.id(), r.str(Limits.max_room_bytes), r.vv(), r.u16())
    elif kind == KIND_SYNC_RESPONSE:
        m = SyncResponse(r.str(Limits.max_room_bytes), r.events(), r.bool())
    elif kind == KIND_PROBE:
        m = Probe(r.id(), r.str(Limits.max_nick_bytes), r.u64(), r.u64(), r.i64(), r.u16(),
                  r.rooms(), r.peers())
        m.agreement_key, m.room_tags = r.card(len(m.rooms))
        m.signature = bytes(r.take(64))
    elif kind == KIND_ACK:
        m = Ack(r.id(), r.str(Limits.max_nick_bytes), r.u64(), r.u64(), r.i64(), r.rooms(),
                r.peers())
        m.agreement_key, m.room_tags = r.card(len(m.rooms))
        m.signature = bytes(r.take(64))
    elif kind == KIND_PROBE_REQUEST:
        m = ProbeRequest(r.id(), r.id(), r.i64(), bytes(r.take(64)))
    elif kind == KIND_NACK:
        m = Nack(r.id(), r.id(), r.i64(), bytes(r.take(64)))
    elif kind == KIND_LEAVING:
        m = Leaving(r.id(), r.u64(), bytes(r.take(64)))
    elif kind == KIND_SOUND_WINDOW:
        from_id, room, sent_at, start = r.id(), r.str(Limits.max_room_bytes), r.i64(), r.i64()
        frames = r.u16()
        if not 1 <= frames <= Limits.max_sound_frames:
            raise WireError("lengthOutOfRange", f"{frames} sound frames, allowed 1 to {Limits.max_sound_frames}")
        plain = 4 * frames + (frames + 7) // 8
        m = SoundWindow(from_id, room, sent_at, start, frames, sealed=r.take(plain + Limits.seal_overhead_bytes))
        m.signature = bytes(r.take(64))
    elif kind == KIND_PIECE_REQUEST:
        m = PieceRequest(r.id(), r.u32())
    elif kind == KIND_PIECE:
        root, index, length = r.id(), r.u32(), r.u32()
        if length > Limits.max_piece_bytes:
            raise WireError("lengthOutOfRange", f"piece of {length} bytes, at most {Limits.max_piece_bytes}")
        m = Piece(root, index, r.take(length))
    else:
        raise WireError("unknownMessageKind", str(kind))
    if r.left:
        raise WireError("trailingBytes", f"{r.left} bytes after the message")
    return m


# --------------------------------------------------------------------------------------------
# Private rooms and direct-message keys (the doc's § Private rooms)

SCRYPT_MAXMEM = 64 * 1024 * 1024  # scrypt N=2^15, r=8 needs 32 MiB and a little more


def _hkdf(ikm: bytes, info: bytes, length: int, salt: bytes | None = None) -> bytes:
    """HKDF-SHA256; no salt is RFC 5869's default (32 zero bytes)."""
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=salt, info=info).derive(ikm)


def base32_lower(data: bytes) -> str:
    """RFC 4648 base32, lower case, no padding."""
    import base64
    return base64.b32encode(data).decode("ascii").lower().rstrip("=")


def is_private(room: Union[str, bytes]) -> bool:
    """Whether a room as it travels is a private room's id."""
    return (room if isinstance(room, str) else room.decode("utf-8", "replace")).startswith(PRIVATE_PREFIX)


class RoomKey:
    """A private room's key, derived as the doc says:

        master  = scrypt(passphrase, salt "huddle-room-v1" 0x00 name, N=2^15, r=8, p=1, 32 bytes)
        id      = "~" + base32(HKDF-SHA256(master, info "huddle room id", 15 bytes))
        seal    = HKDF-SHA256(master, info "huddle room seal", 32 bytes)   (ChaCha20-Poly1305)
        nameKey = scrypt(name, salt "huddle-room-name-v1" 0x00, N=2^14, r=8, p=1, 32 bytes)

    `RoomKey.from_master(name, master)` is a room whose master is already agreed (a direct
    message's): same id and seal, no name key (its name tags are zeros)."""

    def __init__(self, name: str, passphrase: Union[str, bytes, None] = None, *,
                 master: bytes | None = None):
        self.name = name
        raw_name = name.encode("utf-8")
        if master is None:
            if passphrase is None:
                raise ValueError("a RoomKey needs a passphrase or a master")
            secret = passphrase.encode("utf-8") if isinstance(passphrase, str) else bytes(passphrase)
            master = hashlib.scrypt(secret, salt=ROOM_SALT_TAG + raw_name, n=1 << 15, r=8, p=1,
                                    maxmem=SCRYPT_MAXMEM, dklen=32)
            self.name_key: bytes | None = hashlib.scrypt(raw_name, salt=NAME_SALT, n=1 << 14, r=8, p=1,
                                                         maxmem=SCRYPT_MAXMEM, dklen=32)
        else:
            self.name_key = None
        self.master = bytes(master)
        self.id = PRIVATE_PREFIX + base32_lower(_hkdf(self.master, b"huddle room id", 15))
        self.seal_key = _hkdf(self.master, b"huddle room seal", 32)

    @classmethod
    def from_master(cls, name: str, master: bytes) -> "RoomKey":
        return cls(name, master=master)

    def __repr__(self) -> str:
        return f"RoomKey({self.name!r}, id={self.id!r})"

    def associated_data(self, origin: bytes, seq: int, room: Union[str, bytes, None] = None) -> bytes:
        """"huddle-seal-v1" 0x00 room:str origin:32 seq:u64 (room: this key's id)."""
        return SEAL_TAG + enc_str(self.id if room is None else room) + enc_id(origin) + enc_u64(seq)

    def seal(self, body: Body, origin: bytes, seq: int, nonce: bytes | None = None,
             room: Union[str, bytes, None] = None) -> Sealed:
        """`body` sealed for event (origin, seq) of this room: nonce (12 bytes, random unless
        given) + ChaCha20-Poly1305(encoded body) + 16-byte tag. `room` puts another room id in
        the associated data (a forger's choice: such a seal opens nowhere)."""
        nonce = os.urandom(12) if nonce is None else bytes(nonce)
        box = ChaCha20Poly1305(self.seal_key).encrypt(nonce, encode_body(body),
                                                       self.associated_data(origin, seq, room))
        return Sealed(nonce + box)

    @staticmethod
    def sound_associated_data(room: Union[str, bytes], from_id: bytes, to_id: bytes, sent_at: int, start: int,
                              frames: int) -> bytes:
        """"huddle-sound-v1" 0x00 room:str from:32 to:32 sentAt:i64 start:i64 frames:u16."""
        return (SOUND_SIGNING_TAG + enc_str(room) + enc_id(from_id) + enc_id(to_id) + enc_i64(sent_at)
                + enc_i64(start) + enc_u16(frames))

    def seal_sound(self, from_id: bytes, to_id: bytes, room: Union[str, bytes], sent_at: int, start: int,
                   bits: list[int], loud: list[bool], nonce: bytes | None = None) -> bytes:
        """A sound window's frames sealed for `to_id` with this pair key: nonce +
        ChaCha20-Poly1305(public form) + tag."""
        nonce = os.urandom(12) if nonce is None else bytes(nonce)
        ad = self.sound_associated_data(room, from_id, to_id, sent_at, start, len(bits))
        return nonce + ChaCha20Poly1305(self.seal_key).encrypt(nonce, sound_frames_data(bits, loud), ad)

    def open_sound(self, window: SoundWindow, to_id: bytes) -> SoundWindow | None:
        """`window` (sealed for `to_id` with this pair key) with `bits` and `loud` filled, or None."""
        if window.sealed is None:
            return None
        ad = self.sound_associated_data(window.room, window.from_id, to_id, window.sent_at, window.start,
                                        window.frames)
        try:
            plain = ChaCha20Poly1305(self.seal_key).decrypt(window.sealed[:12], window.sealed[12:], ad)
            r = Reader(plain)
            bits, loud = read_sound_frames(r, window.frames)
        except Exception:
            return None
        if r.left:
            return None
        return replace(window, bits=bits, loud=loud)

    def open_body(self, sealed: bytes, origin: bytes, seq: int) -> Body | None:
        """The plain body inside sealed bytes for event (origin, seq), or None."""
        sealed = bytes(sealed)
        if len(sealed) < Limits.seal_overhead_bytes:
            return None
        try:
            plain = ChaCha20Poly1305(self.seal_key).decrypt(sealed[:12], sealed[12:],
                                                             self.associated_data(origin, seq))
        except Exception:
            return None
        try:
            r = Reader(plain)
            body = r.body()
        except WireError:
            return None
        if r.left or isinstance(body, Sealed):
            return None
        return body

    def open(self, event: Event) -> Event | None:
        """`event` opened (plain `body`, its sealed bytes kept in `seal` so its encoding and
        signature are unchanged), or None: another room, not sealed, another key, another
        event's body, or a body inside that does not decode. An opened event is returned as is."""
        if event.room_name != self.id:
            return None
        if event.seal is not None:
            return event
        if not isinstance(event.body, Sealed):
            return None
        body = self.open_body(event.body.data, event.origin, event.seq)
        if body is None:
            return None
        return replace(event, body=body, seal=bytes(event.body.data))

    def seal_event(self, event: Event, nonce: bytes | None = None) -> Event:
        """`event` (of this room, plain body) with its body sealed, `body` kept plain and the
        sealed bytes in `seal`; unsigned: sign it after (`sign_event`)."""
        sealed = self.seal(event.body, event.origin, event.seq, nonce)
        return replace(event, seal=sealed.data, signature=None)

    def name_tag(self, node_id: bytes, room_id: Union[str, bytes, None] = None) -> bytes:
        """HMAC-SHA256(nameKey, "huddle-room-check-v1" 0x00 node:32 room:str), first 16 bytes:
        what `node_id` puts beside `room_id` (default: this key's id) in its card. Zeros for a
        key without a name key."""
        if self.name_key is None:
            return NO_ROOM_TAG
        message = NAME_CHECK_TAG + enc_id(node_id) + enc_str(self.id if room_id is None else room_id)
        return hmac.new(self.name_key, message, hashlib.sha256).digest()[:ROOM_TAG_BYTES]

    def same_name_other_passphrase(self, tag: bytes, node_id: bytes, room_id: str) -> bool:
        """Whether `tag`, beside private room `room_id` in `node_id`'s card, says it is in a
        room of this name under another passphrase."""
        return (self.name_key is not None and room_id != self.id and is_private(room_id)
                and bytes(tag) == self.name_tag(node_id, room_id))


def ed25519_seed(key: Ed25519PrivateKey) -> bytes:
    """The 32-byte private key seed (what a node keeps in its data dir)."""
    return key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())


def agreement_private_key(seed: Union[bytes, Ed25519PrivateKey]) -> X25519PrivateKey:
    """The X25519 key of a node: HKDF-SHA256(ikm = its Ed25519 seed, no salt,
    info "huddle agreement key", 32 bytes) as an X25519 private key."""
    if isinstance(seed, Ed25519PrivateKey):
        seed = ed25519_seed(seed)
    return X25519PrivateKey.from_private_bytes(_hkdf(bytes(seed), b"huddle agreement key", 32))


def agreement_public_key(seed: Union[bytes, Ed25519PrivateKey]) -> bytes:
    """The 32-byte X25519 public key a node puts in its card."""
    return agreement_private_key(seed).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def direct_key(seed: Union[bytes, Ed25519PrivateKey], my_id: bytes, peer_id: bytes,
               peer_agreement_key: bytes, name: str = "") -> RoomKey | None:
    """The key of the direct-message room between this node (its Ed25519 `seed`, id `my_id`)
    and `peer_id`, whose card gave `peer_agreement_key`: master = HKDF-SHA256(X25519 secret,
    salt = lower id || higher id, info "huddle direct v1", 32 bytes). None for no key (zeros),
    an invalid one or an all-zero secret."""
    if bytes(peer_agreement_key) == NO_AGREEMENT_KEY:
        return None
    try:
        secret = agreement_private_key(seed).exchange(X25519PublicKey.from_public_bytes(bytes(peer_agreement_key)))
    except ValueError:
        return None
    low, high = sorted([bytes(my_id), bytes(peer_id)])
    return RoomKey.from_master(name, _hkdf(secret, b"huddle direct v1", 32, salt=low + high))


# --------------------------------------------------------------------------------------------
# TCP framing

def frame(message: bytes, length: int | None = None) -> bytes:
    """u32 length prefix + the message; `length` overrides the prefix."""
    return enc_u32(len(message) if length is None else length) + message


class FrameTooLong(WireError):
    def __init__(self, length: int):
        super().__init__("frameTooLong", str(length))
        self.length = length


class FrameSplitter:
    """Takes chunks of any size, returns complete frame payloads."""

    def __init__(self, max_frame_bytes: int = Limits.max_frame_bytes):
        self.buffer = b""
        self.max = max_frame_bytes

    def push(self, chunk: bytes) -> list[bytes]:
        self.buffer += chunk
        out = []
        while len(self.buffer) >= 4:
            (length,) = struct.unpack(">I", self.buffer[:4])
            if length > self.max:
                raise FrameTooLong(length)
            if len(self.buffer) < 4 + length:
                break
            out.append(self.buffer[4:4 + length])
            self.buffer = self.buffer[4 + length:]
        return out


def read_frame(sock: socket.socket, splitter: FrameSplitter, pending: list[bytes],
               deadline: float) -> bytes:
    """The next frame payload from `sock` (`pending` holds ones already split off)."""
    while not pending:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no frame in time")
        sock.settimeout(remaining)
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed before a whole frame")
        pending.extend(splitter.push(chunk))
    return pending.pop(0)


# --------------------------------------------------------------------------------------------
# A room log with causal delivery

class RoomLog:
    """What a node holds of one room (seqs are per origin *and room*). An event whose context
    does not give its origin's entry as exactly seq - 1 is refused. An event is delivered once
    its origin's previous seq is delivered and its context is covered by what is delivered;
    `delivered` is the vector a new event's context is taken from, `held()` the one a digest or
    a sync request carries."""

    def __init__(self):
        self.events: dict[tuple[bytes, int], Event] = {}
        self.delivered = VersionVector()
        self.order: list[Event] = []  # delivery order
        self._pending: dict[tuple[bytes, int], Event] = {}
        self.refused: list[Event] = []  # events whose context does not follow their origin's last

    def held(self) -> VersionVector:
        """Per origin, the highest seq held with every lower one held too."""
        out = VersionVector()
        for origin in {o for o, _ in self.events}:
            s = 0
            while (origin, s + 1) in self.events:
                s += 1
            if s:
                out[origin] = s
        return out

    def add(self, event: Event) -> list[Event]:
        """Holds `event` (a duplicate is ignored) and returns the events newly delivered."""
        if event.key in self.events:
            return []
        context = event.context if isinstance(event.context, dict) else VersionVector(dict(event.context or []))
        if event.seq == 0 or context.get(event.origin, 0) != event.seq - 1:
            self.refused.append(event)  # its context must name exactly its origin's previous event
            return []
        self.events[event.key] = event
        self._pending[event.key] = event
        delivered = []
        progress = True
        while progress:
            progress = False
            for key, e in sorted(self._pending.items()):
                if self._deliverable(e):
                    del self._pending[key]
                    self.delivered[e.origin] = e.seq
                    self.order.append(e)
                    delivered.append(e)
                    progress = True
        return delivered

    def _deliverable(self, e: Event) -> bool:
        if e.seq != self.delivered.get(e.origin, 0) + 1:
            return False
        context = e.context if isinstance(e.context, dict) else VersionVector(dict(e.context or []))
        return all(self.delivered.get(o, 0) >= s for o, s in context.items() if o != e.origin)


# --------------------------------------------------------------------------------------------
# The client

Address = tuple[str, int]


def node_address(address: Union[str, Address]) -> Address:
    if isinstance(address, str):
        host, port = address.rsplit(":", 1)
        return (host, int(port))
    return address


def now_ms() -> int:
    return int(time.time() * 1000)


def monotonic_us() -> int:
    return time.monotonic_ns() // 1000


@dataclass
class Received:
    """One datagram that reached the client: the decoded message (or the error) and its source."""
    data: bytes
    source: Address
    message: Message | None = None
    error: WireError | None = None
    at: float = field(default_factory=time.monotonic)


class WireClient:
    """A Huddle peer in Python: a fresh Ed25519 identity and a UDP socket on `host`.

    A background thread reads every datagram: it answers probes with acks (`auto_ack`), takes
    pushed events whose signature verifies into the room logs (`auto_take`), answers a known
    peer's digest by pushing what it misses (`auto_answer_digests`), and queues everything for
    `recv`. Its own events get the next seq and the room's delivered vector as
    context, like a node's.

    With `keys` (`RoomKey`s) it is in those private rooms too, by id (with no `rooms` given,
    only in them): its events there are sealed before they are signed, events received there
    are opened before anything else (those that do not open go to `unreadable_events`), and its
    probes and acks carry its card: its X25519 key and a name tag beside each private room."""

    def __init__(self, nick: str = "pyclient", rooms: Iterable[str] | None = None,
                 host: str = "127.0.0.1", key: Ed25519PrivateKey | None = None,
                 auto_ack: bool = True, auto_take: bool = True, auto_answer_digests: bool = True,
                 keys: Iterable["RoomKey"] = ()):
        self.key = key or Ed25519PrivateKey.generate()
        self.id = self.key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.agreement_key = agreement_public_key(self.key)
        self.nick = nick
        self.room_keys: dict[str, RoomKey] = {k.id: k for k in keys}
        self.rooms = list(rooms if rooms is not None else ([] if self.room_keys else ["superbowl"]))
        self.rooms += [room for room in self.room_keys if room not in self.rooms]
        self.peer_agreement_keys: dict[bytes, bytes] = {}  # id -> X25519 key, from their cards
        self.peer_cards: dict[bytes, tuple[list[str], list[bytes]]] = {}  # id -> (rooms, tags)
        self.unreadable_events: list[Event] = []  # events of a keyed room that did not open
        self.incarnation = now_ms()
        self.auto_ack = auto_ack
        self.auto_take = auto_take
        self.auto_answer_digests = auto_answer_digests
        self.peers: dict[bytes, Address] = {}  # id -> where it listens, from its probes and acks
        self.logs: dict[str, RoomLog] = {}
        self.rejected_events: list[Event] = []  # pushed events whose signature did not verify
        self.received: list[Received] = []  # every datagram, in order
        self.acks_sent = 0
        self._sequence = 0
        self._lock = threading.RLock()
        self._queue: queue.Queue[Received] = queue.Queue()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((host, 0))
        self.host, self.port = self.sock.getsockname()
        self._closed = False
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"wire-{nick}")
        self._thread.start()

    @property
    def id_hex(self) -> str:
        return self.id.hex()

    def close(self) -> None:
        self._closed = True
        try:
            self.sock.close()
        except OSError:
            pass
        self._thread.join(timeout=2)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- rooms and own events -----------------------------------------------------------------

    def log(self, room: str) -> RoomLog:
        with self._lock:
            return self.logs.setdefault(room, RoomLog())

    def join_private(self, key: "RoomKey") -> str:
        """Is in `key`'s private room from now on (announce it with a probe); returns its id."""
        with self._lock:
            self.room_keys[key.id] = key
            if key.id not in self.rooms:
                self.rooms.append(key.id)
        return key.id

    def opened(self, event: Event) -> Event | None:
        """`event` as this client reads it: opened with its room's key in a keyed room (None if
        it does not open), as it is elsewhere (None if sealed: a public room takes no seal)."""
        key = self.room_keys.get(event.room_name)
        if key is not None:
            return key.open(event)
        return None if isinstance(event.body, Sealed) else event

    def take(self, events: Iterable[Event]) -> list[Event]:
        """Holds the events that open (in a keyed room) and whose signature verifies; returns
        the ones newly delivered."""
        delivered = []
        with self._lock:
            for e in events:
                opened = self.opened(e)
                if opened is None:
                    self.unreadable_events.append(e)
                    continue
                if not verify_event(opened):
                    self.rejected_events.append(opened)
                    continue
                delivered += self.log(opened.room_name).add(opened)
        return delivered

    def make_event(self, room: str, body: Body, created_at: int | None = None) -> Event:
        """The client's next event in `room`, signed, with seq = one past its last and context =
        the room's delivered vector (its own entry included), and taken into its own log. In a
        keyed room the body is sealed first (the event keeps it plain in `body`, sealed in
        `seal`), and the signature covers the sealed form."""
        with self._lock:
            log = self.log(room)
            event = Event(self.id, log.delivered.get(self.id, 0) + 1, room,
                          now_ms() if created_at is None else created_at,
                          log.delivered.copy(), body)
            if room in self.room_keys:
                event = self.room_keys[room].seal_event(event)
            event = sign_event(event, self.key)
            log.add(event)
            return event

    def room_tags(self, rooms: Iterable[str] | None = None) -> list[bytes]:
        """The name tags of this client's card: one per room, zeros for a room without a key."""
        return [self.room_keys[r].name_tag(self.id, r) if r in self.room_keys else NO_ROOM_TAG
                for r in (self.rooms if rooms is None else rooms)]

    # -- sending -------------------------------------------------------------------------------

    def send_raw(self, to: Union[str, Address], data: bytes) -> None:
        self.sock.sendto(data, node_address(to))

    def send_events(self, to: Union[str, Address], events: Iterable[Union[Event, bytes]]) -> None:
        self.send_raw(to, encode_events(list(events)))

    def say(self, to: Union[str, Address, Iterable], room: str, body: Body) -> Event:
        """Makes the next event and pushes it to one address or to each of a list."""
        event = self.make_event(room, body)
        targets = [to] if isinstance(to, (str, tuple)) else list(to)
        for target in targets:
            self.send_events(target, [event])
        return event

    def join(self, to, room: str | None = None, nick: str | None = None) -> Event:
        return self.say(to, room or self.rooms[0], Join(nick or self.nick))

    def chat(self, to, text: str, room: str | None = None) -> Event:
        return self.say(to, room or self.rooms[0], Chat(text))

    def send_digest(self, to: Union[str, Address], room: str | None = None,
                    vector: VectorLike = None) -> None:
        """Sends the room's delivered vector (or `vector`) as a digest."""
        room = room or self.rooms[0]
        self.send_raw(to, encode_digest(self.id, room, self.log(room).delivered if vector is None else vector))

    def next_sequence(self) -> int:
        with self._lock:
            self._sequence += 1
            return self._sequence

    def pair_key(self, peer_id: bytes) -> "RoomKey | None":
        """The direct key this client shares with `peer_id` (from its card, once met): what a
        sound window between the two is sealed with."""
        theirs = self.peer_agreement_keys.get(bytes(peer_id))
        return None if theirs is None else direct_key(self.key, self.id, peer_id, theirs)

    def meet(self, to: Union[str, Address], timeout: float = 15) -> "Ack":
        """Probes `to` until it acks (a probe every 0.3 s): from then on that node knows this
        client as a peer of its rooms. A node answers the first probe from an address that has
        not proven itself with a probe of its own (docs/PROTOCOL.md, "Trust"), which this
        client acks (`auto_ack`); its next probe is acked. Returns the ack."""
        deadline = time.monotonic() + timeout
        while True:
            sequence = self.probe(to)
            try:
                return self.recv(timeout=0.3, kind=Ack, predicate=lambda g: g.message.sequence == sequence).message
            except TimeoutError:
                if time.monotonic() > deadline:
                    raise

    def probe(self, to: Union[str, Address], peers: Iterable[PeerRecord] = (),
              room_tags: Iterable[bytes] | None = None) -> int:
        """Sends a probe with this client's card (or these `room_tags`); returns its sequence
        (the ack echoes it)."""
        sequence = self.next_sequence()
        rooms = list(self.rooms)
        self.send_raw(to, encode_probe(self.id, self.nick, self.incarnation, sequence, monotonic_us(),
                                       self.port, rooms, peers, key=self.key,
                                       agreement_key=self.agreement_key,
                                       room_tags=self.room_tags(rooms) if room_tags is None else room_tags))
        return sequence

    def answer_probe(self, probe: Probe, source: Address) -> None:
        """An ack to the probe's source host at the probe's port, echoing sequence and sentAt,
        with this client's card."""
        rooms = list(self.rooms)
        self.send_raw((source[0], probe.port),
                      encode_ack(self.id, self.nick, self.incarnation, probe.sequence, probe.sent_at,
                                 rooms, key=self.key, agreement_key=self.agreement_key,
                                 room_tags=self.room_tags(rooms)))
        self.acks_sent += 1

    def missing(self, room: str, vector: VectorLike, limit: int = 64) -> list[Event]:
        """Held events of `room` that `vector` does not cover, ascending by origin then seq."""
        vector = VersionVector(vector or {})
        with self._lock:
            log = self.log(room)
            return sorted((e for e in log.events.values() if e.seq > vector.get(e.origin, 0)),
                          key=lambda e: e.key)[:limit]

    def answer_digest(self, digest: Digest) -> bool:
        """Pushes what a known peer's digest misses (at most 64 events), to the address the
        client knows for that peer. A digest from an unknown node is not answered."""
        to = self.peers.get(digest.from_id)
        missing = self.missing(digest.room, digest.vector) if digest.room in self.logs else []
        if to is None or not missing:
            return False
        self.send_events(to, missing)
        return True

    # -- receiving -----------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._closed:
            try:
                data, source = self.sock.recvfrom(65536)
            except OSError:
                return
            got = Received(data, source)
            try:
                got.message = decode_message(data)
            except WireError as e:
                got.error = e
            m = got.message
            if isinstance(m, (Probe, Ack)):
                if m.agreement_key != NO_AGREEMENT_KEY:
                    self.peer_agreement_keys[m.from_id] = m.agreement_key
                self.peer_cards[m.from_id] = (list(m.rooms), list(m.room_tags))
            try:
                if isinstance(m, Probe):
                    self.peers[m.from_id] = (source[0], m.port)
                    if self.auto_ack:
                        self.answer_probe(m, source)
                elif isinstance(m, Ack):
                    self.peers.setdefault(m.from_id, source)
                elif isinstance(m, Events) and self.auto_take:
                    self.take(m.events)
                elif isinstance(m, Digest) and self.auto_answer_digests:
                    self.answer_digest(m)
            except OSError:
                pass
            self.received.append(got)
            self._queue.put(got)

    def recv(self, timeout: float = 5.0, kind: type | tuple | None = None, predicate=None) -> Received:
        """The next queued datagram (of message class `kind`, matching `predicate`) within
        `timeout` s; others are dropped from the queue (they stay in `received`)."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no {getattr(kind, '__name__', kind) or 'datagram'} within {timeout} s")
            try:
                got = self._queue.get(timeout=remaining)
            except queue.Empty:
                continue
            if kind is not None and not isinstance(got.message, kind):
                continue
            if predicate is not None and not predicate(got):
                continue
            return got

    def wait_for_event(self, predicate, timeout: float = 10.0) -> Event:
        """The first pushed event (in any `events` datagram, before or within `timeout`) that
        matches `predicate`, whatever its signature."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            items = self.received[seen:]
            seen += len(items)
            for got in items:
                if isinstance(got.message, Events):
                    for e in got.message.events:
                        if predicate(e):
                            return e
            if time.monotonic() > deadline:
                raise TimeoutError(f"no matching event within {timeout} s")
            time.sleep(0.02)

    # -- TCP pull -------------------------------------------------------------------------------

    def sync(self, node: Union[str, Address], room: str | None = None, have: VectorLike = None,
             limit: int = 64, timeout: float = 10.0, take: bool = True) -> list[Event]:
        """Pulls the room's history from `node` over TCP: a syncRequest with `have` (default: what
        the client holds), then again with the new vector while the response says `more`.
        Returns every event received, in order; with `take`, the verified ones join the log."""
        room = room or self.rooms[0]
        vector = VersionVector(self.log(room).held() if have is None else have)
        deadline = time.monotonic() + timeout
        got: list[Event] = []
        with socket.create_connection(node_address(node), timeout=timeout) as tcp:
            splitter, pending = FrameSplitter(), []
            while True:
                tcp.sendall(frame(encode_sync_request(self.id, room, vector, limit)))
                response = decode_message(read_frame(tcp, splitter, pending, deadline))
                if not isinstance(response, SyncResponse):
                    raise WireError("unexpectedMessage", type(response).__name__)
                got += response.events
                if take:
                    self.take(response.events)
                for e in response.events:
                    if e.seq > vector.get(e.origin, 0):
                        vector[e.origin] = e.seq
                if not response.more:
                    return got
                if not response.events:
                    raise WireError("noProgress", "more = 1 with no events")


# --------------------------------------------------------------------------------------------
# Pictures: a blob's chunks, list and root, and a peer's side of fetching them (the doc's
# § Pictures and § 12 · pieceRequest, 13 · piece)

def picture_root(size: int, chunk_list: bytes) -> bytes:
    """root = SHA-256("huddle picture v1" ‖ bytes:u32 ‖ list), `size` being the file's bytes."""
    return hashlib.sha256(PICTURE_ROOT_TAG + enc_u32(size) + bytes(chunk_list)).digest()


def seal_picture(data: bytes, key: bytes) -> tuple[list[bytes], bytes, bytes]:
    """A picture file sealed into its blob, as the doc says: chunk i is ChaCha20-Poly1305 under
    `key` (32 bytes), nonce i as 12 bytes big-endian, of the file's bytes i·262 144 ..< (i+1)·262 144
    (ciphertext then the 16-byte tag); the list is the chunks' SHA-256s, 32 bytes each; the root
    hashes the list with the file's size. Returns (chunks, list, root)."""
    step = Limits.picture_chunk_bytes
    box = ChaCha20Poly1305(bytes(key))
    chunks = [box.encrypt(i.to_bytes(12, "big"), bytes(data[at:at + step]), None)
              for i, at in enumerate(range(0, len(data), step))]
    chunk_list = b"".join(hashlib.sha256(chunk).digest() for chunk in chunks)
    return chunks, chunk_list, picture_root(len(data), chunk_list)


def open_picture(chunks: Iterable[bytes], key: bytes) -> bytes:
    """The picture file back from its blob's chunks (raises if one does not open)."""
    box = ChaCha20Poly1305(bytes(key))
    return b"".join(box.decrypt(i.to_bytes(12, "big"), bytes(chunk), None) for i, chunk in enumerate(chunks))


@dataclass
class PieceConnection:
    """One TCP connection a `PieceServer` took: where from, when, and what it was asked, in
    order (`PieceRequest`s, and any other message it got)."""
    source: Address
    at: float = field(default_factory=time.monotonic)
    requests: list = field(default_factory=list)
    closed: bool = False


class PieceServer:
    """A peer's sync port, for pictures: listens for TCP on `client`'s host and port (the `port`
    of its probes, where a node fetches its pictures from) or on `host`:`port`.

    Each request on a connection is answered in order: a `PieceRequest` with a `Piece` of the
    same root and index, from the blobs `hold` was given (piece 0 the list, piece i chunk i − 1),
    with the first byte flipped for each (root, index) in `corrupt`, and with no bytes ("I do not
    hold it") for a root in `withheld` or one it does not hold; a request for a root in `stalled`
    is never answered (the connection stays open, read on); a `SyncRequest`, with `client`'s
    events the request misses (none without a client). Anything else closes the connection.
    Every connection and every request is recorded in `connections`."""

    def __init__(self, client: "WireClient | None" = None, host: str = "127.0.0.1", port: int = 0,
                 idle_timeout: float = 65):
        self.client = client
        self.blobs: dict[bytes, list[bytes]] = {}  # root -> pieces: the list, then the chunks
        self.corrupt: set[tuple[bytes, int]] = set()
        self.withheld: set[bytes] = set()
        self.stalled: set[bytes] = set()
        self.connections: list[PieceConnection] = []
        self.idle_timeout = idle_timeout
        self._closed = False
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((client.host, client.port) if client is not None else (host, port))
        self.sock.listen(128)
        self.sock.settimeout(0.2)
        self.host, self.port = self.sock.getsockname()
        self._thread = threading.Thread(target=self._accept, daemon=True, name=f"pieces-{self.port}")
        self._thread.start()

    def hold(self, data: bytes, key: bytes) -> bytes:
        """Seals the picture file `data` with `key` (`seal_picture`), serves its blob from now
        on and returns its root."""
        chunks, chunk_list, root = seal_picture(data, key)
        self.blobs[root] = [chunk_list, *chunks]
        return root

    @property
    def requests(self) -> list[PieceRequest]:
        """Every piece request received, in the order the connections came."""
        return [r for c in list(self.connections) for r in list(c.requests) if isinstance(r, PieceRequest)]

    def roots_asked(self) -> set[bytes]:
        """The roots some request named."""
        return {r.root for r in self.requests}

    def connections_asking(self, root: bytes) -> list[PieceConnection]:
        return [c for c in list(self.connections)
                if any(isinstance(r, PieceRequest) and r.root == root for r in list(c.requests))]

    def piece(self, request: PieceRequest) -> bytes:
        """The bytes this server answers `request` with (empty: it does not hold them)."""
        pieces = self.blobs.get(request.root)
        if pieces is None or request.root in self.withheld or request.index >= len(pieces):
            return b""
        data = pieces[request.index]
        if (request.root, request.index) in self.corrupt and data:
            data = bytes([data[0] ^ 0xFF]) + data[1:]
        return data

    def close(self) -> None:
        self._closed = True
        self.sock.close()
        self._thread.join(timeout=2)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                tcp, source = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            connection = PieceConnection(source)
            self.connections.append(connection)
            threading.Thread(target=self._serve, args=(tcp, connection), daemon=True).start()

    def _serve(self, tcp: socket.socket, connection: PieceConnection) -> None:
        splitter = FrameSplitter()
        try:
            with tcp:
                tcp.settimeout(self.idle_timeout)
                while not self._closed:
                    chunk = tcp.recv(65536)
                    if not chunk:
                        return
                    for payload in splitter.push(chunk):
                        message = decode_message(payload)
                        connection.requests.append(message)
                        if isinstance(message, PieceRequest) and message.root in self.stalled:
                            continue
                        if isinstance(message, PieceRequest):
                            tcp.sendall(frame(encode_piece(message.root, message.index, self.piece(message))))
                        elif isinstance(message, SyncRequest):
                            tcp.sendall(frame(self._sync_response(message)))
                        else:
                            return
        except (OSError, WireError):
            return
        finally:
            connection.closed = True

    def _sync_response(self, request: SyncRequest) -> bytes:
        if self.client is None or request.room not in self.client.logs:
            return encode_sync_response(request.room, [], False)
        missing = self.client.missing(request.room, request.have, limit=request.limit + 1)
        return encode_sync_response(request.room, missing[:request.limit], len(missing) > request.limit)


def fetch_pieces(node: Union[str, Address], requests: Iterable[tuple[bytes, int]],
                 timeout: float = 10.0) -> list[Piece]:
    """Asks `node`'s sync port for each (root, index), all at once on one connection, and
    returns its answers in order."""
    requests = list(requests)
    deadline = time.monotonic() + timeout
    with socket.create_connection(node_address(node), timeout=timeout) as tcp:
        tcp.sendall(b"".join(frame(encode_piece_request(root, index)) for root, index in requests))
        splitter, pending, answers = FrameSplitter(), [], []
        for _ in requests:
            answer = decode_message(read_frame(tcp, splitter, pending, deadline))
            if not isinstance(answer, Piece):
                raise WireError("unexpectedMessage", type(answer).__name__)
            answers.append(answer)
        return answers


def fetch_picture(node: Union[str, Address], picture: Picture, timeout: float = 10.0) -> bytes:
    """A picture's file, fetched from `node` as the doc's § Pictures says a member does: piece 0,
    kept only if it is 32 × ⌈bytes / 262 144⌉ bytes and hashes (with `bytes`) to the root; then
    every chunk, each kept only if its SHA-256 is the list's; then opened with the event's key.
    Raises `WireError` ("notHeld", "pictureMismatch") otherwise."""
    [listed] = fetch_pieces(node, [(picture.root, 0)], timeout)
    count = -(-picture.size // Limits.picture_chunk_bytes)
    if not listed.data:
        raise WireError("notHeld", picture.root.hex())
    if len(listed.data) != 32 * count or picture_root(picture.size, listed.data) != picture.root:
        raise WireError("pictureMismatch", "the chunk list")
    hashes = [listed.data[at:at + 32] for at in range(0, len(listed.data), 32)]
    chunks = fetch_pieces(node, [(picture.root, i + 1) for i in range(count)], timeout)
    for i, (chunk, expected) in enumerate(zip(chunks, hashes)):
        if not chunk.data:
            raise WireError("notHeld", f"chunk {i}")
        if hashlib.sha256(chunk.data).digest() != expected:
            raise WireError("pictureMismatch", f"chunk {i}")
    return open_picture([c.data for c in chunks], picture.key)


def client_with_pieces(nick: str = "pyclient", tries: int = 20, **client_args) -> tuple[WireClient, PieceServer]:
    """A `WireClient` and a `PieceServer` on its port. The client's UDP port comes from the kernel,
    which may have given that number to a TCP socket already (an outgoing connection's end):
    then another client is made, up to `tries` times."""
    for attempt in range(tries):
        client = WireClient(nick, **client_args)
        try:
            return client, PieceServer(client)
        except OSError as e:
            client.close()
            if e.errno != errno.EADDRINUSE or attempt == tries - 1:
                raise
    raise AssertionError("unreachable")
