"""A client of the node's page server written from docs/WEB.md alone: a raw WebSocket (RFC 6455,
over a plain socket, so a test can send what no browser would) and the page's pairing and sealed
session, with Python's `cryptography`. The tests use it as a second phone and as the attacker."""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
import time

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from huddletest import cpace


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def from_b64u(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def keystream(key: bytes, nonce: bytes, count: int) -> bytes:
    """ChaCha20's keystream of `key` and the 12-byte `nonce` from block 1 (RFC 8439's layout:
    cryptography takes the 32-bit counter and the nonce as one 16-byte value)."""
    full = (1).to_bytes(4, "little") + nonce
    return Cipher(algorithms.ChaCha20(key, full), mode=None).encryptor().update(bytes(count))


def pair_tag(confirm: bytes, page: bytes, node: bytes, code: str, who: str) -> bytes:
    nonce = who.encode().ljust(12, b"\0")
    return ChaCha20Poly1305(confirm).encrypt(nonce, b"", page + node + code.encode())


def frame_nonce(direction: int, count: int) -> bytes:
    return direction.to_bytes(4, "big") + count.to_bytes(8, "little")


def normalized(code: str) -> str:
    return code.upper().replace("-", "").replace(" ", "").replace("O", "0").replace("I", "1").replace("L", "1")


class Closed(Exception):
    """The server closed the connection (or answered the upgrade with an HTTP error: `status`)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


def connect(address: str, source: str | None = None, timeout: float = 10) -> socket.socket:
    """A TCP connection to `address` ("IP:PORT"), from the local address `source` if given (any of
    127/8 on Linux: another machine, as far as the server can tell)."""
    ip, port = address.rsplit(":", 1)
    return socket.create_connection((ip, int(port)), timeout=timeout,
                                    source_address=(source, 0) if source else None)


def request(address: str, head: str, source: str | None = None, timeout: float = 10) -> tuple[int, dict, bytes]:
    """Sends one raw HTTP request (`head`: request line and headers, no blank line) and reads the
    answer whole: (status, headers with lower-case names, body). The connection is closed after."""
    sock = connect(address, source, timeout)
    try:
        sock.sendall(head.rstrip("\r\n").encode() + b"\r\n\r\n")
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = sock.recv(65536)
            if not chunk:
                raise Closed(f"closed before the answer's head: {response[:200]!r}")
            response += chunk
        raw_head, _, body = response.partition(b"\r\n\r\n")
        lines = raw_head.decode(errors="replace").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            while len(body) < int(headers["content-length"]):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                body += chunk
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            while not body.endswith(b"0\r\n\r\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                body += chunk
            body = dechunked(body)
        return status, headers, body
    finally:
        sock.close()


def dechunked(body: bytes) -> bytes:
    out = b""
    while body:
        size, _, rest = body.partition(b"\r\n")
        length = int(size.split(b";")[0], 16)
        if length == 0:
            break
        out += rest[:length]
        body = rest[length + 2:]
    return out


class WebSocket:
    """One RFC 6455 connection, masked as a client must. `origin`/`host` can be anything: the
    attacker's headers; `source` is the local address it connects from."""

    def __init__(self, address: str, path: str = "/ws", host: str | None = None, origin: str | None = "same",
                 timeout: float = 10, source: str | None = None):
        self.sock = connect(address, source, timeout)
        host = host or address
        key = b64u(os.urandom(16)) + "=="
        headers = [f"GET {path} HTTP/1.1", f"Host: {host}", "Upgrade: websocket", "Connection: Upgrade",
                   f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
        if origin == "same":
            origin = f"http://{host}"
        if origin is not None:
            headers.append(f"Origin: {origin}")
        self.sock.sendall(("\r\n".join(headers) + "\r\n\r\n").encode())
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise Closed("closed during the upgrade")
            response += chunk
        head, _, self.buffer = response.partition(b"\r\n\r\n")
        self.status = int(head.split(b" ")[1])
        if self.status != 101:
            raise Closed(f"HTTP {self.status}: {head.decode(errors='replace')}", self.status)

    def send_frame(self, opcode: int, payload: bytes, fin: bool = True) -> None:
        """One frame, masked; `fin=False` leaves the message open for continuation frames (opcode 0)."""
        mask = os.urandom(4)
        header = bytes([(0x80 if fin else 0) | opcode])
        if len(payload) < 126:
            header += bytes([0x80 | len(payload)])
        elif len(payload) < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", len(payload))
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", len(payload))
        repeated = (mask * (len(payload) // 4 + 1))[:len(payload)]
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(len(payload), "big")
        self.sock.sendall(header + mask + masked)

    def send_text(self, obj) -> None:
        self.send_frame(1, json.dumps(obj).encode())

    def _fill(self, count: int) -> None:
        """Reads until the buffer holds `count` bytes (a timeout leaves what was read in it)."""
        while len(self.buffer) < count:
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                raise Closed("connection reset")
            if not chunk:
                raise Closed("connection closed")
            self.buffer += chunk

    def _frame(self) -> tuple[int, bytes]:
        """The next whole frame (opcode, payload), taken from the buffer only once all of it is
        there: a timeout in the middle of one loses nothing."""
        self._fill(2)
        length, at = self.buffer[1] & 0x7F, 2
        if length == 126:
            self._fill(4)
            length, at = struct.unpack(">H", self.buffer[2:4])[0], 4
        elif length == 127:
            self._fill(10)
            length, at = struct.unpack(">Q", self.buffer[2:10])[0], 10
        self._fill(at + length)
        first, payload = self.buffer[0], self.buffer[at:at + length]
        self.buffer = self.buffer[at + length:]
        return first & 0x0F, payload

    def receive(self) -> tuple[int, bytes]:
        """The next data frame (opcode, payload); answers pings; raises Closed on a close frame."""
        while True:
            opcode, payload = self._frame()
            if opcode == 8:
                raise Closed(f"close frame {payload[:2].hex()} {payload[2:].decode(errors='replace')}")
            if opcode == 9:
                self.send_frame(10, payload)
                continue
            if opcode in (1, 2):
                return opcode, payload

    def receive_json(self) -> dict:
        opcode, payload = self.receive()
        assert opcode == 1, f"expected a text frame, got opcode {opcode}"
        return json.loads(payload)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class PairingRefused(Exception):
    pass


class Phone:
    """A paired device: pairs with a code (typed or the QR's secret), then opens sessions and
    talks in sealed frames, as the page does."""

    def __init__(self, address: str, device: str | None = None, key: bytes | None = None):
        self.address = address
        self.device = device
        self.key = key
        self.ws: WebSocket | None = None
        self.lines: list[dict] = []   # every `line`'s line, in order
        self.views: list[dict] = []
        self.last_seq = 0

    def pair(self, code: str, name: str = "phone", ws: WebSocket | None = None) -> dict:
        """Pairs as docs/WEB.md says (CPace with the code, Tests/huddletest/cpace.py): the typed
        code normalised, or the QR's secret (anything longer than 8 letters) as it is."""
        ws = ws or WebSocket(self.address)
        code = normalized(code)
        kind = "qr" if len(code) > 8 else "typed"
        sid, ya, page = cpace.start(code)
        ws.send_text({"t": "pair", "code": kind, "sid": b64u(sid), "pub": b64u(page), "name": name})
        answer = ws.receive_json()
        if answer.get("t") != "pair":
            raise PairingRefused(answer)
        node = from_b64u(answer["pub"])
        confirm, device_key = cpace.keys(sid, ya, page, node)
        ws.send_text({"t": "proof", "tag": b64u(pair_tag(confirm, page, node, "", "client"))})
        try:
            answer = ws.receive_json()
        except Closed as closed:
            raise PairingRefused(str(closed))
        if answer.get("t") != "paired":
            raise PairingRefused(answer)
        assert from_b64u(answer["tag"]) == pair_tag(confirm, page, node, "", "server"), \
            "the node's tag does not prove it ran CPace with the same code"
        self.device, self.key = answer["device"], device_key
        self.ws = ws
        return answer

    def open(self, since: int | None = None) -> None:
        """Opens a session (on the pairing's connection if still open, else a new one)."""
        ws = self.ws or WebSocket(self.address)
        self.ws = ws
        ws.send_text({"t": "hello", "device": self.device})
        answer = ws.receive_json()
        if answer.get("t") != "challenge":
            raise PairingRefused(answer)
        connection = keystream(self.key, from_b64u(answer["nonce"]), 32)
        self.aead = ChaCha20Poly1305(connection)
        self.sent = 0
        self.received = 0
        self.send({"t": "open", "since": self.last_seq if since is None else since})

    def send(self, obj) -> None:
        sealed = self.aead.encrypt(frame_nonce(1, self.sent), json.dumps(obj).encode(), None)
        self.sent += 1
        self.ws.send_frame(2, sealed)

    def next(self, timeout: float = 10) -> dict:
        """The next sealed message; answers the node's pings as the page does. Raises
        socket.timeout if none but pings came within `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise socket.timeout(f"no message but pings within {timeout} s")
            self.ws.sock.settimeout(remaining)
            opcode, payload = self.ws.receive()
            assert opcode == 2, "after the challenge every frame is sealed"
            message = json.loads(self.aead.decrypt(frame_nonce(2, self.received), payload, None))
            self.received += 1
            if message["t"] == "ping":
                self.send({"t": "pong", "id": message["id"]})
                continue
            if message["t"] == "line":
                self.lines.append(message["line"])
                self.last_seq = message["seq"]
            elif message["t"] == "view":
                self.views.append(message)
            return message

    def wait_for(self, predicate, timeout: float = 15, what: str = "a message") -> dict:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no {what} within {timeout} s; lines {self.lines[-5:]}")
            try:
                message = self.next(timeout=remaining)
            except socket.timeout:
                continue
            if predicate(message):
                return message

    def line(self, predicate, timeout: float = 15, what: str = "a line") -> dict:
        for line in self.lines:
            if predicate(line):
                return line
        return self.wait_for(lambda m: m["t"] == "line" and predicate(m["line"]), timeout, what)["line"]

    def close(self) -> None:
        if self.ws:
            self.ws.close()
            self.ws = None
