import Crypto

/// Chain fingerprints: two logs whose vectors agree may still hold different events (an origin
/// equivocated, and each node saw one version). Each origin's prefix carries a running
/// fingerprint, `f(n) = first 8 bytes of SHA-256(f(n − 1) ‖ signature of seq n)`, `f(0) = 0`,
/// so equal fingerprints at a seq mean the same events up to it (short of a 64-bit collision,
/// which the origin itself cannot aim for: it does not choose the others' fingerprints). A
/// digest carries the fingerprint at each entry of its vector.
extension RoomLog {
    /// The chain fingerprint of `origin`'s events `1...seq`, if the log holds them all.
    public func fingerprint(of origin: NodeID, at seq: UInt64) -> UInt64? {
        guard seq > 0, let chain = chains[origin], seq <= UInt64(chain.count) else { return nil }
        return chain[Int(seq - 1)]
    }

    /// The fingerprint at each entry of ``vector``.
    public var fingerprints: [NodeID: UInt64] {
        var out: [NodeID: UInt64] = [:]
        for (origin, chain) in chains {
            if let last = chain.last { out[origin] = last }
        }
        return out
    }

    /// The origins whose events a peer holds differently: for each entry of `remote` this log
    /// holds too, the seq where the peer's fingerprint (`remoteFingerprints`) is not this log's.
    public func divergence(from remote: VersionVector, fingerprints remoteFingerprints: [NodeID: UInt64]) -> [NodeID: UInt64] {
        var diverged: [NodeID: UInt64] = [:]
        for origin in remote.origins {
            let seq = remote[origin]
            guard let theirs = remoteFingerprints[origin], let ours = fingerprint(of: origin, at: seq), theirs != ours
            else { continue }
            diverged[origin] = seq
        }
        return diverged
    }

    /// The fingerprint after `event`, given the one before it.
    static func chain(_ previous: UInt64, _ event: Event) -> UInt64 {
        var hasher = SHA256()
        withUnsafeBytes(of: previous.bigEndian) { hasher.update(bufferPointer: $0) }
        hasher.update(data: event.signature)
        return hasher.finalize().withUnsafeBytes { digest in
            digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
    }
}
