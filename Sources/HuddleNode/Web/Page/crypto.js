// The phone page's own cryptography: X25519 (RFC 7748), ChaCha20-Poly1305 (RFC 8439), SHA-512
// (FIPS 180-4), and the pairing and session derivations of docs/WEB.md built on them: pairing is
// CPace (draft-irtf-cfrg-cpace-21, suite CPACE-X25519-SHA512, the page the initiator).
//
// Why it exists: the phone reaches the node over plain http:// on the home network (no certificate
// signs a laptop's LAN address, and phones refuse a self-signed one), and a plain-HTTP page is not
// a secure context, so it has no WebCrypto (`crypto.subtle`), only `crypto.getRandomValues`. So the
// page carries these primitives itself. Written from the RFCs, FIPS 180-4 and the draft; checked
// against their test vectors, and against Python's `cryptography`, `hashlib` and the CPace of
// Tests/huddletest/cpace.py, by Tests/e2e/test_web_crypto.py in Chromium.
//
// Loaded by <script src="/crypto.js"> before app.js; defines one global, HuddleCrypto. Every
// function takes bytes as a Uint8Array (an ArrayBuffer, another typed array or a plain array of
// numbers is copied into one) and returns a Uint8Array.
//
// JavaScript gives no constant-time guarantees (BigInt arithmetic least of all). What this file
// can do, it does: the ladder always takes 255 steps and swaps by masking, not by branching on a
// key's bits; the tag comparison looks at all 16 bytes; nothing branches on a secret.

var HuddleCrypto = (function () {
    "use strict";

    // ---------------------------------------------------------------- bytes

    function bytes(value, length, what) {
        let out;
        if (value instanceof Uint8Array) out = value;
        else if (value instanceof ArrayBuffer) out = new Uint8Array(value);
        else if (ArrayBuffer.isView(value)) out = new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
        else if (Array.isArray(value)) out = Uint8Array.from(value);
        else throw new TypeError((what || "bytes") + ": expected a Uint8Array");
        if (length !== undefined && out.length !== length) {
            throw new RangeError((what || "bytes") + ": expected " + length + " bytes, got " + out.length);
        }
        return out;
    }

    function randomBytes(n) {
        const out = new Uint8Array(n);
        // getRandomValues fills at most 65536 bytes a call.
        for (let i = 0; i < n; i += 65536) crypto.getRandomValues(out.subarray(i, Math.min(n, i + 65536)));
        return out;
    }

    function concat(...arrays) {
        const parts = arrays.map(function (a) { return bytes(a); });
        let total = 0;
        for (const p of parts) total += p.length;
        const out = new Uint8Array(total);
        let at = 0;
        for (const p of parts) { out.set(p, at); at += p.length; }
        return out;
    }

    const encoder = new TextEncoder();
    const decoder = new TextDecoder("utf-8");
    function utf8(string) { return encoder.encode(String(string)); }
    function fromUtf8(data) { return decoder.decode(bytes(data)); }

    // base64url without padding (RFC 4648 §5).
    const B64U = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const B64U_VALUE = new Int16Array(128).fill(-1);
    for (let i = 0; i < 64; i++) B64U_VALUE[B64U.charCodeAt(i)] = i;

    function b64u(data) {
        const b = bytes(data);
        let out = "";
        let i = 0;
        for (; i + 3 <= b.length; i += 3) {
            const n = (b[i] << 16) | (b[i + 1] << 8) | b[i + 2];
            out += B64U[n >> 18] + B64U[(n >> 12) & 63] + B64U[(n >> 6) & 63] + B64U[n & 63];
        }
        if (b.length - i === 1) {
            const n = b[i] << 16;
            out += B64U[n >> 18] + B64U[(n >> 12) & 63];
        } else if (b.length - i === 2) {
            const n = (b[i] << 16) | (b[i + 1] << 8);
            out += B64U[n >> 18] + B64U[(n >> 12) & 63] + B64U[(n >> 6) & 63];
        }
        return out;
    }

    // null for anything that is not canonical unpadded base64url: a character outside the
    // alphabet (padding included), a length of 4k+1, or bits set past the last byte.
    function fromB64u(string) {
        if (typeof string !== "string" || string.length % 4 === 1) return null;
        const out = new Uint8Array(Math.floor(string.length * 3 / 4));
        let acc = 0, bits = 0, at = 0;
        for (let i = 0; i < string.length; i++) {
            const c = string.charCodeAt(i);
            const v = c < 128 ? B64U_VALUE[c] : -1;
            if (v < 0) return null;
            acc = ((acc << 6) | v) & 0xffffff;
            bits += 6;
            if (bits >= 8) {
                bits -= 8;
                out[at++] = (acc >> bits) & 0xff;
            }
        }
        if ((acc & ((1 << bits) - 1)) !== 0) return null;
        return out;
    }

    // ---------------------------------------------------------------- X25519 (RFC 7748)

    const P = (1n << 255n) - 19n;
    const A24 = 121665n;

    function add(a, b) { return (a + b) % P; }
    function sub(a, b) { return (a - b + P) % P; }
    function mul(a, b) { return (a * b) % P; }

    // a^e mod p. The exponents used here are public constants, so square-and-multiply over their
    // bits branches on nothing secret.
    function power(a, e) {
        let result = 1n, base = a;
        while (e > 0n) {
            if (e & 1n) result = mul(result, base);
            base = mul(base, base);
            e >>= 1n;
        }
        return result;
    }

    // 1/a as a^(p-2) (Fermat); 0 for 0.
    function invert(a) { return power(a, P - 2n); }

    function decodeLittleEndian(b) {
        let n = 0n;
        for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i]);
        return n;
    }

    function encodeLittleEndian32(n) {
        const out = new Uint8Array(32);
        for (let i = 0; i < 32; i++) { out[i] = Number(n & 0xffn); n >>= 8n; }
        return out;
    }

    // §5: the scalar's bits are taken from its clamped bytes; the u-coordinate's top bit is
    // ignored and a non-canonical value (p..2^255-1) is reduced.
    function x25519(scalar32, u32) {
        const k = bytes(scalar32, 32, "x25519 scalar").slice();
        k[0] &= 248;
        k[31] &= 127;
        k[31] |= 64;
        const u = bytes(u32, 32, "x25519 u").slice();
        u[31] &= 127;
        const x1 = decodeLittleEndian(u) % P;

        let x2 = 1n, z2 = 0n, x3 = x1, z3 = 1n;
        let swap = 0n;
        for (let t = 254; t >= 0; t--) {
            const bit = BigInt((k[t >> 3] >> (t & 7)) & 1);
            swap ^= bit;
            // Conditional swap: mask is 0 or all ones (-1n), no branch on the bit.
            const mask = -swap;
            let d = mask & (x2 ^ x3); x2 ^= d; x3 ^= d;
            d = mask & (z2 ^ z3); z2 ^= d; z3 ^= d;
            swap = bit;

            const a = add(x2, z2), aa = mul(a, a);
            const b = sub(x2, z2), bb = mul(b, b);
            const e = sub(aa, bb);
            const c = add(x3, z3), dd = sub(x3, z3);
            const da = mul(dd, a), cb = mul(c, b);
            const s = add(da, cb), m = sub(da, cb);
            x3 = mul(s, s);
            z3 = mul(x1, mul(m, m));
            x2 = mul(aa, bb);
            z2 = mul(e, add(aa, mul(A24, e)));
        }
        const mask = -swap;
        let d = mask & (x2 ^ x3); x2 ^= d; x3 ^= d;
        d = mask & (z2 ^ z3); z2 ^= d; z3 ^= d;

        const out = encodeLittleEndian32(mul(x2, invert(z2)));
        // §6.1: a peer's low-order point makes the shared secret all zeros; refuse it, as the
        // node's X25519 does.
        let any = 0;
        for (let i = 0; i < 32; i++) any |= out[i];
        if (any === 0) throw new Error("x25519: the other side's public key is a low-order point");
        return out;
    }

    const BASE_POINT = new Uint8Array(32);
    BASE_POINT[0] = 9;
    function x25519Public(scalar32) { return x25519(scalar32, BASE_POINT); }

    // ---------------------------------------------------------------- ChaCha20 (RFC 8439 §2.1-2.4)

    // The 16-word state: "expand 32-byte k", the key, the block counter, the nonce.
    function chachaState(key, counter, nonce) {
        const s = new Uint32Array(16);
        s[0] = 0x61707865; s[1] = 0x3320646e; s[2] = 0x79622d32; s[3] = 0x6b206574;
        for (let i = 0; i < 8; i++) s[4 + i] = readUint32LE(key, 4 * i);
        s[12] = counter;
        for (let i = 0; i < 3; i++) s[13 + i] = readUint32LE(nonce, 4 * i);
        return s;
    }

    function readUint32LE(b, at) {
        return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
    }

    // One block: 20 rounds (10 column + diagonal pairs) of the quarter round over a copy of the
    // state, added back to the state, written little-endian into `out` (64 bytes).
    function chachaBlock(s, out) {
        let x0 = s[0], x1 = s[1], x2 = s[2], x3 = s[3], x4 = s[4], x5 = s[5], x6 = s[6], x7 = s[7];
        let x8 = s[8], x9 = s[9], x10 = s[10], x11 = s[11], x12 = s[12], x13 = s[13], x14 = s[14], x15 = s[15];
        for (let i = 0; i < 10; i++) {
            // The quarter round (§2.1) inlined: a += b; d ^= a; d <<<= 16; c += d; b ^= c; b <<<= 12;
            // a += b; d ^= a; d <<<= 8; c += d; b ^= c; b <<<= 7. `| 0` keeps each word 32 bits.
            // Columns.
            x0 = (x0 + x4) | 0; x12 ^= x0; x12 = (x12 << 16) | (x12 >>> 16);
            x8 = (x8 + x12) | 0; x4 ^= x8; x4 = (x4 << 12) | (x4 >>> 20);
            x0 = (x0 + x4) | 0; x12 ^= x0; x12 = (x12 << 8) | (x12 >>> 24);
            x8 = (x8 + x12) | 0; x4 ^= x8; x4 = (x4 << 7) | (x4 >>> 25);

            x1 = (x1 + x5) | 0; x13 ^= x1; x13 = (x13 << 16) | (x13 >>> 16);
            x9 = (x9 + x13) | 0; x5 ^= x9; x5 = (x5 << 12) | (x5 >>> 20);
            x1 = (x1 + x5) | 0; x13 ^= x1; x13 = (x13 << 8) | (x13 >>> 24);
            x9 = (x9 + x13) | 0; x5 ^= x9; x5 = (x5 << 7) | (x5 >>> 25);

            x2 = (x2 + x6) | 0; x14 ^= x2; x14 = (x14 << 16) | (x14 >>> 16);
            x10 = (x10 + x14) | 0; x6 ^= x10; x6 = (x6 << 12) | (x6 >>> 20);
            x2 = (x2 + x6) | 0; x14 ^= x2; x14 = (x14 << 8) | (x14 >>> 24);
            x10 = (x10 + x14) | 0; x6 ^= x10; x6 = (x6 << 7) | (x6 >>> 25);

            x3 = (x3 + x7) | 0; x15 ^= x3; x15 = (x15 << 16) | (x15 >>> 16);
            x11 = (x11 + x15) | 0; x7 ^= x11; x7 = (x7 << 12) | (x7 >>> 20);
            x3 = (x3 + x7) | 0; x15 ^= x3; x15 = (x15 << 8) | (x15 >>> 24);
            x11 = (x11 + x15) | 0; x7 ^= x11; x7 = (x7 << 7) | (x7 >>> 25);

            // Diagonals.
            x0 = (x0 + x5) | 0; x15 ^= x0; x15 = (x15 << 16) | (x15 >>> 16);
            x10 = (x10 + x15) | 0; x5 ^= x10; x5 = (x5 << 12) | (x5 >>> 20);
            x0 = (x0 + x5) | 0; x15 ^= x0; x15 = (x15 << 8) | (x15 >>> 24);
            x10 = (x10 + x15) | 0; x5 ^= x10; x5 = (x5 << 7) | (x5 >>> 25);

            x1 = (x1 + x6) | 0; x12 ^= x1; x12 = (x12 << 16) | (x12 >>> 16);
            x11 = (x11 + x12) | 0; x6 ^= x11; x6 = (x6 << 12) | (x6 >>> 20);
            x1 = (x1 + x6) | 0; x12 ^= x1; x12 = (x12 << 8) | (x12 >>> 24);
            x11 = (x11 + x12) | 0; x6 ^= x11; x6 = (x6 << 7) | (x6 >>> 25);

            x2 = (x2 + x7) | 0; x13 ^= x2; x13 = (x13 << 16) | (x13 >>> 16);
            x8 = (x8 + x13) | 0; x7 ^= x8; x7 = (x7 << 12) | (x7 >>> 20);
            x2 = (x2 + x7) | 0; x13 ^= x2; x13 = (x13 << 8) | (x13 >>> 24);
            x8 = (x8 + x13) | 0; x7 ^= x8; x7 = (x7 << 7) | (x7 >>> 25);

            x3 = (x3 + x4) | 0; x14 ^= x3; x14 = (x14 << 16) | (x14 >>> 16);
            x9 = (x9 + x14) | 0; x4 ^= x9; x4 = (x4 << 12) | (x4 >>> 20);
            x3 = (x3 + x4) | 0; x14 ^= x3; x14 = (x14 << 8) | (x14 >>> 24);
            x9 = (x9 + x14) | 0; x4 ^= x9; x4 = (x4 << 7) | (x4 >>> 25);
        }
        const x = [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15];
        for (let i = 0; i < 16; i++) {
            const w = (x[i] + s[i]) | 0;
            out[4 * i] = w; out[4 * i + 1] = w >>> 8; out[4 * i + 2] = w >>> 16; out[4 * i + 3] = w >>> 24;
        }
    }

    // §2.4: data XOR the keystream that starts at block `counter`. The counter is 32 bits; running
    // past 2^32 - 1 would repeat the keystream, so that throws.
    function chacha20(key32, nonce12, counter, data) {
        const key = bytes(key32, 32, "chacha20 key");
        const nonce = bytes(nonce12, 12, "chacha20 nonce");
        const input = bytes(data);
        if (!Number.isInteger(counter) || counter < 0 || counter > 0xffffffff) {
            throw new RangeError("chacha20: the block counter is a 32-bit unsigned integer");
        }
        const blocks = Math.ceil(input.length / 64);
        if (blocks > 0 && counter + blocks - 1 > 0xffffffff) {
            throw new RangeError("chacha20: the block counter would wrap");
        }
        const state = chachaState(key, counter, nonce);
        const stream = new Uint8Array(64);
        const out = new Uint8Array(input.length);
        for (let at = 0; at < input.length; at += 64) {
            chachaBlock(state, stream);
            state[12] = state[12] + 1;
            const n = Math.min(64, input.length - at);
            for (let i = 0; i < n; i++) out[at + i] = input[at + i] ^ stream[i];
        }
        return out;
    }

    // ---------------------------------------------------------------- Poly1305 (RFC 8439 §2.5)

    // Numbers mod p = 2^130 - 5 are held as ten limbs of 13 bits, least significant first, in
    // plain JavaScript numbers. A limb of h (under 2^14 once a block is added) times a limb of r
    // or 5r (under 2^16) is under 2^30, a sum of ten of them under 2^34: far inside the 2^53 up
    // to which a double is an exact integer, so every step below is exact. 64 KiB take about
    // half a millisecond in Chromium.
    const LIMB_BITS = 13;
    const LIMB_MASK = 0x1fff;
    const TWO_128 = 1 << 11;   // 2^128 is bit 11 of limb 9 (9 * 13 + 11 = 128)

    // The ten 13-bit limbs of the 16 little-endian bytes at b[at..], read as eight 16-bit words.
    function limbs16(b, at) {
        const t0 = b[at] | (b[at + 1] << 8), t1 = b[at + 2] | (b[at + 3] << 8);
        const t2 = b[at + 4] | (b[at + 5] << 8), t3 = b[at + 6] | (b[at + 7] << 8);
        const t4 = b[at + 8] | (b[at + 9] << 8), t5 = b[at + 10] | (b[at + 11] << 8);
        const t6 = b[at + 12] | (b[at + 13] << 8), t7 = b[at + 14] | (b[at + 15] << 8);
        return [
            t0 & LIMB_MASK,                         // bits   0..12
            ((t0 >>> 13) | (t1 << 3)) & LIMB_MASK,  // bits  13..25
            ((t1 >>> 10) | (t2 << 6)) & LIMB_MASK,  // bits  26..38
            ((t2 >>> 7) | (t3 << 9)) & LIMB_MASK,   // bits  39..51
            ((t3 >>> 4) | (t4 << 12)) & LIMB_MASK,  // bits  52..64
            (t4 >>> 1) & LIMB_MASK,                 // bits  65..77
            ((t4 >>> 14) | (t5 << 2)) & LIMB_MASK,  // bits  78..90
            ((t5 >>> 11) | (t6 << 5)) & LIMB_MASK,  // bits  91..103
            ((t6 >>> 8) | (t7 << 8)) & LIMB_MASK,   // bits 104..116
            t7 >>> 5,                               // bits 117..127
        ];
    }

    // Carries each limb's excess into the next; what leaves the top limb is a multiple of 2^130,
    // and 2^130 = 5 (mod p), so it comes back into the bottom limb times 5.
    function carry(h) {
        let c = 0;
        for (let i = 0; i < 10; i++) {
            const v = h[i] + c;
            c = (v / 8192) | 0;
            h[i] = v - c * 8192;
        }
        h[0] += 5 * c;
    }

    function poly1305(key32, message) {
        const key = bytes(key32, 32, "poly1305 key");
        // r: the key's first 16 bytes, clamped (§2.5.1: r &= 0x0ffffffc0ffffffc0ffffffc0fffffff).
        const clamped = key.slice(0, 16);
        clamped[3] &= 15; clamped[7] &= 15; clamped[11] &= 15; clamped[15] &= 15;
        clamped[4] &= 252; clamped[8] &= 252; clamped[12] &= 252;
        const h = poly1305Blocks(limbs16(clamped, 0), bytes(message));
        return poly1305Finish(h, key.subarray(16, 32));
    }

    // The accumulator over every block of msg: h = (h + block) * r mod p, partly reduced. (Its
    // own function, apart from the finish, so the engine optimises this loop on its own.)
    function poly1305Blocks(r, msg) {
        const [r0, r1, r2, r3, r4, r5, r6, r7, r8, r9] = r;
        // 2^130 = 5 (mod p): a product's limb 10 + k is its limb k times 5.
        const s1 = 5 * r1, s2 = 5 * r2, s3 = 5 * r3, s4 = 5 * r4, s5 = 5 * r5;
        const s6 = 5 * r6, s7 = 5 * r7, s8 = 5 * r8, s9 = 5 * r9;

        let h0 = 0, h1 = 0, h2 = 0, h3 = 0, h4 = 0, h5 = 0, h6 = 0, h7 = 0, h8 = 0, h9 = 0;
        const short = new Uint8Array(16);
        for (let at = 0; at < msg.length; at += 16) {
            // h += the block with a 1 byte after it: 2^128 for a whole block; a short last block
            // gets its 1 byte in place, then zeros. (The limbs as in limbs16, inline: this is the
            // loop that has to be quick.)
            let b = msg, o = at, top = TWO_128;
            if (msg.length - at < 16) {
                short.set(msg.subarray(at));
                short[msg.length - at] = 1;
                b = short; o = 0; top = 0;
            }
            const t0 = b[o] | (b[o + 1] << 8), t1 = b[o + 2] | (b[o + 3] << 8);
            const t2 = b[o + 4] | (b[o + 5] << 8), t3 = b[o + 6] | (b[o + 7] << 8);
            const t4 = b[o + 8] | (b[o + 9] << 8), t5 = b[o + 10] | (b[o + 11] << 8);
            const t6 = b[o + 12] | (b[o + 13] << 8), t7 = b[o + 14] | (b[o + 15] << 8);
            h0 += t0 & LIMB_MASK;
            h1 += ((t0 >>> 13) | (t1 << 3)) & LIMB_MASK;
            h2 += ((t1 >>> 10) | (t2 << 6)) & LIMB_MASK;
            h3 += ((t2 >>> 7) | (t3 << 9)) & LIMB_MASK;
            h4 += ((t3 >>> 4) | (t4 << 12)) & LIMB_MASK;
            h5 += (t4 >>> 1) & LIMB_MASK;
            h6 += ((t4 >>> 14) | (t5 << 2)) & LIMB_MASK;
            h7 += ((t5 >>> 11) | (t6 << 5)) & LIMB_MASK;
            h8 += ((t6 >>> 8) | (t7 << 8)) & LIMB_MASK;
            h9 += (t7 >>> 5) | top;

            // h = h * r mod p: limb k of the product gathers h[i]*r[j] for i + j = k and, from
            // i + j = k + 10, h[i]*r[j]*2^130 = h[i]*5r[j].
            const d0 = h0 * r0 + h1 * s9 + h2 * s8 + h3 * s7 + h4 * s6 + h5 * s5 + h6 * s4 + h7 * s3 + h8 * s2 + h9 * s1;
            const d1 = h0 * r1 + h1 * r0 + h2 * s9 + h3 * s8 + h4 * s7 + h5 * s6 + h6 * s5 + h7 * s4 + h8 * s3 + h9 * s2;
            const d2 = h0 * r2 + h1 * r1 + h2 * r0 + h3 * s9 + h4 * s8 + h5 * s7 + h6 * s6 + h7 * s5 + h8 * s4 + h9 * s3;
            const d3 = h0 * r3 + h1 * r2 + h2 * r1 + h3 * r0 + h4 * s9 + h5 * s8 + h6 * s7 + h7 * s6 + h8 * s5 + h9 * s4;
            const d4 = h0 * r4 + h1 * r3 + h2 * r2 + h3 * r1 + h4 * r0 + h5 * s9 + h6 * s8 + h7 * s7 + h8 * s6 + h9 * s5;
            const d5 = h0 * r5 + h1 * r4 + h2 * r3 + h3 * r2 + h4 * r1 + h5 * r0 + h6 * s9 + h7 * s8 + h8 * s7 + h9 * s6;
            const d6 = h0 * r6 + h1 * r5 + h2 * r4 + h3 * r3 + h4 * r2 + h5 * r1 + h6 * r0 + h7 * s9 + h8 * s8 + h9 * s7;
            const d7 = h0 * r7 + h1 * r6 + h2 * r5 + h3 * r4 + h4 * r3 + h5 * r2 + h6 * r1 + h7 * r0 + h8 * s9 + h9 * s8;
            const d8 = h0 * r8 + h1 * r7 + h2 * r6 + h3 * r5 + h4 * r4 + h5 * r3 + h6 * r2 + h7 * r1 + h8 * r0 + h9 * s9;
            const d9 = h0 * r9 + h1 * r8 + h2 * r7 + h3 * r6 + h4 * r5 + h5 * r4 + h6 * r3 + h7 * r2 + h8 * r1 + h9 * r0;

            // Back to 13-bit limbs: each limb's excess goes into the next, the top's (a multiple
            // of 2^130) into the bottom times 5, and the bottom's excess once more into limb 1.
            // (v / 8192 | 0 is the floor: v is below 2^36, the quotient below 2^31. Math.floor
            // here made the whole function ten times slower in V8.)
            let v, c;
            v = d0;     c = (v / 8192) | 0; h0 = v - c * 8192;
            v = d1 + c; c = (v / 8192) | 0; h1 = v - c * 8192;
            v = d2 + c; c = (v / 8192) | 0; h2 = v - c * 8192;
            v = d3 + c; c = (v / 8192) | 0; h3 = v - c * 8192;
            v = d4 + c; c = (v / 8192) | 0; h4 = v - c * 8192;
            v = d5 + c; c = (v / 8192) | 0; h5 = v - c * 8192;
            v = d6 + c; c = (v / 8192) | 0; h6 = v - c * 8192;
            v = d7 + c; c = (v / 8192) | 0; h7 = v - c * 8192;
            v = d8 + c; c = (v / 8192) | 0; h8 = v - c * 8192;
            v = d9 + c; c = (v / 8192) | 0; h9 = v - c * 8192;
            h0 += 5 * c;
            h1 += h0 >>> LIMB_BITS;
            h0 &= LIMB_MASK;
        }

        return [h0, h1, h2, h3, h4, h5, h6, h7, h8, h9];
    }

    // The tag from the accumulator h and the key's last 16 bytes, s.
    function poly1305Finish(h, s) {
        // Fully reduce. After two more carries limbs 1-9 are 13 bits and h < 2^130 (limb 0 can
        // be a little over only if the second one wrapped, leaving limbs 1-9 zero: one more step
        // moves that into limb 1). Then h < 2^130 < 2p, and h - p = h + 5 - 2^130 is taken if it
        // does not go negative (if h + 5 reaches 2^130).
        carry(h);
        carry(h);
        h[1] += h[0] >>> LIMB_BITS;
        h[0] &= LIMB_MASK;
        const g = new Array(10);
        let c = 5;
        for (let i = 0; i < 10; i++) {
            const v = h[i] + c;
            c = v >>> LIMB_BITS;
            g[i] = v & LIMB_MASK;
        }
        const useG = -c;          // c is 1 if h + 5 >= 2^130: all ones; else 0
        for (let i = 0; i < 10; i++) h[i] = (g[i] & useG) | (h[i] & ~useG);

        // tag = (h + s) mod 2^128, s the key's last 16 bytes, little-endian: h's bits go out a
        // byte at a time, each added to s's byte with the carry from the one before.
        const tag = new Uint8Array(16);
        let acc = 0, accBits = 0, at = 0, sum = 0;
        for (let i = 0; i < 10 && at < 16; i++) {
            acc |= h[i] << accBits;
            accBits += LIMB_BITS;
            while (accBits >= 8 && at < 16) {
                sum += (acc & 0xff) + s[at];
                tag[at++] = sum;
                sum >>>= 8;
                acc >>>= 8;
                accBits -= 8;
            }
        }
        return tag;
    }

    // ---------------------------------------------------------------- the AEAD (RFC 8439 §2.8)

    function padTo16(n) { return (16 - (n % 16)) % 16; }

    // The Poly1305 key (§2.6): the first 32 bytes of block 0's keystream.
    function polyKey(key, nonce) { return chacha20(key, nonce, 0, new Uint8Array(32)); }

    // aad, zeros to 16, ciphertext, zeros to 16, both lengths as 64-bit little-endian.
    function macData(aad, ciphertext) {
        const aadEnd = aad.length + padTo16(aad.length);
        const ctEnd = aadEnd + ciphertext.length + padTo16(ciphertext.length);
        const out = new Uint8Array(ctEnd + 16);
        out.set(aad, 0);
        out.set(ciphertext, aadEnd);
        writeUint64LE(out, ctEnd, aad.length);
        writeUint64LE(out, ctEnd + 8, ciphertext.length);
        return out;
    }

    function writeUint64LE(out, at, n) {
        const low = n % 0x100000000, high = Math.floor(n / 0x100000000);
        for (let i = 0; i < 4; i++) {
            out[at + i] = (low >>> (8 * i)) & 0xff;
            out[at + 4 + i] = (high >>> (8 * i)) & 0xff;
        }
    }

    function seal(key32, nonce12, plaintext, aad) {
        const key = bytes(key32, 32, "seal key");
        const nonce = bytes(nonce12, 12, "seal nonce");
        const additional = aad == null ? new Uint8Array(0) : bytes(aad);
        const ciphertext = chacha20(key, nonce, 1, bytes(plaintext));
        const tag = poly1305(polyKey(key, nonce), macData(additional, ciphertext));
        const out = new Uint8Array(ciphertext.length + 16);
        out.set(ciphertext, 0);
        out.set(tag, ciphertext.length);
        return out;
    }

    function equal16(a, b) {
        let diff = 0;
        for (let i = 0; i < 16; i++) diff |= a[i] ^ b[i];
        return diff === 0;
    }

    // The plaintext, or null if the tag does not match (compared in full before deciding).
    function open(key32, nonce12, sealed, aad) {
        const key = bytes(key32, 32, "open key");
        const nonce = bytes(nonce12, 12, "open nonce");
        const additional = aad == null ? new Uint8Array(0) : bytes(aad);
        const input = bytes(sealed);
        if (input.length < 16) return null;
        const ciphertext = input.subarray(0, input.length - 16);
        const expected = poly1305(polyKey(key, nonce), macData(additional, ciphertext));
        if (!equal16(expected, input.subarray(input.length - 16))) return null;
        return chacha20(key, nonce, 1, ciphertext);
    }

    // ---------------------------------------------------------------- SHA-512 (FIPS 180-4)

    // JavaScript's bit operators work on 32 bits, so every 64-bit word here is two: its high half
    // and its low half, the high one first (in arrays: hi at 2i, lo at 2i + 1). A sum of 64-bit
    // words adds the low halves as plain numbers (a few of them stay far below 2^53, so exactly),
    // carries what passes 2^32 into the high halves, and keeps each half mod 2^32.

    // §4.2.3: the first 64 bits of the fractional parts of the cube roots of the first 80 primes.
    const SHA512_K = new Uint32Array([
        0x428a2f98, 0xd728ae22, 0x71374491, 0x23ef65cd, 0xb5c0fbcf, 0xec4d3b2f, 0xe9b5dba5, 0x8189dbbc,
        0x3956c25b, 0xf348b538, 0x59f111f1, 0xb605d019, 0x923f82a4, 0xaf194f9b, 0xab1c5ed5, 0xda6d8118,
        0xd807aa98, 0xa3030242, 0x12835b01, 0x45706fbe, 0x243185be, 0x4ee4b28c, 0x550c7dc3, 0xd5ffb4e2,
        0x72be5d74, 0xf27b896f, 0x80deb1fe, 0x3b1696b1, 0x9bdc06a7, 0x25c71235, 0xc19bf174, 0xcf692694,
        0xe49b69c1, 0x9ef14ad2, 0xefbe4786, 0x384f25e3, 0x0fc19dc6, 0x8b8cd5b5, 0x240ca1cc, 0x77ac9c65,
        0x2de92c6f, 0x592b0275, 0x4a7484aa, 0x6ea6e483, 0x5cb0a9dc, 0xbd41fbd4, 0x76f988da, 0x831153b5,
        0x983e5152, 0xee66dfab, 0xa831c66d, 0x2db43210, 0xb00327c8, 0x98fb213f, 0xbf597fc7, 0xbeef0ee4,
        0xc6e00bf3, 0x3da88fc2, 0xd5a79147, 0x930aa725, 0x06ca6351, 0xe003826f, 0x14292967, 0x0a0e6e70,
        0x27b70a85, 0x46d22ffc, 0x2e1b2138, 0x5c26c926, 0x4d2c6dfc, 0x5ac42aed, 0x53380d13, 0x9d95b3df,
        0x650a7354, 0x8baf63de, 0x766a0abb, 0x3c77b2a8, 0x81c2c92e, 0x47edaee6, 0x92722c85, 0x1482353b,
        0xa2bfe8a1, 0x4cf10364, 0xa81a664b, 0xbc423001, 0xc24b8b70, 0xd0f89791, 0xc76c51a3, 0x0654be30,
        0xd192e819, 0xd6ef5218, 0xd6990624, 0x5565a910, 0xf40e3585, 0x5771202a, 0x106aa070, 0x32bbd1b8,
        0x19a4c116, 0xb8d2d0c8, 0x1e376c08, 0x5141ab53, 0x2748774c, 0xdf8eeb99, 0x34b0bcb5, 0xe19b48a8,
        0x391c0cb3, 0xc5c95a63, 0x4ed8aa4a, 0xe3418acb, 0x5b9cca4f, 0x7763e373, 0x682e6ff3, 0xd6b2b8a3,
        0x748f82ee, 0x5defb2fc, 0x78a5636f, 0x43172f60, 0x84c87814, 0xa1f0ab72, 0x8cc70208, 0x1a6439ec,
        0x90befffa, 0x23631e28, 0xa4506ceb, 0xde82bde9, 0xbef9a3f7, 0xb2c67915, 0xc67178f2, 0xe372532b,
        0xca273ece, 0xea26619c, 0xd186b8c7, 0x21c0c207, 0xeada7dd6, 0xcde0eb1e, 0xf57d4f7f, 0xee6ed178,
        0x06f067aa, 0x72176fba, 0x0a637dc5, 0xa2c898a6, 0x113f9804, 0xbef90dae, 0x1b710b35, 0x131c471b,
        0x28db77f5, 0x23047d84, 0x32caab7b, 0x40c72493, 0x3c9ebe0a, 0x15c9bebc, 0x431d67c4, 0x9c100d4c,
        0x4cc5d4be, 0xcb3e42b6, 0x597f299c, 0xfc657e2a, 0x5fcb6fab, 0x3ad6faec, 0x6c44198c, 0x4a475817,
    ]);

    // §5.3.5: the initial hash value, the first 64 bits of the fractional parts of the square roots
    // of the first 8 primes.
    const SHA512_IV = new Uint32Array([
        0x6a09e667, 0xf3bcc908, 0xbb67ae85, 0x84caa73b, 0x3c6ef372, 0xfe94f82b, 0xa54ff53a, 0x5f1d36f1,
        0x510e527f, 0xade682d1, 0x9b05688c, 0x2b3e6c1f, 0x1f83d9ab, 0xfb41bd6b, 0x5be0cd19, 0x137e2179,
    ]);

    const TWO_32 = 0x100000000;

    function readUint32BE(b, at) {
        return ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0;
    }

    function writeUint32BE(out, at, n) {
        out[at] = n >>> 24; out[at + 1] = n >>> 16; out[at + 2] = n >>> 8; out[at + 3] = n;
    }

    // §6.4.2: one 128-byte block b[at..] into the hash value h (16 halves); w is room for the
    // message schedule (160 halves), reused from block to block.
    function sha512Block(h, w, b, at) {
        for (let i = 0; i < 32; i++) w[i] = readUint32BE(b, at + 4 * i);
        for (let i = 16; i < 80; i++) {
            // W[i] = σ1(W[i-2]) + W[i-7] + σ0(W[i-15]) + W[i-16]. A rotation right by n < 32 takes
            // each half's low n bits into the other half's top; by 32 + n, the halves swap first.
            const xh = w[2 * (i - 15)], xl = w[2 * (i - 15) + 1];
            // σ0(x) = ROTR 1 ^ ROTR 8 ^ SHR 7
            const s0h = ((xh >>> 1) | (xl << 31)) ^ ((xh >>> 8) | (xl << 24)) ^ (xh >>> 7);
            const s0l = ((xl >>> 1) | (xh << 31)) ^ ((xl >>> 8) | (xh << 24)) ^ ((xl >>> 7) | (xh << 25));
            const yh = w[2 * (i - 2)], yl = w[2 * (i - 2) + 1];
            // σ1(y) = ROTR 19 ^ ROTR 61 ^ SHR 6
            const s1h = ((yh >>> 19) | (yl << 13)) ^ ((yl >>> 29) | (yh << 3)) ^ (yh >>> 6);
            const s1l = ((yl >>> 19) | (yh << 13)) ^ ((yh >>> 29) | (yl << 3)) ^ ((yl >>> 6) | (yh << 26));
            const lo = (s0l >>> 0) + (s1l >>> 0) + w[2 * (i - 7) + 1] + w[2 * (i - 16) + 1];
            const hi = (s0h >>> 0) + (s1h >>> 0) + w[2 * (i - 7)] + w[2 * (i - 16)] + Math.floor(lo / TWO_32);
            w[2 * i] = hi;        // a Uint32Array keeps the value mod 2^32
            w[2 * i + 1] = lo;
        }

        let ah = h[0], al = h[1], bh = h[2], bl = h[3], ch = h[4], cl = h[5], dh = h[6], dl = h[7];
        let eh = h[8], el = h[9], fh = h[10], fl = h[11], gh = h[12], gl = h[13], hh = h[14], hl = h[15];
        for (let i = 0; i < 80; i++) {
            // Σ1(e) = ROTR 14 ^ ROTR 18 ^ ROTR 41
            const S1h = ((eh >>> 14) | (el << 18)) ^ ((eh >>> 18) | (el << 14)) ^ ((el >>> 9) | (eh << 23));
            const S1l = ((el >>> 14) | (eh << 18)) ^ ((el >>> 18) | (eh << 14)) ^ ((eh >>> 9) | (el << 23));
            // Ch(e, f, g) = (e AND f) XOR (NOT e AND g)
            const chh = (eh & fh) ^ (~eh & gh), chl = (el & fl) ^ (~el & gl);
            // T1 = h + Σ1(e) + Ch(e, f, g) + K[i] + W[i]
            const t1l = hl + (S1l >>> 0) + (chl >>> 0) + SHA512_K[2 * i + 1] + w[2 * i + 1];
            const t1h = hh + (S1h >>> 0) + (chh >>> 0) + SHA512_K[2 * i] + w[2 * i] + Math.floor(t1l / TWO_32);
            // Σ0(a) = ROTR 28 ^ ROTR 34 ^ ROTR 39
            const S0h = ((ah >>> 28) | (al << 4)) ^ ((al >>> 2) | (ah << 30)) ^ ((al >>> 7) | (ah << 25));
            const S0l = ((al >>> 28) | (ah << 4)) ^ ((ah >>> 2) | (al << 30)) ^ ((ah >>> 7) | (al << 25));
            // Maj(a, b, c) = (a AND b) XOR (a AND c) XOR (b AND c)
            const majh = (ah & bh) ^ (ah & ch) ^ (bh & ch), majl = (al & bl) ^ (al & cl) ^ (bl & cl);
            // T2 = Σ0(a) + Maj(a, b, c)
            const t2l = (S0l >>> 0) + (majl >>> 0);
            const t2h = (S0h >>> 0) + (majh >>> 0) + Math.floor(t2l / TWO_32);

            hh = gh; hl = gl;
            gh = fh; gl = fl;
            fh = eh; fl = el;
            // e = d + T1 (mod 2^64)
            const newEl = dl + (t1l >>> 0);
            eh = (dh + (t1h >>> 0) + Math.floor(newEl / TWO_32)) >>> 0; el = newEl >>> 0;
            dh = ch; dl = cl;
            ch = bh; cl = bl;
            bh = ah; bl = al;
            // a = T1 + T2 (mod 2^64)
            const newAl = (t1l >>> 0) + (t2l >>> 0);
            ah = ((t1h >>> 0) + (t2h >>> 0) + Math.floor(newAl / TWO_32)) >>> 0; al = newAl >>> 0;
        }

        // §6.4.2 step 4: the new hash value is the old one plus a..h, word by word (mod 2^64).
        const v = [ah, al, bh, bl, ch, cl, dh, dl, eh, el, fh, fl, gh, gl, hh, hl];
        for (let i = 0; i < 16; i += 2) {
            const lo = h[i + 1] + v[i + 1];
            h[i] = h[i] + v[i] + Math.floor(lo / TWO_32);
            h[i + 1] = lo;
        }
    }

    // The 64-byte digest of any number of bytes. §5.1.2: the message is followed by a 1 bit, zeros
    // up to 112 bytes mod 128, and its length in bits as 128 bits big-endian; whole blocks of the
    // message are hashed where they lie, only the last one or two are copied to be padded.
    function sha512(data) {
        const input = bytes(data);
        const h = SHA512_IV.slice();
        const w = new Uint32Array(160);
        const whole = input.length - (input.length % 128);
        for (let at = 0; at < whole; at += 128) sha512Block(h, w, input, at);

        const rest = input.length - whole;
        const tail = new Uint8Array(rest < 112 ? 128 : 256);
        tail.set(input.subarray(whole));
        tail[rest] = 0x80;
        // The length in bits: a byte count below 2^53 makes at most 56 bits, so the top 64 of the
        // 128 stay zero; the next 32 are the count / 2^29, the last 32 the count * 8 mod 2^32.
        writeUint32BE(tail, tail.length - 8, Math.floor(input.length / 0x20000000));
        writeUint32BE(tail, tail.length - 4, (input.length * 8) >>> 0);
        for (let at = 0; at < tail.length; at += 128) sha512Block(h, w, tail, at);

        const out = new Uint8Array(64);
        for (let i = 0; i < 16; i++) writeUint32BE(out, 4 * i, h[i]);
        return out;
    }

    // ---------------------------------------------------------------- CPace (draft-irtf-cfrg-cpace-21)

    // Pairing runs CPace, suite CPACE-X25519-SHA512, the page as the initiator A (docs/WEB.md,
    // "Pairing"): both sides derive a generator g from the code (PRS), the channel identifier CI and
    // the page's random sid; each sends Y = X25519(y, g) for its random y; K = X25519(y, the other's
    // Y); the ISK hashes K with the transcript. Someone in the middle learns nothing to test code
    // guesses against offline: every guess costs an online attempt.

    // prepend_len: the length of `data` as LEB128 (7 bits a byte, least significant first, the top
    // bit set on every byte but the last), then `data`.
    function prependLen(data) {
        const b = bytes(data);
        const length = [];
        let n = b.length;
        do {
            const low = n % 128;
            n = Math.floor(n / 128);
            length.push(n > 0 ? low + 128 : low);
        } while (n > 0);
        return concat(length, b);
    }

    // lv_cat: each part with prepend_len, one after the other.
    function lvCat(...parts) {
        return concat(...parts.map(prependLen));
    }

    const CPACE_DSI = utf8("CPace255");           // the suite's domain separation for g
    const CPACE_DSI_ISK = utf8("CPace255_ISK");   // and for the ISK
    const SHA512_BLOCK = 128;                     // H.s_in_bytes
    const ELL2_A = 486662n;                       // Curve25519: v^2 = u^3 + A u^2 + u
    const ELL2_Z = 2n;                            // the draft's non-square for p = 2^255 - 19
    const ELL2_HALF_A = mul(ELL2_A, invert(2n));  // A / 2 in the field (243331: A is even)

    // generator_string(DSI, PRS, CI, sid, 128): zeros after DSI and PRS fill the first hash block,
    // so that block depends on nothing but the code (and a longer PRS gets none).
    function generatorString(prs, ci, sid) {
        const zeros = Math.max(0, SHA512_BLOCK - 1 - prependLen(prs).length - prependLen(CPACE_DSI).length);
        return lvCat(CPACE_DSI, prs, new Uint8Array(zeros), ci, sid);
    }

    // Elligator 2 (the draft's reference, Z = 2, B = 1): a field element r to the u-coordinate of
    // a point of the curve. v = -A / (1 + Z r^2); e = (v^3 + A v^2 + v)^((p-1)/2), the Legendre
    // symbol as a field element (1, -1, or 0); u = e v - (1 - e) A / 2. So u = v where v^3 + A v^2
    // + v is a square, else u = -v - A, for which it is. 1 + Z r^2 is never 0 (-1/2 is not a square
    // mod p), so v is always defined.
    function elligator2(r) {
        const v = sub(0n, mul(ELL2_A, invert(add(1n, mul(ELL2_Z, mul(r, r))))));
        const v2 = mul(v, v);
        const e = power(add(add(mul(v2, v), mul(ELL2_A, v2)), v), (P - 1n) / 2n);
        return sub(mul(e, v), mul(sub(1n, e), ELL2_HALF_A));
    }

    // calculate_generator: SHA-512 of the generator string; its first 32 bytes, read as RFC 7748's
    // decodeUCoordinate of 255 bits does (little-endian, the top bit cleared, then taken mod p);
    // Elligator 2; the u-coordinate as 32 bytes little-endian. prs, ci and sid are bytes (the page:
    // the code as UTF-8, "huddle-pair-v1", 16 random bytes).
    function cpaceGenerator(prs, ci, sid) {
        const h = sha512(generatorString(bytes(prs), bytes(ci), bytes(sid))).slice(0, 32);
        h[31] &= 127;
        return encodeLittleEndian32(elligator2(decodeLittleEndian(h) % P));
    }

    // The ISK of the initiator-responder mode: SHA-512(lv_cat(DSI_ISK, sid, K) ‖ transcript_ir),
    // transcript_ir = lv_cat(Ya, ADa) ‖ lv_cat(Yb, ADb). 64 bytes; the page splits it into kc
    // (0..<32) and the device's key (32..<64).
    function cpaceIsk(sid, K, Ya, ADa, Yb, ADb) {
        return sha512(concat(lvCat(CPACE_DSI_ISK, sid, K), lvCat(Ya, ADa), lvCat(Yb, ADb)));
    }

    // ---------------------------------------------------------------- docs/WEB.md

    // Pairing's key confirmation: the tag of sealing nothing with key kc, nonce "client" or
    // "server" padded with zeros to 12 bytes, additional data A ‖ B ‖ CODE. With CPace the code is
    // already in kc, so the page passes "" (the additional data is Ya ‖ Yb); `code` is used as given.
    function pairTag(kc, A, B, code, who) {
        if (who !== "client" && who !== "server") throw new RangeError('pairTag: who is "client" or "server"');
        const nonce = new Uint8Array(12);
        nonce.set(utf8(who));
        const aad = concat(bytes(A, 32, "pairTag A"), bytes(B, 32, "pairTag B"), utf8(code));
        return seal(bytes(kc, 32, "pairTag kc"), nonce, new Uint8Array(0), aad);
    }

    // A session's key: bytes 0..<32 of the keystream of key K, the node's challenge nonce, counter 1.
    function connKey(K, nonce12) {
        return chacha20(bytes(K, 32, "connKey K"), bytes(nonce12, 12, "connKey nonce"), 1, new Uint8Array(32));
    }

    // A session's frames in one direction: nonce DIR (4 bytes, big-endian) ‖ COUNT (8 bytes,
    // little-endian), COUNT 0 for the first frame and one more for each after; no additional data.
    const PAGE_TO_NODE = 1, NODE_TO_PAGE = 2;

    function frameNonce(dir, count) {
        const nonce = new Uint8Array(12);
        nonce[3] = dir;
        writeUint64LE(nonce, 4, count);
        return nonce;
    }

    function direction(dir, what) {
        if (dir !== PAGE_TO_NODE && dir !== NODE_TO_PAGE) throw new RangeError(what + ": dir is 1 (page to node) or 2 (node to page)");
        return dir;
    }

    // Sealer and Opener make plain objects: `H.Sealer(k, 1)` and `new H.Sealer(k, 1)` are the same.
    function Sealer(key, dir) {
        const k = bytes(key, 32, "Sealer key").slice();
        const d = direction(dir, "Sealer");
        let count = 0;
        return {
            seal: function (plaintext) {
                if (count >= Number.MAX_SAFE_INTEGER) throw new RangeError("Sealer: out of nonces");
                return seal(k, frameNonce(d, count++), plaintext);
            },
            get count() { return count; },
        };
    }

    // open(frame): the plaintext, or null; after one null it refuses everything (the connection
    // is to be closed).
    function Opener(key, dir) {
        const k = bytes(key, 32, "Opener key").slice();
        const d = direction(dir, "Opener");
        let count = 0, failed = false;
        return {
            open: function (frame) {
                if (failed) return null;
                const plaintext = open(k, frameNonce(d, count), frame);
                if (plaintext === null) { failed = true; return null; }
                count++;
                return plaintext;
            },
            get count() { return count; },
            get failed() { return failed; },
        };
    }

    return Object.freeze({
        randomBytes, x25519, x25519Public,
        chacha20, poly1305, seal, open,
        sha512, prependLen, lvCat, cpaceGenerator, cpaceIsk,
        b64u, fromB64u, utf8, fromUtf8, concat,
        pairTag, connKey, Sealer, Opener,
        PAGE_TO_NODE, NODE_TO_PAGE,
    });
})();
