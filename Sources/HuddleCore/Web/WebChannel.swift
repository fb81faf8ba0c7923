import Crypto
import Foundation

/// The phone page's cryptography, the node's half (docs/WEB.md): CPace for pairing (``CPace``),
/// and ChaCha20-Poly1305 for every frame after it. The page has the same functions in
/// `crypto.js`, written against the same RFCs and draft, because a page on plain `http://` has
/// no WebCrypto.
///
/// ```swift
/// let (kc, deviceKey) = WebChannel.pairKeys(sessionKey: isk)                 // from CPace
/// let proof = WebChannel.pairTag(kc, page: ya, node: yb, code: "", by: .page)
/// var outgoing = WebChannel.Sealer(key: WebChannel.connectionKey(deviceKey, nonce: n), direction: .toPage)
/// let frame = outgoing.seal(Array(json.utf8))
/// ```
public enum WebChannel {
    /// Who speaks: the page (`00 00 00 01` in a frame's nonce) or the node (`00 00 00 02`).
    public enum Direction: UInt8, Sendable {
        case toNode = 1
        case toPage = 2
    }

    /// Who made a pairing tag: the page proves it knows the code first, then the node.
    public enum Prover: String, Sendable {
        case page = "client"
        case node = "server"
    }

    /// The first `count` bytes of ChaCha20's keystream of `key` and `nonce`, from block 1: what
    /// sealing zeros gives (block 0 is Poly1305's key). A PRF of the key, as NaCl's box uses
    /// HSalsa20 on a Diffie-Hellman secret.
    static func keystream(_ key: [UInt8], nonce: [UInt8], count: Int) -> [UInt8] {
        let sealed = try! ChaChaPoly.seal(
            [UInt8](repeating: 0, count: count), using: SymmetricKey(data: key), nonce: ChaChaPoly.Nonce(data: nonce))
        return Array(sealed.ciphertext)
    }

    /// The two keys a pairing's CPace session key gives: `confirm` for the tags that prove both
    /// sides ran it with the same code, and the device's lasting key.
    public static func pairKeys(sessionKey: [UInt8]) -> (confirm: [UInt8], device: [UInt8]) {
        precondition(sessionKey.count == 64, "CPace's session key is 64 bytes")
        return (Array(sessionKey[0..<32]), Array(sessionKey[32..<64]))
    }

    /// The tag that proves holding `confirm`, bound to both public shares (and to `code`, empty
    /// since CPace binds the code into the key): ChaCha20-Poly1305 over nothing, with
    /// `page ‖ node ‖ code` as additional data.
    public static func pairTag(_ confirm: [UInt8], page: [UInt8], node: [UInt8], code: String, by prover: Prover)
        -> [UInt8]
    {
        var nonce = Array(prover.rawValue.utf8)
        nonce += [UInt8](repeating: 0, count: 12 - nonce.count)
        let sealed = try! ChaChaPoly.seal(
            [UInt8](), using: SymmetricKey(data: confirm), nonce: ChaChaPoly.Nonce(data: nonce),
            authenticating: page + node + Array(code.utf8))
        return Array(sealed.tag)
    }

    /// Whether `tag` is ``pairTag(_:page:node:code:by:)``'s, compared in constant time.
    public static func tagMatches(_ tag: [UInt8], _ expected: [UInt8]) -> Bool {
        guard tag.count == expected.count else { return false }
        return zip(tag, expected).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// One connection's key: the device's key stretched with the node's fresh `nonce`, so a frame
    /// recorded on one connection opens on no other.
    public static func connectionKey(_ deviceKey: [UInt8], nonce: [UInt8]) -> [UInt8] {
        keystream(deviceKey, nonce: nonce, count: 32)
    }

    /// A frame's nonce: the direction, then how many frames that side sent before it.
    static func nonce(_ direction: Direction, _ count: UInt64) -> ChaChaPoly.Nonce {
        var bytes: [UInt8] = [0, 0, 0, direction.rawValue]
        withUnsafeBytes(of: count.littleEndian) { bytes += $0 }
        return try! ChaChaPoly.Nonce(data: bytes)
    }

    /// Seals one side's frames in order.
    public struct Sealer: Sendable {
        let key: SymmetricKey
        let direction: Direction
        private(set) var count: UInt64 = 0

        public init(key: [UInt8], direction: Direction) {
            self.key = SymmetricKey(data: key)
            self.direction = direction
        }

        /// `plaintext` sealed as the next frame: ciphertext, then the 16-byte tag.
        public mutating func seal(_ plaintext: [UInt8]) -> [UInt8] {
            let box = try! ChaChaPoly.seal(plaintext, using: key, nonce: WebChannel.nonce(direction, count))
            count += 1
            return Array(box.ciphertext) + Array(box.tag)
        }
    }

    /// Opens the other side's frames in order; after one fails, none opens (the connection is over).
    public struct Opener: Sendable {
        let key: SymmetricKey
        let direction: Direction
        private(set) var count: UInt64 = 0
        public private(set) var failed = false

        public init(key: [UInt8], direction: Direction) {
            self.key = SymmetricKey(data: key)
            self.direction = direction
        }

        /// The next frame's plaintext, or `nil` if it was not sealed with this key in this place.
        public mutating func open(_ frame: [UInt8]) -> [UInt8]? {
            guard !failed, frame.count >= 16,
                let box = try? ChaChaPoly.SealedBox(
                    nonce: WebChannel.nonce(direction, count), ciphertext: frame.dropLast(16), tag: frame.suffix(16)),
                let plaintext = try? ChaChaPoly.open(box, using: key)
            else {
                failed = true
                return nil
            }
            count += 1
            return Array(plaintext)
        }
    }
}

extension WebChannel {
    /// The node's side of one pairing attempt (docs/WEB.md, "Pairing"): CPace's responder, with a
    /// fresh scalar, for the page's session id and share.
    public struct PairingExchange: Sendable {
        /// What the node sends the page (`{"t":"pair","pub":…}`).
        public let publicKey: [UInt8]
        /// The confirmation key and the device's key.
        public let confirm: [UInt8]
        public let device: [UInt8]

        /// `nil` for a share that is not 32 bytes, or a low-order point (CPace aborts).
        public init?(code: PairingCode, sid: [UInt8], page: [UInt8], scalar: [UInt8]) {
            let generator = CPace.generator(code: Array(code.letters.utf8), sid: sid)
            guard page.count == 32, let mine = CPace.share(scalar: scalar, generator: generator),
                let secret = CPace.secret(scalar: scalar, share: page)
            else { return nil }
            publicKey = mine
            (confirm, device) = pairKeys(sessionKey: CPace.sessionKey(sid: sid, secret: secret, initiator: page, responder: mine))
        }
    }

    /// Base64url without padding, as the page writes keys, tags and nonces.
    public static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of a base64url text (padding optional); `nil` if it is not one.
    public static func bytes(base64url text: String) -> [UInt8]? {
        guard text.utf8.count <= 4096, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "=") })
        else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            .replacingOccurrences(of: "=", with: "")
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        return Data(base64Encoded: standard).map { Array($0) }
    }
}
