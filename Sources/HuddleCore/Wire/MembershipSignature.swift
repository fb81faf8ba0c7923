/// Probes, acks, probe requests and nacks are signed by their sender, like events: what a node
/// says about itself (that it is alive, at which incarnation, address and rooms, whom it asks to
/// probe, whom it could not reach) cannot be forged by anyone else. A helper forwards the ack of
/// an indirect probe as the target signed it.
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

    /// Whether this is a probe, an ack, a probe request, a nack or a goodbye: a message its sender
    /// signs as a whole.
    public var isMembership: Bool {
        switch self {
        case .probe, .ack, .probeRequest, .nack, .leaving: true
        default: false
        }
    }

    /// The bytes a membership message's sender signs; `nil` for other messages.
    public var membershipSignedBytes: [UInt8]? {
        switch self {
        case .probe, .ack, .probeRequest, .nack, .leaving: Self.membershipSigningDomain + encoded().dropLast(Event.signatureByteCount)
        default: nil
        }
    }

    /// Whether this membership message carries a valid signature by its sender (`false` for other
    /// messages).
    public var hasValidMembershipSignature: Bool {
        let (from, signature): (NodeID, [UInt8])
        switch self {
        case .probe(let probe): (from, signature) = (probe.from, probe.signature)
        case .ack(let ack): (from, signature) = (ack.from, ack.signature)
        case .probeRequest(let request): (from, signature) = (request.from, request.signature)
        case .nack(let nack): (from, signature) = (nack.from, nack.signature)
        case .leaving(let leaving): (from, signature) = (leaving.from, leaving.signature)
        default: return false
        }
        guard let bytes = membershipSignedBytes else { return false }
        return from.isSignature(signature, over: bytes)
    }
}

extension NodeIdentity {
    /// The membership message, signed by this node (its `from` must be this node); other messages
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
        case .probeRequest(var request):
            precondition(request.from == id, "a node signs only its own probe requests")
            request.signature = signature(for: WireMessage.probeRequest(request).membershipSignedBytes!)
            return .probeRequest(request)
        case .nack(var nack):
            precondition(nack.from == id, "a node signs only its own nacks")
            nack.signature = signature(for: WireMessage.nack(nack).membershipSignedBytes!)
            return .nack(nack)
        case .leaving(var leaving):
            precondition(leaving.from == id, "a node says only its own goodbye")
            leaving.signature = signature(for: WireMessage.leaving(leaving).membershipSignedBytes!)
            return .leaving(leaving)
        default:
            return message
        }
    }
}
