import HuddleCore

/// Private rooms on the node: the keys it holds, the names people see, and joining with a
/// passphrase. A private room is keyed everywhere inside the node by its wire id
/// (``RoomKey/id``); only what a person reads says its name.
extension Node {
    /// The name people know `room` by: its own name for a public room or a private room this
    /// node has the key of, else "private room ~abcde" (the start of its id).
    func name(of room: String) -> String {
        if let key = keys[room] { return key.name }
        return RoomKey.isPrivate(room) ? "private room \(room.prefix(6))" : room
    }

    /// The joined room people call `name`: a private room of that name first, else the public one.
    func joinedRoom(named name: String) -> String? {
        joined.first { keys[$0]?.name == name } ?? (joined.contains(name) ? name : nil)
    }

    /// Derives a private room's key off the actor (scrypt takes a tenth of a second on purpose).
    nonisolated static func deriveKey(room: String, passphrase: String) async throws -> RoomKey {
        try await Task.detached(priority: .userInitiated) { try RoomKey(room: room, passphrase: passphrase) }.value
    }

    /// Joins the private room this key opens and makes it current. A room this node was in
    /// before a restart opens again where it was (no new join event, so calibration stays).
    func join(_ key: RoomKey) {
        keys[key.id] = key
        if let index = locked.firstIndex(of: key.id) {
            locked.remove(at: index)
            loadRoom(key.id)
            joined.append(key.id)
            advertiseRooms()
            makeCurrent(key.id)
            showInfo("opened private room \(key.name) again")
            perform(replication.joined(room: key.id, peers: membership.alivePeers(inRoom: key.id)))
            return
        }
        enter(key.id)
    }

    /// `/private ROOM`: asks for the passphrase at a hidden prompt on the interactive console,
    /// or reads it from the next line of stdin.
    func askPassphrase(for room: String) {
        if let problem = RoomName.problem(with: room) { return showError(problem) }
        passphraseWanted = room
        if let console {
            console.askSecret("passphrase for \(room)")
        } else {
            showInfo("the next line is the passphrase for \(room)")
        }
    }

    /// What answered ``askPassphrase(for:)`` (`nil`: the prompt was given up).
    func passphraseEntered(_ passphrase: String?) async {
        guard let room = passphraseWanted else { return }
        passphraseWanted = nil
        guard let passphrase, !passphrase.isEmpty else { return showInfo("not joined \(room): no passphrase given") }
        do {
            join(try await Self.deriveKey(room: room, passphrase: passphrase))
        } catch {
            showError("could not derive the key for \(room): \(error)")
        }
    }

    /// Puts the joined rooms in probes and in the mDNS TXT record (private ones by id only).
    func advertiseRooms() {
        membership.rooms = joined
        discovery?.update(rooms: joined)
    }

    func makeCurrent(_ room: String) {
        currentRoom = room
        try? store.setCurrentRoom(room)
        refreshConsole()
    }
}
