import Crypto

/// Sealing a ``SoundWindow`` for one peer: its frames are readable only by the two nodes of the
/// pair, with their direct-message key (``NodeIdentity/directKey(with:peerAgreementKey:name:)``,
/// X25519 between the two), and bound to the room, the sender, the receiver and the window's
/// times. In every room, public or private: a room's other members, and anyone on the network,
/// read nothing of what one node heard.
///
///     associated data = "huddle-sound-v1" 0x00  room:str from:32 to:32 sentAt:i64 start:i64 frames:u16
extension RoomKey {
    /// The sealed form of `window`'s frames for `receiver`: a fresh 12-byte nonce, the
    /// ChaCha20-Poly1305 ciphertext of their public form, the 16-byte tag. `nonce` is for tests.
    func seal(_ window: SoundWindow, for receiver: NodeID, nonce: [UInt8]? = nil) -> [UInt8] {
        let nonce = try! nonce.map { try ChaChaPoly.Nonce(data: $0) } ?? ChaChaPoly.Nonce()
        let box = try! ChaChaPoly.seal(
            window.plainData, using: sealKey, nonce: nonce,
            authenticating: associatedData(for: window, receiver: receiver))
        return Array(box.combined)
    }

    /// `window` with its frames opened, if it was sealed with this pair key for `receiver` and
    /// these fields; `nil` otherwise (another key or receiver, a field changed, or frames that are
    /// not in their one encoding). The seal is kept, so the window encodes and verifies as it
    /// travelled.
    public func open(_ window: SoundWindow, for receiver: NodeID) -> SoundWindow? {
        guard let box = try? ChaChaPoly.SealedBox(combined: window.seal),
            let plain = try? ChaChaPoly.open(
                box, using: sealKey, authenticating: associatedData(for: window, receiver: receiver))
        else { return nil }
        var reader = ByteReader(plain)
        guard let (bits, loud) = try? SoundWindow.readFrames(window.frameCount, from: &reader), reader.isAtEnd else {
            return nil
        }
        var opened = window
        opened.bits = bits
        opened.loud = loud
        return opened
    }

    func associatedData(for window: SoundWindow, receiver: NodeID) -> [UInt8] {
        var writer = ByteWriter(capacity: 16 + 2 + window.room.utf8.count + 2 * NodeID.byteCount + 18)
        writer.write(bytes: SoundWindow.signingDomain)
        writer.write(string: window.room)
        writer.write(window.from)
        writer.write(receiver)
        writer.write(window.sentAtMilliseconds)
        writer.write(window.startMilliseconds)
        writer.write(UInt16(truncatingIfNeeded: window.frameCount))
        return writer.bytes
    }
}
