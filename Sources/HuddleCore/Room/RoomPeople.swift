/// Who is in a room and under which nick, as its joins and leaves say: one job of a
/// ``RoomSession``, apart from its log, calibration and hold-back.
public struct RoomPeople: Sendable {
    /// Nick from each origin's latest join.
    private var nicks: [NodeID: String] = [:]
    /// Every origin whose latest join used each nick.
    private var holders: [String: Set<NodeID>] = [:]
    /// The node first seen under each nick, anywhere (the node's memory, see
    /// ``Member/sharesNick``): another node using one of these nicks is shown with its id.
    public var knownNicks: [String: NodeID] = [:]
    /// Origins whose latest join was not followed by a leave.
    public private(set) var memberIDs: Set<NodeID> = []

    public init() {}

    /// `origin` joined under `nick`.
    mutating func joined(_ origin: NodeID, as nick: String) {
        if let old = nicks[origin] { holders[old]?.remove(origin) }
        nicks[origin] = nick
        holders[nick, default: []].insert(origin)
        memberIDs.insert(origin)
    }

    /// `origin` left.
    mutating func left(_ origin: NodeID) {
        memberIDs.remove(origin)
    }

    /// Current members, sorted by nick then id.
    public var members: [Member] {
        memberIDs.map(member).sorted { ($0.nick, $0.id) < ($1.nick, $1.id) }
    }

    /// The member with this id, with a short id as nick if no join from it has arrived yet.
    public func member(_ id: NodeID) -> Member {
        guard let nick = nicks[id] else { return Member(id: id, nick: "node-\(id)") }
        let known = knownNicks[nick]
        return Member(id: id, nick: nick, sharesNick: (holders[nick]?.count ?? 0) > 1 || (known != nil && known != id))
    }
}
