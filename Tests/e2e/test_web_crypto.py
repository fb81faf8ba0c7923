"""The phone page's own cryptography, Sources/HuddleNode/Web/Page/crypto.js (docs/WEB.md: "Why the
page carries its own cryptography"), run in headless Chromium: the test vectors of RFC 7748
(X25519) and RFC 8439 (ChaCha20, Poly1305, the AEAD), and the same bytes as Python's
`cryptography` on random inputs, for the primitives and for WEB.md's pairing and session
derivations (computed here independently, from the document). No node runs: the page is a local
file that loads crypto.js, with `crypto.subtle` made to throw, as a plain-HTTP page has none."""

from __future__ import annotations

import base64
import json
import os
import random
import struct

import pytest
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.poly1305 import Poly1305

from huddletest import ROOT
from huddletest.browser import missing, phone, require_browser, screenshot

CRYPTO_JS = ROOT / "Sources" / "HuddleNode" / "Web" / "Page" / "crypto.js"

#: What app.js may use: the whole of HuddleCrypto, no more (WEB.md's derivations and what they
#: are made of).
API = sorted([
    "randomBytes", "x25519", "x25519Public", "chacha20", "poly1305", "seal", "open",
    "b64u", "fromB64u", "utf8", "fromUtf8", "concat",
    "pairKeys", "pairTag", "connKey", "Sealer", "Opener", "PAGE_TO_NODE", "NODE_TO_PAGE",
])

# The page: records the window's globals, takes crypto.subtle away (a plain-HTTP page has none,
# so crypto.js must not touch it), loads crypto.js, then notes which globals it added and gives
# the tests hex in and out (T.hex, T.unhex).
PAGE = """<!doctype html>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>crypto.js</title>
<script>
  const BEFORE = new Set(Object.getOwnPropertyNames(window));
  Object.defineProperty(Crypto.prototype, "subtle", {get() { throw new Error("crypto.js used crypto.subtle"); }});
</script>
<script src="%s"></script>
<script>
  window.__added = Object.getOwnPropertyNames(window).filter(function (n) { return !BEFORE.has(n); });
  window.T = {
    hex: function (b) { return Array.from(b, function (x) { return x.toString(16).padStart(2, "0"); }).join(""); },
    unhex: function (s) { return new Uint8Array((s.match(/../g) || []).map(function (x) { return parseInt(x, 16); })); },
  };
</script>
<body>crypto.js</body>
"""

# ---------------------------------------------------------------------------- RFC 7748 §5.2, §6.1

X25519_VECTORS = [
    ("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
     "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
     "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"),
    # u has its top bit set: it is ignored.
    ("4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
     "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
     "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957"),
]
# k = u = 9, then k, u = X25519(k, u), k: k after 1 and after 1,000 rounds.
X25519_ITERATED = {1: "422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079",
                   1000: "684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51"}
ALICE_PRIVATE = "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"
ALICE_PUBLIC = "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"
BOB_PRIVATE = "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"
BOB_PUBLIC = "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"
SHARED = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"

# ---------------------------------------------------------------------------- RFC 8439

SUNSCREEN = (b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, "
             b"sunscreen would be it.")
IETF = (b"Any submission to the IETF intended by the Contributor for publication as all or part of an IETF "
        b"Internet-Draft or RFC and any statement made within the context of an IETF activity is considered an "
        b"\"IETF Contribution\". Such statements include oral statements in IETF sessions, as well as written "
        b"and electronic communications made at any time or place, which are addressed to")
JABBERWOCKY = (b"'Twas brillig, and the slithy toves\nDid gyre and gimble in the wabe:\nAll mimsy were the "
               b"borogoves,\nAnd the mome raths outgrabe.")
DRAFTS = ("Internet-Drafts are draft documents valid for a maximum of six months and may be updated, replaced, "
          "or obsoleted by other documents at any time. It is inappropriate to use Internet-Drafts as reference "
          "material or to cite them other than as /\u201cwork in progress./\u201d").encode()

# §2.4.2: key 00..1f, nonce 00000000 0000004a 00000000, counter 1, SUNSCREEN.
SUNSCREEN_CIPHERTEXT = ("6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
                        "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
                        "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
                        "5af90bbf74a35be6b40b8eedf2785e42874d")

# A.1: the block function: key, nonce, block counter, the keystream of that block.
CHACHA20_BLOCKS = [
    ("0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000", 0,
     ("76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
      "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586")),
    ("0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000", 1,
     ("9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed"
      "29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f")),
    ("0000000000000000000000000000000000000000000000000000000000000001", "000000000000000000000000", 1,
     ("3aeb5224ecf849929b9d828db1ced4dd832025e8018b8160b82284f3c949aa5a"
      "8eca00bbb4a73bdad192b5c42f73f2fd4e273644c8b36125a64addeb006c13a0")),
    ("00ff000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000", 2,
     ("72d54dfbf12ec44b362692df94137f328fea8da73990265ec1bbbea1ae9af0ca"
      "13b25aa26cb4a648cb9b9d1be65b2c0924a66c54d545ec1b7374f4872e99f096")),
    ("0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000002", 0,
     ("c2c64d378cd536374ae204b9ef933fcd1a8b2288b3dfa49672ab765b54ee27c7"
      "8a970e0e955c14f3a88e741b97c286f75f8fc299e8148362fa198a39531bed6d")),
]

# §2.5.2 and A.3: Poly1305: one-time key (r, s), message, tag.
POLY1305 = [
    ("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b", b"Cryptographic Forum Research Group",
     "a8061dc1305136c6c22b8baf0c0127a9"),
    ("0000000000000000000000000000000000000000000000000000000000000000",
     bytes(64), "00000000000000000000000000000000"),
    ("0000000000000000000000000000000036e5f6b5c5e06070f0efca96227a863e",
     IETF, "36e5f6b5c5e06070f0efca96227a863e"),
    ("36e5f6b5c5e06070f0efca96227a863e00000000000000000000000000000000",
     IETF, "f3477e7cd95417af89a6b8794c310cf0"),
    ("1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0",
     JABBERWOCKY, "4541669a7eaaee61e708dc7cbcc5eb62"),
    ("0200000000000000000000000000000000000000000000000000000000000000",
     bytes.fromhex("ffffffffffffffffffffffffffffffff"), "03000000000000000000000000000000"),
    ("02000000000000000000000000000000ffffffffffffffffffffffffffffffff",
     bytes.fromhex("02000000000000000000000000000000"), "03000000000000000000000000000000"),
    ("0100000000000000000000000000000000000000000000000000000000000000",
     bytes.fromhex("fffffffffffffffffffffffffffffffff0ffffffffffffffffffffffffffffff"
                  "11000000000000000000000000000000"), "05000000000000000000000000000000"),
    ("0100000000000000000000000000000000000000000000000000000000000000",
     bytes.fromhex("fffffffffffffffffffffffffffffffffbfefefefefefefefefefefefefefefe"
                  "01010101010101010101010101010101"), "00000000000000000000000000000000"),
    ("0200000000000000000000000000000000000000000000000000000000000000",
     bytes.fromhex("fdffffffffffffffffffffffffffffff"), "faffffffffffffffffffffffffffffff"),
    ("0100000000000000040000000000000000000000000000000000000000000000",
     bytes.fromhex("e33594d7505e43b900000000000000003394d7505e4379cd0100000000000000"
                  "0000000000000000000000000000000001000000000000000000000000000000"), "14000000000000005500000000000000"),
    ("0100000000000000040000000000000000000000000000000000000000000000",
     bytes.fromhex("e33594d7505e43b900000000000000003394d7505e4379cd0100000000000000"
                  "00000000000000000000000000000000"), "13000000000000000000000000000000"),
]

# §2.8.2: the AEAD: plaintext SUNSCREEN.
AEAD_KEY = "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
AEAD_NONCE = "070000004041424344454647"
AEAD_AAD = "50515253c0c1c2c3c4c5c6c7"
AEAD_SEALED = ("d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"
               "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"
               "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
               "3ff4def08e4b7a9de576d26586cec64b61161ae10b594f09e26a7e902ecbd060"
               "0691")

# A.5: AEAD decryption: plaintext DRAFTS.
A5_KEY = "1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0"
A5_NONCE = "000000000102030405060708"
A5_AAD = "f33388860000000000004e91"
A5_SEALED = ("64a0861575861af460f062c79be643bd5e805cfd345cf389f108670ac76c8cb2"
             "4c6cfc18755d43eea09ee94e382d26b0bdb7b73c321b0100d4f03b7f355894cf"
             "332f830e710b97ce98c8a84abd0b948114ad176e008d33bd60f982b1ff37c855"
             "9797a06ef4f0ef61c186324e2b3506383606907b6a7c02b0f9f6157b53c867e4"
             "b9166c767b804d46a59b5216cde7a4e99040c5a40433225ee282a1b0a06c523e"
             "af4534d7f83fa1155b0047718cbc546a0d072b04b3564eea1b422273f548271a"
             "0bb2316053fa76991955ebd63159434ecebb4e466dae5a1073a6727627097a10"
             "49e617d91d361094fa68f0ff77987130305beaba2eda04df997b714d6c6f2c29"
             "a6ad5cb4022b02709beead9d67890cbb22392336fea1851f38")


# ---------------------------------------------------------------------------- the browser


# One browser for the module's tests (under pytest-xdist, one per worker that runs any of them;
# `--dist loadgroup` would keep them on one).
pytestmark = pytest.mark.xdist_group("browser")


@pytest.fixture(scope="module")
def browser_page(tmp_path_factory):
    """One phone for the module, on a local page that has loaded crypto.js; None if this machine
    has no browser (then `page` fails or skips each test by name)."""
    if missing():
        yield None
        return
    html = tmp_path_factory.mktemp("crypto_page") / "index.html"
    html.write_text(PAGE % CRYPTO_JS.as_uri(), encoding="utf-8")
    with phone() as driver:
        driver.get(html.as_uri())
        loaded = driver.execute_script("return typeof HuddleCrypto")
        assert loaded == "object", f"{CRYPTO_JS} did not define HuddleCrypto (typeof HuddleCrypto: {loaded})"
        yield driver


@pytest.fixture
def page(browser_page):
    require_browser()
    return browser_page


@pytest.fixture
def rng():
    """Random inputs, from a seed the output of a failing test shows (HUDDLE_TEST_SEED repeats it)."""
    seed = int(os.environ.get("HUDDLE_TEST_SEED") or int.from_bytes(os.urandom(4), "big"))
    print(f"random inputs from HUDDLE_TEST_SEED={seed}")
    return random.Random(seed)


def js(page, body: str, *args):
    """Runs `body` (a function body: `return` its answer) with H = HuddleCrypto, T = hex helpers,
    and arguments[0..]."""
    return page.execute_script("const H = HuddleCrypto, T = window.T;\n" + body, *args)


# ---------------------------------------------------------------------------- Python's side of WEB.md


def py_chacha20(key: bytes, nonce: bytes, counter: int, data: bytes) -> bytes:
    # cryptography's ChaCha20 takes the 32-bit block counter (little-endian) and the 96-bit
    # nonce as one 16-byte nonce.
    return Cipher(algorithms.ChaCha20(key, struct.pack("<I", counter) + nonce), mode=None).encryptor().update(data)


def py_x25519(scalar: bytes, u: bytes) -> bytes:
    return X25519PrivateKey.from_private_bytes(scalar).exchange(X25519PublicKey.from_public_bytes(u))


def py_public(scalar: bytes) -> bytes:
    return X25519PrivateKey.from_private_bytes(scalar).public_key().public_bytes_raw()


def py_pair_keys(z: bytes) -> tuple[bytes, bytes]:
    """WEB.md pairing step 3: kc, K."""
    stream = py_chacha20(z, bytes(12), 1, bytes(64))
    return stream[:32], stream[32:]


def py_pair_tag(kc: bytes, a: bytes, b: bytes, code: str, who: str) -> bytes:
    """WEB.md pairing steps 4 and 5: the tag of sealing nothing."""
    nonce = who.encode("ascii").ljust(12, b"\0")
    return ChaCha20Poly1305(kc).encrypt(nonce, b"", a + b + code.encode("utf-8"))


def py_conn_key(k: bytes, nonce: bytes) -> bytes:
    """WEB.md session step 3: kconn."""
    return py_chacha20(k, nonce, 1, bytes(32))


def py_frame_nonce(direction: int, count: int) -> bytes:
    return struct.pack(">I", direction) + struct.pack("<Q", count)


def py_seal_frames(key: bytes, direction: int, frames: list[bytes]) -> list[bytes]:
    aead = ChaCha20Poly1305(key)
    return [aead.encrypt(py_frame_nonce(direction, n), frame, None) for n, frame in enumerate(frames)]


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


LENGTHS = [0, 1, 63, 64, 65, 1000, 16384]


def random_lengths(rng: random.Random, n: int) -> list[int]:
    """Every length that matters for block edges, then random ones."""
    return (LENGTHS + [rng.randrange(0, 300) for _ in range(n)])[:n]


# ---------------------------------------------------------------------------- the API


def test_crypto_js_defines_one_global_with_the_documented_api(page):
    assert js(page, "return window.__added") == ["HuddleCrypto"]
    assert sorted(js(page, "return Object.keys(H)")) == API
    assert js(page, "return Object.isFrozen(H)") is True
    assert js(page, "return [H.PAGE_TO_NODE, H.NODE_TO_PAGE]") == [1, 2]
    # The page really has no crypto.subtle to lean on, as over plain HTTP.
    assert js(page, "try { crypto.subtle; return 'there'; } catch (e) { return 'gone'; }") == "gone"


# ---------------------------------------------------------------------------- the RFCs' vectors


def test_x25519_rfc7748_vectors(page):
    for scalar, u, out in X25519_VECTORS:
        assert js(page, "return T.hex(H.x25519(T.unhex(arguments[0]), T.unhex(arguments[1])))", scalar, u) == out
    iterated = js(page, """
        let k = new Uint8Array(32), u = new Uint8Array(32), seen = {};
        k[0] = u[0] = 9;
        for (let i = 1; i <= 1000; i++) {
            const next = H.x25519(k, u);
            u = k; k = next;
            if (i === 1 || i === 1000) seen[i] = T.hex(k);
        }
        return seen;""")
    assert iterated == {str(n): k for n, k in X25519_ITERATED.items()}


def test_x25519_rfc7748_diffie_hellman(page):
    got = js(page, """
        const a = T.unhex(arguments[0]), b = T.unhex(arguments[1]);
        const A = H.x25519Public(a), B = H.x25519Public(b);
        return [T.hex(A), T.hex(B), T.hex(H.x25519(a, B)), T.hex(H.x25519(b, A))];""", ALICE_PRIVATE, BOB_PRIVATE)
    assert got == [ALICE_PUBLIC, BOB_PUBLIC, SHARED, SHARED]


def test_x25519_refuses_a_low_order_point_as_python_does(page):
    scalar = os.urandom(32)
    for u in (bytes(32), b"\x01" + bytes(31)):
        with pytest.raises(ValueError):
            py_x25519(scalar, u)
        error = js(page, """
            try { H.x25519(T.unhex(arguments[0]), T.unhex(arguments[1])); return null; }
            catch (e) { return String(e.message); }""", scalar.hex(), u.hex())
        assert error is not None and "low-order" in error, (u.hex(), error)


def test_chacha20_rfc8439_vectors(page):
    key = bytes(range(32)).hex()
    assert js(page, "return T.hex(H.chacha20(T.unhex(arguments[0]), T.unhex(arguments[1]), 1, T.unhex(arguments[2])))",
              key, "000000000000004a00000000", SUNSCREEN.hex()) == SUNSCREEN_CIPHERTEXT
    # §2.3.2's block (counter 1, nonce 00000009 0000004a 00000000) is the keystream: XOR zeros.
    assert js(page, "return T.hex(H.chacha20(T.unhex(arguments[0]), T.unhex(arguments[1]), 1, new Uint8Array(64)))",
              key, "000000090000004a00000000") == (
        "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
        "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e")
    for key, nonce, counter, keystream in CHACHA20_BLOCKS:
        got = js(page, "return T.hex(H.chacha20(T.unhex(arguments[0]), T.unhex(arguments[1]), arguments[2], new Uint8Array(64)))",
                 key, nonce, counter)
        assert got == keystream, (key, nonce, counter)


def test_poly1305_rfc8439_vectors(page):
    got = js(page, "return arguments[0].map(v => T.hex(H.poly1305(T.unhex(v[0]), T.unhex(v[1]))))",
             [[key, message.hex()] for key, message, _ in POLY1305])
    assert got == [tag for _, _, tag in POLY1305]


def test_aead_rfc8439_vectors(page):
    sealed = js(page, "return T.hex(H.seal(T.unhex(arguments[0]), T.unhex(arguments[1]), T.unhex(arguments[2]), T.unhex(arguments[3])))",
                AEAD_KEY, AEAD_NONCE, SUNSCREEN.hex(), AEAD_AAD)
    assert sealed == AEAD_SEALED
    opened = js(page, """
        const r = H.open(T.unhex(arguments[0]), T.unhex(arguments[1]), T.unhex(arguments[2]), T.unhex(arguments[3]));
        return r === null ? null : T.hex(r);""", A5_KEY, A5_NONCE, A5_SEALED, A5_AAD)
    assert opened == DRAFTS.hex()


def test_open_refuses_any_flipped_bit(page):
    """One bit flipped anywhere (ciphertext, tag, additional data), a frame cut short, the wrong
    key or nonce: null, every time."""
    got = js(page, """
        const key = T.unhex(arguments[0]), nonce = T.unhex(arguments[1]), aad = T.unhex(arguments[2]);
        const sealed = T.unhex(arguments[3]);
        const flip = (b, bit) => { const c = b.slice(); c[bit >> 3] ^= 1 << (bit & 7); return c; };
        const out = {intact: H.open(key, nonce, sealed, aad) !== null, opened: []};
        for (const bit of [0, 7, 8 * 57 + 3, 8 * 113 + 7])        // the ciphertext: first, middle, last byte
            out.opened.push(["ciphertext", bit, H.open(key, nonce, flip(sealed, bit), aad)]);
        for (let bit = 8 * 114; bit < 8 * 130; bit += 5)          // the tag, across all 16 bytes
            out.opened.push(["tag", bit, H.open(key, nonce, flip(sealed, bit), aad)]);
        for (const bit of [0, 33, 95])                            // the additional data
            out.opened.push(["aad", bit, H.open(key, nonce, sealed, flip(aad, bit))]);
        out.opened.push(["no aad", 0, H.open(key, nonce, sealed)]);
        out.opened.push(["cut", 1, H.open(key, nonce, sealed.subarray(0, sealed.length - 1), aad)]);
        out.opened.push(["short", 15, H.open(key, nonce, sealed.subarray(0, 15), aad)]);
        out.opened.push(["key", 0, H.open(flip(key, 0), nonce, sealed, aad)]);
        out.opened.push(["nonce", 95, H.open(key, flip(nonce, 95), sealed, aad)]);
        return out;""", AEAD_KEY, AEAD_NONCE, AEAD_AAD, AEAD_SEALED)
    assert got["intact"] is True
    assert len(got["opened"]) > 20
    for where, bit, opened in got["opened"]:
        assert opened is None, f"a frame with {where} changed (bit {bit}) opened"


# ---------------------------------------------------------------------------- against Python, random inputs


def test_x25519_matches_python_on_random_keys(page, rng):
    pairs = [(rng.randbytes(32), rng.randbytes(32)) for _ in range(12)]
    got = js(page, """
        return arguments[0].map(([a, b]) => {
            a = T.unhex(a); b = T.unhex(b);
            const A = H.x25519Public(a), B = H.x25519Public(b);
            return [T.hex(A), T.hex(B), T.hex(H.x25519(a, B)), T.hex(H.x25519(b, A))];
        });""", [[a.hex(), b.hex()] for a, b in pairs])
    for (a, b), (pub_a, pub_b, z_ab, z_ba) in zip(pairs, got):
        assert pub_a == py_public(a).hex() and pub_b == py_public(b).hex()
        assert z_ab == z_ba == py_x25519(a, py_public(b)).hex()
    # A u with its top bit set, or not reduced mod p: both sides mask and reduce alike.
    for u in (bytes([0xff] * 32), (2**255 - 19 + 9).to_bytes(32, "little")):
        scalar = rng.randbytes(32)
        assert js(page, "return T.hex(H.x25519(T.unhex(arguments[0]), T.unhex(arguments[1])))",
                  scalar.hex(), u.hex()) == py_x25519(scalar, u).hex()


def test_chacha20_and_poly1305_match_python_on_random_inputs(page, rng):
    cases = []
    for length in random_lengths(rng, 20):
        cases.append({"key": rng.randbytes(32), "nonce": rng.randbytes(12), "counter": rng.choice([0, 1, 7, 2**32 - 300]),
                      "data": rng.randbytes(length)})
    got = js(page, """
        return arguments[0].map(c => [
            T.hex(H.chacha20(T.unhex(c.key), T.unhex(c.nonce), c.counter, T.unhex(c.data))),
            T.hex(H.poly1305(T.unhex(c.key), T.unhex(c.data))),
        ]);""", [{**c, "key": c["key"].hex(), "nonce": c["nonce"].hex(), "data": c["data"].hex()} for c in cases])
    for case, (stream, tag) in zip(cases, got):
        length = len(case["data"])
        assert stream == py_chacha20(case["key"], case["nonce"], case["counter"], case["data"]).hex(), length
        assert tag == Poly1305.generate_tag(case["key"], case["data"]).hex(), length
    # A counter that would wrap past 2^32 - 1 is refused, not repeated.
    assert js(page, """
        try { H.chacha20(new Uint8Array(32), new Uint8Array(12), 4294967295, new Uint8Array(65)); return "ran"; }
        catch (e) { return e.name; }""") == "RangeError"


def test_poly1305_matches_python_where_carries_pile_up(page, rng):
    """Many short messages under keys and data of all ones (the largest r clamping allows, s that
    overflows 2^128), mixed with random ones: where a limb's carry is easiest to get wrong."""
    def some(n: int) -> bytes:
        return rng.choice([b"\xff" * n, bytes(n), rng.randbytes(n), bytes(rng.choice([0, 0xff, 0xfe, 1]) for _ in range(n))])
    cases = [(some(32), some(rng.randrange(0, 100))) for _ in range(600)]
    got = js(page, "return arguments[0].map(([k, m]) => T.hex(H.poly1305(T.unhex(k), T.unhex(m))))",
             [[k.hex(), m.hex()] for k, m in cases])
    for (key, message), tag in zip(cases, got):
        assert tag == Poly1305.generate_tag(key, message).hex(), (key.hex(), message.hex())


def test_seal_and_open_match_python_both_ways(page, rng):
    cases = []
    for length in random_lengths(rng, 20):
        key, nonce = rng.randbytes(32), rng.randbytes(12)
        plaintext, aad = rng.randbytes(length), rng.randbytes(rng.choice([0, 1, 12, 16, 17, 100]))
        cases.append((key, nonce, plaintext, aad, ChaCha20Poly1305(key).encrypt(nonce, plaintext, aad)))
    got = js(page, """
        return arguments[0].map(([key, nonce, plaintext, aad, sealed]) => {
            [key, nonce, plaintext, aad, sealed] = [key, nonce, plaintext, aad, sealed].map(T.unhex);
            const opened = H.open(key, nonce, sealed, aad);
            return [T.hex(H.seal(key, nonce, plaintext, aad)), opened === null ? null : T.hex(opened)];
        });""", [[part.hex() for part in case] for case in cases])
    for (key, nonce, plaintext, aad, sealed), (ours, opened) in zip(cases, got):
        assert ours == sealed.hex(), len(plaintext)
        assert ChaCha20Poly1305(key).decrypt(nonce, bytes.fromhex(ours), aad) == plaintext
        assert opened == plaintext.hex(), len(plaintext)


# ---------------------------------------------------------------------------- WEB.md's derivations


def test_pairing_matches_the_document(page, rng):
    """Both sides of a pairing: the page's keys from crypto.js, the node's from Python; Z, kc, K
    and both tags agree, and a tag made with another code (or the other side's nonce) differs."""
    for code in ("ABCDEFGH", "7QW2ZK9M", "J3X5A7C9D2F4G6H8K1M3N5P7Q"):
        page_secret, node_secret = rng.randbytes(32), rng.randbytes(32)
        a, b = py_public(page_secret), py_public(node_secret)
        z = py_x25519(node_secret, a)
        kc, k = py_pair_keys(z)
        got = js(page, """
            const [secret, B, code] = [T.unhex(arguments[0]), T.unhex(arguments[1]), arguments[2]];
            const A = H.x25519Public(secret), Z = H.x25519(secret, B), keys = H.pairKeys(Z);
            return {A: T.hex(A), Z: T.hex(Z), kc: T.hex(keys.kc), K: T.hex(keys.K),
                    client: T.hex(H.pairTag(keys.kc, A, B, code, "client")),
                    server: T.hex(H.pairTag(keys.kc, A, B, code, "server")),
                    wrongCode: T.hex(H.pairTag(keys.kc, A, B, code.slice(1) + "X", "client"))};""",
                 page_secret.hex(), b.hex(), code)
        assert got["A"] == a.hex() and got["Z"] == z.hex()
        assert got["kc"] == kc.hex() and got["K"] == k.hex()
        assert got["client"] == py_pair_tag(kc, a, b, code, "client").hex()
        assert got["server"] == py_pair_tag(kc, a, b, code, "server").hex()
        assert len(bytes.fromhex(got["client"])) == 16
        assert len({got["client"], got["server"], got["wrongCode"]}) == 3
    assert js(page, """
        try { H.pairTag(new Uint8Array(32), new Uint8Array(32), new Uint8Array(32), "ABCDEFGH", "phone"); return "made"; }
        catch (e) { return e.name; }""") == "RangeError"


def test_session_frames_match_the_document(page, rng):
    """kconn from K and the challenge; the page's frames (dir 1) open in Python, the node's
    (dir 2, sealed in Python) open in order on the page; a replayed, reordered or foreign frame
    does not, and after one failure nothing does."""
    k, challenge = rng.randbytes(32), rng.randbytes(12)
    kconn = py_conn_key(k, challenge)
    page_frames = [json.dumps({"t": "open", "since": 0}).encode()] + [rng.randbytes(n) for n in (0, 1, 64, 1000, 16384)]
    node_frames = [json.dumps({"t": "line", "seq": n, "line": {"text": "héllo ✓"}}).encode() for n in range(4)]
    node_sealed = py_seal_frames(kconn, 2, node_frames)
    other_connection = py_seal_frames(py_conn_key(k, rng.randbytes(12)), 2, node_frames[:1])
    got = js(page, """
        const [K, N] = [T.unhex(arguments[0]), T.unhex(arguments[1])];
        const kconn = H.connKey(K, N);
        const sealer = H.Sealer(kconn, H.PAGE_TO_NODE);
        const sealed = arguments[2].map(f => T.hex(sealer.seal(T.unhex(f))));
        const frames = arguments[3].map(T.unhex);
        const opener = new H.Opener(kconn, H.NODE_TO_PAGE);
        const opened = [frames[0], frames[1]].map(f => opener.open(f));
        const afterGood = opener.count;
        const replayed = opener.open(frames[1]);          // frame 1 again: wrong counter
        const thenGood = opener.open(frames[2]);          // the right next frame, but too late
        const wrongWay = H.Opener(kconn, H.PAGE_TO_NODE).open(frames[0]);
        const skipped = H.Opener(kconn, H.NODE_TO_PAGE).open(frames[1]);
        const foreign = H.Opener(kconn, H.NODE_TO_PAGE).open(T.unhex(arguments[4]));
        return {kconn: T.hex(kconn), sealed, sealerCount: sealer.count, afterGood, failed: opener.failed,
                opened: opened.map(p => p === null ? null : H.fromUtf8(p)),
                rejected: [replayed, thenGood, wrongWay, skipped, foreign]};""",
             k.hex(), challenge.hex(), [f.hex() for f in page_frames], [f.hex() for f in node_sealed],
             other_connection[0].hex())
    assert got["kconn"] == kconn.hex()
    assert got["sealed"] == [s.hex() for s in py_seal_frames(kconn, 1, page_frames)]
    aead = ChaCha20Poly1305(kconn)
    for n, (frame, sealed) in enumerate(zip(page_frames, got["sealed"])):
        assert aead.decrypt(py_frame_nonce(1, n), bytes.fromhex(sealed), None) == frame
    assert got["sealerCount"] == len(page_frames)
    assert got["opened"] == [f.decode() for f in node_frames[:2]]
    assert got["afterGood"] == 2 and got["failed"] is True
    assert got["rejected"] == [None] * 5


def test_frame_nonces_count_up_little_endian(page):
    """COUNT is 8 bytes little-endian after DIR's 4 big-endian ones: frames past the first byte
    of the counter (256 and on) still match Python's nonce, byte for byte through the AEAD."""
    key = os.urandom(32)
    sealed = js(page, """
        const s = H.Sealer(T.unhex(arguments[0]), 2), out = [];
        for (let i = 0; i < 300; i++) out.push(T.hex(s.seal(new Uint8Array([i & 255]))));
        return out;""", key.hex())
    aead = ChaCha20Poly1305(key)
    for n in (0, 1, 255, 256, 299):
        assert bytes.fromhex(sealed[n]) == aead.encrypt(py_frame_nonce(2, n), bytes([n & 255]), None), n


# ---------------------------------------------------------------------------- the helpers


def test_base64url_utf8_and_concat(page, rng):
    samples = [b"", b"\0", b"\xff", b"ab", b"abc", bytes(range(256))] + [rng.randbytes(rng.randrange(1, 70)) for _ in range(20)]
    got = js(page, """
        return arguments[0].map(h => {
            const s = H.b64u(T.unhex(h)), back = H.fromB64u(s);
            return [s, back === null ? null : T.hex(back)];
        });""", [s.hex() for s in samples])
    for sample, (encoded, back) in zip(samples, got):
        assert encoded == b64u(sample) and back == sample.hex()
    # Not canonical unpadded base64url: null, never a guess.
    bad = ["A", "AB=", "AAA=", "AB", "AAB", "a+b/", "ab cd", "ab\ncd", "é", "AAAAA", None, 7]
    assert js(page, "return arguments[0].map(s => H.fromB64u(s))", bad) == [None] * len(bad)
    assert js(page, "return T.hex(H.fromB64u('AA'))") == "00"
    text = "ABCD-EFGH héllo ✓ 🎉"
    assert js(page, "return T.hex(H.utf8(arguments[0]))", text) == text.encode().hex()
    assert js(page, "return H.fromUtf8(H.utf8(arguments[0]))", text) == text
    assert js(page, "return T.hex(H.concat(new Uint8Array([1, 2]), [], new Uint8Array([3]), [4, 5]))") == "0102030405"
    assert js(page, "return T.hex(H.concat())") == ""


def test_random_bytes(page):
    got = js(page, """
        const a = H.randomBytes(32), b = H.randomBytes(32), big = H.randomBytes(70000);
        return [a.length, b.length, T.hex(a) !== T.hex(b), big.length, big.subarray(65536).some(x => x !== 0),
                H.randomBytes(0).length];""")
    assert got == [32, 32, True, 70000, True, 0]


# ---------------------------------------------------------------------------- time, and the phone


def test_fast_enough_on_a_phone(page):
    """What the page pays: one X25519 a pairing, a seal a frame (16 KiB at most), measured warm
    (medians). Each takes well under a millisecond on the machine this was written on; the
    bounds leave room for a busy CI machine, and Poly1305's is WEB.md's brief (64 KiB in 5 ms)."""
    times = js(page, """
        const median = (f, n) => { const t = []; for (let i = 0; i < n; i++) { const s = performance.now(); f(); t.push(performance.now() - s); }
                                   t.sort((a, b) => a - b); return t[n >> 1]; };
        const key = H.randomBytes(32), nonce = H.randomBytes(12), frame = H.randomBytes(16384), big = H.randomBytes(65536);
        const sealed = H.seal(key, nonce, frame);
        for (let i = 0; i < 20; i++) { H.seal(key, nonce, frame); H.poly1305(key, big); }
        const theirs = H.x25519Public(H.randomBytes(32));
        return {x25519: median(() => H.x25519(key, theirs), 9),
                seal16k: median(() => H.seal(key, nonce, frame), 21),
                open16k: median(() => H.open(key, nonce, sealed), 21),
                poly1305_64k: median(() => H.poly1305(key, big), 21)};""")
    print("crypto.js in headless Chromium, ms:", {k: round(v, 2) for k, v in times.items()})
    assert times["x25519"] < 20, times
    assert times["seal16k"] < 5, times
    assert times["open16k"] < 5, times
    assert times["poly1305_64k"] < 5, times


def test_the_phone_is_a_phone(page, tmp_path, monkeypatch):
    """huddletest.browser's emulation: 390 x 844 CSS pixels at 3x, touch, a mobile agent; and a
    screenshot lands in HUDDLE_SCREENSHOTS at the device's pixels."""
    got = js(page, "return [screen.width, screen.height, innerWidth, innerHeight, devicePixelRatio, "
                   "navigator.maxTouchPoints > 0, /Mobile/.test(navigator.userAgent), matchMedia('(pointer: coarse)').matches]")
    assert got == [390, 844, 390, 844, 3, True, True, True]
    monkeypatch.setenv("HUDDLE_SCREENSHOTS", str(tmp_path / "shots"))
    path = screenshot(page, "crypto page / phone")
    assert path == tmp_path / "shots" / "crypto-page-phone.png"
    png = path.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (390 * 3, 844 * 3)
