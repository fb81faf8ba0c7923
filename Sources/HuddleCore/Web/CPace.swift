import Crypto

/// CPace (draft-irtf-cfrg-cpace-21, suite CPACE-X25519-SHA512, initiator-responder): how a phone
/// and the node turn a short code into a shared key that nobody in the middle can test codes
/// against offline (docs/WEB.md, "Pairing"). Each side maps the code, a channel name and a
/// session id to a point (``generator(code:sid:)``), sends that point times a fresh scalar, and
/// derives the session key from the Diffie-Hellman result and both messages (``sessionKey``). A
/// wrong code gives an unrelated key, which the confirmation tags then show: one guess for each
/// attempt made against a live node, never a search. The page has the same functions in
/// `crypto.js`; both are checked against the draft's test vectors.
///
/// ```swift
/// let g = CPace.generator(code: Array("7K3MQ9TX".utf8), sid: sid)
/// let (yb, Yb) = (random32, CPace.share(scalar: yb, generator: g)!)
/// guard let k = CPace.secret(scalar: yb, share: Ya) else { refuse() }       // nil: a low-order point
/// let isk = CPace.sessionKey(sid: sid, secret: k, initiator: Ya, responder: Yb)
/// ```
public enum CPace {
    /// The group's domain-separation identifier.
    static let dsi = Array("CPace255".utf8)
    /// The channel identifier (CPace's CI): what the key is for.
    public static let channel = Array("huddle-pair-v1".utf8)
    /// SHA-512's input block size: the generator string's padding fills the first block.
    static let hashBlockBytes = 128

    /// LEB128 of `bytes.count`, then the bytes.
    static func prependLength(_ bytes: [UInt8]) -> [UInt8] {
        var length = bytes.count
        var encoded: [UInt8] = []
        repeat {
            encoded.append(UInt8(length & 0x7F) | (length >= 128 ? 0x80 : 0))
            length >>= 7
        } while length > 0
        return encoded + bytes
    }

    /// Each part with its length before it.
    static func lengthValues(_ parts: [UInt8]...) -> [UInt8] {
        parts.flatMap(prependLength)
    }

    /// `lv_cat(DSI, PRS, zero padding, CI, sid)`, the padding making DSI and PRS fill SHA-512's
    /// first block.
    static func generatorString(code: [UInt8], channel: [UInt8], sid: [UInt8]) -> [UInt8] {
        let padding = max(0, hashBlockBytes - 1 - prependLength(code).count - prependLength(dsi).count)
        return lengthValues(dsi, code, [UInt8](repeating: 0, count: padding), channel, sid)
    }

    /// The point both sides start from: the generator string hashed, read as a field element,
    /// and mapped onto Curve25519 by Elligator 2 (a u-coordinate, 32 bytes).
    public static func generator(code: [UInt8], channel: [UInt8] = CPace.channel, sid: [UInt8]) -> [UInt8] {
        let hash = Array(SHA512.hash(data: generatorString(code: code, channel: channel, sid: sid)))
        return elligator2(Field25519(littleEndian: Array(hash.prefix(32)))).littleEndianBytes
    }

    /// Elligator 2 for Curve25519 (RFC 9380's map, as the draft's appendix writes it): Z = 2,
    /// A = 486662, B = 1.
    static func elligator2(_ r: Field25519) -> Field25519 {
        let a = Field25519(486_662)
        let one = Field25519(1)
        let v = -(a * (one + Field25519(2) * r * r).inverse)
        let epsilon = (v * v * v + a * v * v + v).legendre
        let half = Field25519(2).inverse
        return epsilon * v - (one - epsilon) * a * half
    }

    /// `scalar` (32 bytes, clamped as X25519 clamps) times the point `generator`: the message to
    /// send. `nil` if either is not 32 bytes.
    public static func share(scalar: [UInt8], generator: [UInt8]) -> [UInt8]? {
        x25519(scalar, generator)
    }

    /// The shared secret K: `scalar` times the other side's `share`. `nil` when it is all zeros
    /// (a low-order point, which fixes the result whatever the code: CPace aborts).
    public static func secret(scalar: [UInt8], share: [UInt8]) -> [UInt8]? {
        guard let k = x25519(scalar, share), k.contains(where: { $0 != 0 }) else { return nil }
        return k
    }

    /// The intermediate session key ISK (64 bytes):
    /// `SHA-512(lv_cat("CPace255_ISK", sid, K) ‖ lv_cat(Ya, ADa) ‖ lv_cat(Yb, ADb))`.
    public static func sessionKey(
        sid: [UInt8], secret: [UInt8], initiator: [UInt8], initiatorData: [UInt8] = [], responder: [UInt8],
        responderData: [UInt8] = []
    ) -> [UInt8] {
        let input = lengthValues(dsi + Array("_ISK".utf8), sid, secret)
            + lengthValues(initiator, initiatorData) + lengthValues(responder, responderData)
        return Array(SHA512.hash(data: input))
    }

    private static func x25519(_ scalar: [UInt8], _ point: [UInt8]) -> [UInt8]? {
        guard scalar.count == 32, point.count == 32,
            let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: scalar),
            let other = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: point)
        else { return nil }
        // An all-zero result throws in some builds of the library: the same as zeros here.
        guard let shared = try? key.sharedSecretFromKeyAgreement(with: other) else {
            return [UInt8](repeating: 0, count: 32)
        }
        return shared.withUnsafeBytes { Array($0) }
    }
}
