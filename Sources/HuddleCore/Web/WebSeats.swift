/// Who holds the page server's connections (docs/WEB.md, "What the server refuses"): every TCP
/// connection takes a seat when it is accepted, a WebSocket a handshake seat when it upgrades,
/// and a session seat once it proves a paired device. Pure: the server's glue
/// (`WebAdmission`) closes what it is told to.
///
/// Seats are kept for paired devices, and unproven connections are the first to go:
/// - a session (a paired device's page) is never taken away to seat another;
/// - when the connections or the handshakes are all taken, a newcomer takes the oldest unproven
///   seat of the address that holds the most, if that address holds at least two more than the
///   newcomer's does: a stranger who fills the server from a few addresses loses seats to each
///   phone that comes, and a phone's one connection is never given to the stranger's next.
///
/// Round 4 (issue 45): 4 addresses × 8 idle WebSockets reopened at the deadline, or 16 × 16 slow
/// TCP connections, kept a phone from pairing 0 of 30 times.
///
/// ```swift
/// var seats = WebSeats()
/// guard case .admitted(let evicting) = seats.accept(7, from: "192.168.1.23") else { close(7) }
/// if let evicting { close(evicting) }
/// ```
public struct WebSeats: Sendable {
    /// The page's caps, from the node's one table (``ConnectionCaps``).
    public struct Limits: Sendable, Equatable {
        /// TCP connections (page loads, WebSockets).
        public var connections = ConnectionCaps.pageConnections
        /// WebSockets that have not opened a session (pairing, or about to say `hello`).
        public var handshakes = ConnectionCaps.pageHandshakes
        /// Pages of paired devices open at once.
        public var sessions = ConnectionCaps.pageSessions

        public init() {}
    }

    /// How far a connection has come.
    public enum Stage: Sendable, Equatable {
        /// Accepted: HTTP requests (the page's files), or an upgrade still to come.
        case http
        /// A WebSocket that has not proved a paired device yet.
        case handshake
        /// A paired device's page.
        case session
    }

    /// What the server does with a connection, or an upgrade.
    public enum Verdict: Sendable, Equatable {
        /// Seated; `evicting` names the connection whose seat it took (close it).
        case admitted(evicting: Int?)
        case refused
    }

    struct Seat: Sendable, Equatable {
        var address: String
        var stage: Stage
    }

    public let limits: Limits
    /// Seats by connection; ids grow with time, so the lowest is the oldest.
    private(set) var seats: [Int: Seat] = [:]

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// A TCP connection `id` from `address` was accepted.
    public mutating func accept(_ id: Int, from address: String) -> Verdict {
        guard seats.values.count(where: { $0.address == address }) < limits.connections.perAddress else { return .refused }
        let verdict = seat(address, limit: limits.connections.total, counted: { _ in true }, evictable: { $0.stage != .session })
        if case .admitted = verdict { seats[id] = Seat(address: address, stage: .http) }
        return verdict
    }

    /// Connection `id` asks to become a WebSocket.
    public mutating func upgrade(_ id: Int) -> Verdict {
        guard let seat = seats[id], seat.stage == .http else { return .refused }
        let isHandshake = { (seat: Seat) in seat.stage == .handshake }
        guard seats.values.count(where: { isHandshake($0) && $0.address == seat.address }) < limits.handshakes.perAddress else {
            return .refused
        }
        let verdict = self.seat(seat.address, limit: limits.handshakes.total, counted: isHandshake, evictable: isHandshake)
        if case .admitted = verdict { seats[id]?.stage = .handshake }
        return verdict
    }

    /// WebSocket `id` proved a paired device: `false` when the sessions are all taken.
    public mutating func open(_ id: Int) -> Bool {
        guard let seat = seats[id], seat.stage == .handshake else { return false }
        let sessions = seats.values.filter { $0.stage == .session }
        guard sessions.count < limits.sessions.total, sessions.count(where: { $0.address == seat.address }) < limits.sessions.perAddress
        else { return false }
        seats[id]?.stage = .session
        return true
    }

    /// Connection `id` closed (or was never seated): its seat is free.
    public mutating func close(_ id: Int) {
        seats[id] = nil
    }

    /// How far connection `id` has come; `nil` if it holds no seat.
    public func stage(of id: Int) -> Stage? {
        seats[id]?.stage
    }

    /// A seat for a newcomer from `address` among the seats `counted`, `limit` in all: free, or
    /// taken from the oldest `evictable` seat of the address holding the most of them, if that
    /// is at least two more than `address` holds.
    private mutating func seat(
        _ address: String, limit: Int, counted: (Seat) -> Bool, evictable: (Seat) -> Bool
    ) -> Verdict {
        guard seats.values.count(where: counted) >= limit else { return .admitted(evicting: nil) }
        var held: [String: [Int]] = [:]
        for (id, seat) in seats where counted(seat) && evictable(seat) {
            held[seat.address, default: []].append(id)
        }
        let newcomers = held[address]?.count ?? 0
        guard let (_, ids) = held.max(by: { ($0.value.count, $1.key) < ($1.value.count, $0.key) }),
            ids.count >= newcomers + 2, let oldest = ids.min()
        else { return .refused }
        seats[oldest] = nil
        return .admitted(evicting: oldest)
    }
}
