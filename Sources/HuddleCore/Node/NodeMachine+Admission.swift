/// What the node lets in from the network, decided here at the input's time: a datagram's bytes
/// are admitted by its sender's rate before they are decoded, events by the sender's budget of
/// signature checks before one is checked (``DatagramRateLimits``). A live peer's address is
/// exempt from the first and has a larger budget for the second; the machine knows its peers,
/// so it keeps the list itself.
extension NodeMachine {
    /// A datagram's bytes as the socket gave them: admitted, decoded, then handled. What is
    /// refused is counted, and said (``NodeEffect/refused(_:reason:from:)``) for the log.
    mutating func receive(datagram bytes: [UInt8], from source: PeerAddress, now: NodeTime) {
        // A flood from one address stops here, undecoded (counted as rate_limited).
        guard admission.admit(source, now: now.monotonic) else { return }
        // Events from a stranger out of signature checks cost no decoding either (once per
        // datagram, as check_budget). The kind is the envelope's fourth byte.
        if bytes.count > 3, bytes[3] == WireMessage.Kind.events.rawValue,
            !admission.hasChecks(for: source, now: now.monotonic)
        {
            return refuse(.checkBudget, "events from a sender out of signature checks", from: source)
        }
        guard bytes.count <= WireLimits.maxDatagramBytes else {
            return refuse(
                .oversized, "a \(bytes.count)-byte datagram, over the \(WireLimits.maxDatagramBytes) a node sends", from: source)
        }
        do {
            if RelayMessage.isRelay(bytes) {
                return receive(try RelayMessage(decoding: bytes), bytes: bytes, from: source, now: now)
            }
            switch try Datagram(decoding: bytes) {
            case .message(let message): receive(message, from: source, now: now)
            case .sound(let window): receive(window, from: source, now: now)
            }
        } catch {
            let drop: NodeCounters.Drop =
                switch error {
                case .unsupportedVersion(let version): version > WireProtocol.version ? .newerProtocol : .olderProtocol
                default: .malformed
                }
            refuse(drop, "\(error)", from: source)
        }
    }

    /// How many of `count` events from `source` may have their signatures checked now.
    mutating func signatureChecks(_ count: Int, from source: PeerAddress, now: NodeTime) -> Int {
        admission.checks(count, from: source, now: now.monotonic)
    }

    /// `count` signatures from `source` did not verify: they cost its budget more.
    mutating func badSignatures(_ count: Int, from source: PeerAddress, now: NodeTime) {
        admission.penalize(count, from: source, now: now.monotonic)
    }

    /// Counts a dropped datagram and says why, for the log.
    mutating func refuse(_ drop: NodeCounters.Drop, _ reason: String, from source: PeerAddress) {
        countDropped(drop)
        emit(.refused(drop, reason: reason, from: source))
    }
}
