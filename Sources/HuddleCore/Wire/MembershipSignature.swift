/// Probes and acks are signed by their sender, like events: what a node says about itself (that
/// it is alive, at which incarnation, address and rooms) cannot be forged by anyone else.
///
///     membershipSignedBytes = "huddle-member-v1" 0x00  the message's encoding without its signature
///
/// Peer records inside a probe or ack are still hearsay: ``Membership`` trusts an incarnation
/// only as far as the peer itself has signed one.
extension WireMessage {
    /// The domain-separation tag that starts ``membershipSignedBytes``.
    public static let membershipSigningDomain: [UInt8] = Array("huddle-member-v1".utf8) + [0]

    /// The signature of a probe or ack not signed yet: 64 zero bytes, which never verify.
    public static let unsignedMembership = [UInt8](repeating: 0, count: Event.signatureByteCount)

    /// Whether this is a probe or an ack: a message its sender signs as a whole.
    public var isMembership: Bool {
        switch self {
        case .probe, .ack: true
        default: false
        }
    }

    /// The bytes a probe's or ack's sender signs; `nil` for other messages.
    public var membershipSignedBytes: [UInt8]? {
        switch self {
        case .probe, .ack: Self.membershipSigningDomain + encoded().dropLast(Event.signatureByteCount)
        default: nil
        }
    }

    /// Whether this probe or ack carries a valid signature by its sender (`false` for other
    /// messages).
    public var hasValidMembershipSignature: Bool {
        let (from, signature): (NodeID, [UInt8])
        switch self {
        case .probe(let probe): (from, signature) = (probe.from, probe.signature)
        case .ack(let ack): (from, signature) = (ack.from, ack.signature)
        default: return false
        }
        guard let bytes = membershipSignedBytes else { return false }
        return from.isSignature(signature, over: bytes)
    }
}

extension NodeIdentity {
    /// The probe or ack, signed by this node (its `from` must be this node); other messages
    /// unchanged.
    public func signed(_ message: WireMessage) -> WireMessage {
        switch message {
        case .probe(var probe):
            precondition(probe.from == id, "a node signs only its own probes")
            probe.signature = signature(for: WireMessage.probe(probe).membershipSignedBytes!)
            return .probe(probe)
        case .ack(var ack):
            precondition(ack.from == id, "a node signs only its own acks")
            ack.signature = signature(for: WireMessage.ack(ack).membershipSignedBytes!)
            return .ack(ack)
        default:
            return message
        }
    }
}
