import Crypto

/// A node's signing identity: its Ed25519 private key and the ``NodeID`` that key implies.
///
/// The shell generates one on first start and keeps it in the data dir; everything this node
/// originates is signed with it.
///
/// ```swift
/// let me = NodeIdentity.generate()
/// let event = me.sign(id: EventID(origin: me.id, seq: 1), room: "superbowl", createdAt: now,
///                     context: [:], body: .join(nick: "alice"))
/// event.hasValidSignature   // true
/// ```
public struct NodeIdentity: Sendable {
    fileprivate let privateKey: Curve25519.Signing.PrivateKey

    /// The node id: the public key.
    public let id: NodeID

    /// Restores an identity from the 32-byte private key seed that ``privateKeyBytes`` returned.
    public init(privateKeyBytes: some Collection<UInt8>) throws(IdentityError) {
        guard privateKeyBytes.count == 32,
            let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: Array(privateKeyBytes))
        else { throw .invalidPrivateKey(byteCount: privateKeyBytes.count) }
        self.init(key)
    }

    /// The X25519 key this node agrees direct-message keys with. Derived from the signing key
    /// (HKDF-SHA256, info "huddle agreement key"), so it survives restarts without being stored;
    /// peers learn its public half from this node's signed probes and acks.
    fileprivate let agreementKey: Curve25519.KeyAgreement.PrivateKey

    private init(_ key: Curve25519.Signing.PrivateKey) {
        privateKey = key
        let seed = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: key.rawRepresentation), info: Array("huddle agreement key".utf8),
            outputByteCount: 32)
        // Any 32 bytes are a valid X25519 private key.
        agreementKey = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: seed.withUnsafeBytes { Array($0) })
        // An Ed25519 public key is always 32 bytes.
        id = NodeID(bytes: [UInt8](key.publicKey.rawRepresentation))!
    }

    /// A new identity from the system's secure random source.
    public static func generate() -> NodeIdentity {
        NodeIdentity(Curve25519.Signing.PrivateKey())
    }

    /// The secret this node draws its probes' nonces from (``ProbeNonces``): derived from the
    /// signing key (HKDF-SHA256, info "huddle probe nonces") and the incarnation, so nobody else
    /// can predict them, and a restart does not repeat them.
    public func probeNonceKey(incarnation: UInt64) -> [UInt8] {
        var info = Array("huddle probe nonces".utf8)
        withUnsafeBytes(of: incarnation.bigEndian) { info += $0 }
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: privateKey.rawRepresentation), info: info, outputByteCount: 32)
        return key.withUnsafeBytes { Array($0) }
    }

    /// The 32-byte private key seed, to be stored with owner-only permissions.
    public var privateKeyBytes: [UInt8] { [UInt8](privateKey.rawRepresentation) }

    /// Makes a signed event. `id.origin` must be this identity's ``id``. With a `key` (a private
    /// room's, whose ``RoomKey/id`` is `room`), the body is sealed and the signature covers the
    /// sealed form; the event returned still reads as `body`.
    public func sign(
        id eventID: EventID, room: String, createdAt: WallTime, context: VersionVector,
        previous: EventDigest = .none, body: EventBody, sealedWith key: RoomKey? = nil
    ) -> Event {
        precondition(eventID.origin == id, "a node signs only events it originates")
        precondition(key == nil || key?.id == room, "a room key seals only its own room's events")
        let seal = key?.seal(body, id: eventID)
        let bytes = Event.signedBytes(
            id: eventID, room: room, createdAt: createdAt, context: context, previous: previous,
            body: seal.map { .sealed(bytes: $0) } ?? body)
        return Event(
            id: eventID, room: room, createdAt: createdAt, context: context, previous: previous, body: body, seal: seal,
            signature: signature(for: bytes))
    }
}

extension NodeIdentity {
    /// The public half of this node's X25519 agreement key (32 bytes), for probes and acks.
    public var agreementPublicKey: [UInt8] { Array(agreementKey.publicKey.rawRepresentation) }

    /// The key of the direct-message room between this node and `peer`, whose X25519 public key
    /// is `peerAgreementKey`: both ends derive the same one, nobody else can. `nil` for a key
    /// that is not a valid X25519 public key (or gives the all-zero secret).
    ///
    ///     secret = X25519(mine, theirs)
    ///     master = HKDF-SHA256(secret, salt: lower id ‖ higher id, info: "huddle direct v1", 32 bytes)
    ///
    /// The room is named `@nick` for the reader (``RoomKey/name``); its id is ``RoomKey/id``.
    public func directKey(with peer: NodeID, peerAgreementKey: [UInt8], name: String) -> RoomKey? {
        guard peerAgreementKey != WireLimits.noAgreementKey,
            let theirs = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: peerAgreementKey),
            let secret = try? agreementKey.sharedSecretFromKeyAgreement(with: theirs),
            // A point of small order (u = 0, 1, p − 1, the order-8 points, their non-canonical
            // twins) gives the all-zero secret with any clamped scalar (RFC 7748, 6.1): a room
            // key anyone could compute. Refuse it.
            secret.withUnsafeBytes({ $0.contains { $0 != 0 } })
        else { return nil }
        let ids = [id, peer].sorted()
        let master = secret.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: ids[0].bytes + ids[1].bytes, sharedInfo: Array("huddle direct v1".utf8),
            outputByteCount: 32)
        return RoomKey(name: name, master: master.withUnsafeBytes { Array($0) })
    }

    /// An Ed25519 signature by this node over `bytes` (already domain-separated by the caller).
    func signature(for bytes: [UInt8]) -> [UInt8] {
        // Signing with a valid in-memory key cannot fail.
        [UInt8](try! privateKey.signature(for: bytes))
    }
}

/// Why a stored private key could not be loaded.
public enum IdentityError: Error, Equatable, CustomStringConvertible {
    case invalidPrivateKey(byteCount: Int)

    public var description: String {
        switch self {
        case .invalidPrivateKey(let count):
            "the identity key is not a 32-byte Ed25519 private key (found \(count) bytes)"
        }
    }
}

extension Event {
    /// Whether ``signature`` is a valid Ed25519 signature by the origin over every other field.
    ///
    /// A tampered field, a signature by another key or an origin that is not a valid public key
    /// all give `false`.
    public var hasValidSignature: Bool {
        signature.count == Event.signatureByteCount && origin.isSignature(signature, over: signedBytes)
    }
}

extension NodeID {
    /// Whether `signature` is this node's Ed25519 signature over `bytes` (the node id is the
    /// public key). An id that is not a valid public key signs nothing.
    public func isSignature(_ signature: [UInt8], over bytes: [UInt8]) -> Bool {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: self.bytes) else { return false }
        return key.isValidSignature(signature, for: bytes)
    }
}
