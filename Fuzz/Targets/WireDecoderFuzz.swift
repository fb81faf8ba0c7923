/// One fuzz input of the `wire` target (`Scripts/fuzz`, through libFuzzer's driver in
/// `main.swift`): whatever bytes a peer could send, as a datagram (a message, a relay or a sound
/// window) or a stored event. The decoder must never trap, and what it accepts must be canonical:
/// re-encoding gives back exactly the input (signatures are checked over re-encoded bytes, so two
/// encodings of one message would be a forgery surface). A violation traps, which libFuzzer
/// reports with the input that caused it.
func wireDecoderFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    if let message = try? WireMessage(decoding: bytes) {
        precondition(message.encoded() == bytes, "a message decoded from bytes it does not re-encode to")
        precondition(message.encodedByteCount == bytes.count, "encodedByteCount is not the encoded size")
        _ = message.membershipSignedBytes
        _ = message.hasValidMembershipSignature
        if case .events(let events) = message {
            for event in events {
                precondition(event.encoded().count == event.encodedByteCount, "an event's size is off")
                _ = event.signedBytes
            }
        }
    }

    if let relay = try? RelayMessage(decoding: bytes) {
        precondition(relay.encoded() == bytes, "a relay decoded from bytes it does not re-encode to")
        precondition(relay.content.encoded() == relay.payload, "a relay's payload is not canonical")
        precondition(RelayMessage.isRelayable(relay.content), "a relay carries what it must not")
        _ = relay.signer
    }

    if let window = try? SoundWindow(decoding: bytes) {
        precondition(window.encoded() == bytes, "a sound window decoded from bytes it does not re-encode to")
        precondition(window.encodedByteCount == bytes.count, "a sound window's size is off")
        precondition(try! Datagram(decoding: bytes) == .sound(window), "a datagram of kind 11 is a sound window")
        _ = window.hasValidSignature
    }

    if let event = try? Event(decoding: bytes) {
        precondition(event.encoded() == bytes, "an event decoded from bytes it does not re-encode to")
    }

    return 0
}
