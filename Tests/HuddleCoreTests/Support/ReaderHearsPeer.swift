@testable import HuddleCore

/// A reader's room where one peer has joined: `peerSays` delivers the peer's next event, made at
/// `at` (its clock) and arriving at `arriving` (the reader's; `at` if not given), and returns what
/// the reader was shown.
final class ReaderHearsPeer {
    var room: RoomSession
    let peer: NodeIdentity
    private var seq: UInt64 = 1

    init(reader: NodeIdentity, _ readerNick: String, peer: NodeIdentity, _ peerNick: String, at base: WallTime) throws {
        room = RoomSession(room: "superbowl", reader: reader.id)
        self.peer = peer
        _ = try room.compose(.join(nick: readerNick), now: base, signer: reader)
        _ = peerSays(.join(nick: peerNick), at: base)
    }

    @discardableResult
    func peerSays(_ body: EventBody, at: WallTime, arriving: WallTime? = nil) -> [RoomOutput] {
        defer { seq += 1 }
        return room.receive(peer.event(seq, body, at: at, for: room), now: arriving ?? at)
    }
}
