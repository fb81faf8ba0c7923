import Crypto
import _CryptoExtras

/// The secret of a private room: what names the room on the wire and seals its events.
///
/// Everyone who knows the room's name and passphrase derives the same key, and nobody else can:
///
///     master = scrypt(passphrase, salt: "huddle-room-v1" 0x00 name, N = 2^15, r = 8, p = 1, 32 bytes)
///     id     = "~" + base32(HKDF-SHA256(master, info: "huddle room id", 15 bytes))
///     seal   = HKDF-SHA256(master, info: "huddle room seal", 32 bytes)      (a ChaChaPoly key)
///
/// The ``id`` replaces the name everywhere a room travels (events, digests, sync requests, probes,
/// the mDNS TXT record): it tells a key holder which room it is and tells anyone else nothing.
/// Each event body is sealed with ChaCha20-Poly1305 under ``seal`` and bound to the room, the
/// origin and the seq (see ``seal(_:id:)``), so a body cannot be moved to another event and a
/// node without the key can neither read nor write the room.
///
/// scrypt with N = 2^15 and r = 8 takes 32 MiB and about 0.2 s (with the name key): a guess at the
/// passphrase costs an attacker the same. The name is the salt, so one passphrase used for two
/// rooms gives two unrelated keys.
///
/// ```swift
/// let key = try RoomKey(room: "superbowl", passphrase: "touchdown")   // slow: off the actor
/// key.id                                                              // "~k3x…", 25 characters
/// ```
public struct RoomKey: Sendable {
    /// The room's name as its members typed it.
    public let name: String
    /// The room on the wire: `~` and 24 base32 characters.
    public let id: String
    let sealKey: SymmetricKey
    /// What a node's name check for this room is made with (``nameTag(for:room:)``); `nil` for a
    /// room without a name check (a direct message's).
    let nameKey: SymmetricKey?

    /// scrypt's cost: N (rounds), r (block size), p (parallelism).
    public static let scryptCost = (rounds: 1 << 15, blockSize: 8, parallelism: 1)

    /// Derives the key of private room `room` from its passphrase (slow on purpose: see the type).
    public init(room: String, passphrase: String) throws {
        let salt = Array("huddle-room-v1".utf8) + [0] + Array(room.utf8)
        let master = try KDF.Scrypt.deriveKey(
            from: Array(passphrase.utf8), salt: salt, outputByteCount: 32, rounds: Self.scryptCost.rounds,
            blockSize: Self.scryptCost.blockSize, parallelism: Self.scryptCost.parallelism)
        let nameKey = try KDF.Scrypt.deriveKey(
            from: Array(room.utf8), salt: Array("huddle-room-name-v1".utf8) + [0], outputByteCount: 32,
            rounds: Self.scryptCost.rounds / 2, blockSize: Self.scryptCost.blockSize,
            parallelism: Self.scryptCost.parallelism)
        self.init(name: room, master: master, nameKey: nameKey)
    }

    /// The key of a room whose 32-byte master secret is already agreed (a direct message's, from
    /// X25519), shown to the user as `name`.
    public init(name: String, master: [UInt8]) {
        self.init(name: name, master: SymmetricKey(data: master), nameKey: nil)
    }

    private init(name: String, master: SymmetricKey, nameKey: SymmetricKey?) {
        self.name = name
        self.nameKey = nameKey
        let idBytes = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: master, info: Array("huddle room id".utf8), outputByteCount: 15)
        id = Self.idPrefix + Base32.encode(idBytes.withUnsafeBytes { Array($0) })
        sealKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: master, info: Array("huddle room seal".utf8), outputByteCount: 32)
    }

    // MARK: Name checks

    /// The 16-byte name check `node` puts beside private room `room` (a wire id) in its probes:
    ///
    ///     nameKey = scrypt(name, salt: "huddle-room-name-v1" 0x00, N = 2^14, r = 8, p = 1, 32 bytes)
    ///     tag     = HMAC-SHA256(nameKey, "huddle-room-check-v1" 0x00 node:32 room:str)[..16]
    ///
    /// It depends on the name, not the passphrase: a node in a room of the same name under
    /// another passphrase (a different id) recomputes it and learns the passphrases differ, so
    /// it can say "wrong passphrase" instead of staying silent. Anyone else learns nothing but
    /// what a guess at the name, at a scrypt each, can confirm. Zeros for a room without a name
    /// check.
    public func nameTag(for node: NodeID, room: String) -> [UInt8] {
        guard let nameKey else { return WireLimits.noRoomTag }
        var message = ByteWriter(capacity: 21 + NodeID.byteCount + 2 + room.utf8.count)
        message.write(bytes: Array("huddle-room-check-v1".utf8) + [0])
        message.write(node)
        message.write(string: room)
        return Array(HMAC<SHA256>.authenticationCode(for: message.bytes, using: nameKey).prefix(WireLimits.roomTagBytes))
    }

    /// Whether `tag`, beside private room `room` in `node`'s probe, says `node` is in a room of
    /// this room's name under another passphrase.
    public func isSameNameOtherPassphrase(_ tag: [UInt8], from node: NodeID, room: String) -> Bool {
        nameKey != nil && room != id && RoomKey.isPrivate(room) && tag == nameTag(for: node, room: room)
    }

    /// What starts every private room's wire id; a public room's name cannot start with it.
    public static let idPrefix = "~"

    /// Whether `room` (as it travels) is a private room's id rather than a public room's name.
    public static func isPrivate(_ room: String) -> Bool { room.hasPrefix(idPrefix) }

    // MARK: Sealing

    /// The sealed form of `body` for event `id` of this room: a fresh 12-byte nonce, then the
    /// ChaCha20-Poly1305 ciphertext of the body's encoding and its 16-byte tag. The associated
    /// data binds it to this room, the origin and the seq (``associatedData(for:)``). `nonce`
    /// (12 bytes) is for tests; by default it comes from the system's secure random source.
    func seal(_ body: EventBody, id: EventID, nonce: [UInt8]? = nil) -> [UInt8] {
        var writer = ByteWriter(capacity: body.encodedByteCount)
        writer.write(body)
        // Sealing with a valid key and a 12-byte nonce cannot fail.
        let nonce = try! nonce.map { try ChaChaPoly.Nonce(data: $0) } ?? ChaChaPoly.Nonce()
        let box = try! ChaChaPoly.seal(writer.bytes, using: sealKey, nonce: nonce, authenticating: associatedData(for: id))
        return Array(box.combined)
    }

    /// `event` with its body opened, if it is an event of this room sealed with this key; `nil`
    /// for an event that is not sealed, was sealed with another key or for another event, or
    /// whose opened body does not decode. The event keeps its sealed bytes (``Event/seal``), so
    /// its encoding and signature are unchanged.
    public func open(_ event: Event) -> Event? {
        guard event.room == id, event.seal == nil, case .sealed(let bytes) = event.body,
            let box = try? ChaChaPoly.SealedBox(combined: bytes),
            let plain = try? ChaChaPoly.open(box, using: sealKey, authenticating: associatedData(for: event.id))
        else { return nil }
        var reader = ByteReader(plain)
        guard let body = try? reader.readEventBody(), (try? reader.expectEnd()) != nil, !body.isSealed else {
            return nil
        }
        return Event(
            id: event.id, room: event.room, createdAtMilliseconds: event.createdAtMilliseconds, context: event.context,
            previous: event.previous, body: body, seal: bytes, signature: event.signature)
    }

    /// `"huddle-seal-v1" 0x00  room:str origin:32 seq:u64`.
    func associatedData(for event: EventID) -> [UInt8] {
        var writer = ByteWriter(capacity: 15 + 2 + id.utf8.count + NodeID.byteCount + 8)
        writer.write(bytes: Array("huddle-seal-v1".utf8) + [0])
        writer.write(string: id)
        writer.write(event.origin)
        writer.write(event.seq)
        return writer.bytes
    }
}

/// RFC 4648 base32 in lower case without padding: room ids are typed into nothing, but they go in
/// TXT records and logs, where lower-case letters and digits are safe everywhere. (A pairing code,
/// typed by people, spells its bits in Crockford's alphabet instead: ``PairingCode``.)
enum Base32 {
    static let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")

    /// 5 bits a letter of `alphabet` (32 letters), the last letter's bits padded with zeros.
    static func encode(_ bytes: [UInt8], alphabet: [Character] = alphabet) -> String {
        var out = ""
        var buffer = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | Int(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[(buffer >> bits) & 31])
            }
        }
        if bits > 0 { out.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return out
    }
}
