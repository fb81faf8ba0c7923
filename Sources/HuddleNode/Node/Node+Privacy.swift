import HuddleCore

/// Passphrases: deriving a private room's key is slow on purpose (scrypt, about 0.2 s), so the
/// shell does it off the actor and hands the machine the key.
extension Node {
    /// Derives a private room's key off the actor.
    nonisolated static func deriveKey(room: String, passphrase: String) async throws -> RoomKey {
        try await Task.detached(priority: .userInitiated) { try RoomKey(room: room, passphrase: passphrase) }.value
    }

    /// What answered the machine's passphrase prompt (`nil`: it was given up).
    func passphraseEntered(_ passphrase: String?) async {
        guard let room = machine.passphraseWanted else { return }
        let answer: PassphraseAnswer
        if let passphrase, !passphrase.isEmpty {
            do {
                answer = .key(try await Self.deriveKey(room: room, passphrase: passphrase))
            } catch {
                answer = .failed("\(error)")
            }
        } else {
            answer = .none
        }
        await feed(.passphrase(answer))
    }
}
