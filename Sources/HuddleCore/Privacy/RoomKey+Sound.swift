import Crypto

/// Sealing a private room's ``SoundWindow``: its frames are readable only with the room's key,
/// bound to the room, the sender and the window's times.
///
///     associated data = "huddle-sound-v1" 0x00  room:str from:32 sentAt:i64 start:i64 frames:u16
extension RoomKey {
    /// The sealed form of `window`'s frames: a fresh 12-byte nonce, the ChaCha20-Poly1305
    /// ciphertext of their public form, the 16-byte tag. `nonce` is for tests.
    func seal(_ window: SoundWindow, nonce: [UInt8]? = nil) -> [UInt8] {
        let nonce = try! nonce.map { try ChaChaPoly.Nonce(data: $0) } ?? ChaChaPoly.Nonce()
        let box = try! ChaChaPoly.seal(
            window.plainData, using: sealKey, nonce: nonce, authenticating: associatedData(for: window))
        return Array(box.combined)
    }

    /// `window` with its frames opened, if it is a window of this room sealed with this key for
    /// these fields; `nil` otherwise (another key, another room, a field changed, not sealed,
    /// or frames that are not in their one encoding). The seal is kept, so the window encodes
    /// and verifies as it travelled.
    public func open(_ window: SoundWindow) -> SoundWindow? {
        guard window.room == id, let sealed = window.seal, let box = try? ChaChaPoly.SealedBox(combined: sealed),
            let plain = try? ChaChaPoly.open(box, using: sealKey, authenticating: associatedData(for: window))
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

    func associatedData(for window: SoundWindow) -> [UInt8] {
        var writer = ByteWriter(capacity: 16 + 2 + id.utf8.count + NodeID.byteCount + 18)
        writer.write(bytes: SoundWindow.signingDomain)
        writer.write(string: id)
        writer.write(window.from)
        writer.write(window.sentAtMilliseconds)
        writer.write(window.startMilliseconds)
        writer.write(UInt16(truncatingIfNeeded: window.frameCount))
        return writer.bytes
    }
}
