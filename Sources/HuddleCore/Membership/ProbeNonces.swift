import Crypto

/// The sequence numbers of this node's probes: rising (a receiver takes a probe that is not
/// newer than the last as a replay) and, in their low 32 bits, a nonce nobody else can predict
/// (HMAC-SHA256 of the counter under a key only this node holds). An ack echoes the sequence, so
/// an ack that matches one of ours was sent by a node that *received* that probe: an address
/// proves itself by answering (docs/PROTOCOL.md, "Trust"), and a stranger that forges a source
/// address cannot answer in its place.
///
/// ```swift
/// var nonces = ProbeNonces(key: identity.probeNonceKey(incarnation: 7))
/// nonces.next()   // 0x0000_0001_9c3e_41a7: counter 1, then 32 unpredictable bits
/// nonces.next()   // 0x0000_0002_…
/// ```
public struct ProbeNonces: Sendable {
    private let key: SymmetricKey
    private var counter: UInt64 = 0

    /// Nonces under `key` (any bytes; 32 from a secure source or ``NodeIdentity/probeNonceKey(incarnation:)``).
    public init(key: [UInt8]) {
        self.key = SymmetricKey(data: key)
    }

    /// The next sequence number: the counter in the high 32 bits, the nonce in the low.
    public mutating func next() -> UInt64 {
        counter &+= 1
        let mac = HMAC<SHA256>.authenticationCode(for: withUnsafeBytes(of: counter.bigEndian) { Array($0) }, using: key)
        let nonce = mac.withUnsafeBytes { bytes in bytes.prefix(4).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        return (counter << 32) | nonce
    }
}
