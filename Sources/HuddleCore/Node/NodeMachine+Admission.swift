/// What the node lets in from the network, decided here at the input's time: events by their
/// sender's budget of signature checks, before one is checked or even decoded
/// (``SignatureBudgets``); a live peer's address has a larger budget, and the machine knows its
/// peers. The one rule before it is the shell's, off the actor: a flood from one address is cut
/// to its rate (``DatagramRateLimits``) before it reaches the machine at all.
extension NodeMachine {
    /// A datagram's bytes as the socket gave them (past the shell's rate limit): decoded, then
    /// handled. What is refused is counted, and said (``NodeEffect/refused(_:reason:from:)``)
    /// for the log.
    mutating func receive(datagram bytes: [UInt8], from source: PeerAddress, now: NodeTime) {
        // Events from a stranger out of signature checks cost no decoding either (once per
        // datagram, as check_budget), as the envelope says.
        if WireProtocol.kind(of: bytes) == WireMessage.Kind.events.rawValue,
            !checkBudgets.hasChecks(for: source, now: now.monotonic)
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
        checkBudgets.checks(count, from: source, now: now.monotonic)
    }

    /// `count` signatures from `source` did not verify: they cost its budget more.
    mutating func badSignatures(_ count: Int, from source: PeerAddress, now: NodeTime) {
        checkBudgets.penalize(count, from: source, now: now.monotonic)
    }

    /// Counts a dropped datagram and says why, for the log.
    mutating func refuse(_ drop: NodeCounters.Drop, _ reason: String, from source: PeerAddress) {
        countDropped(drop)
        emit(.refused(drop, reason: reason, from: source))
    }
}
