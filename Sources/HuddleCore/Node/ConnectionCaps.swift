/// Most connections at once, in all and from one address.
public struct ConnectionCap: Sendable, Equatable {
    public var total: Int
    public var perAddress: Int

    public init(total: Int, perAddress: Int) {
        self.total = total
        self.perAddress = perAddress
    }
}

/// Every cap on the TCP connections a node accepts, in one table: its sync server's and its
/// page's. A peer or a stranger that holds its share from one address still leaves seats for
/// everyone else; how each server keeps them is its own (``OpenConnections``, ``WebSeats``).
public enum ConnectionCaps {
    /// The sync server: pulls and picture pieces from peers. A home network has a handful of
    /// peers, each with one pull per room it shares.
    public static let sync = ConnectionCap(total: 32, perAddress: 4)
    /// The page's server, every TCP connection: page loads and WebSockets.
    public static let pageConnections = ConnectionCap(total: 256, perAddress: 16)
    /// WebSockets that have not opened a session (pairing, or about to say `hello`).
    public static let pageHandshakes = ConnectionCap(total: 16, perAddress: 4)
    /// Pages of paired devices open at once.
    public static let pageSessions = ConnectionCap(total: 32, perAddress: 8)
}

/// The connections a server holds under one ``ConnectionCap``, by address: a seat for each, or a
/// refusal past the cap (the sync server's: a refused pull is asked again later).
///
/// ```swift
/// var open = OpenConnections(cap: ConnectionCaps.sync)
/// guard open.admit("192.168.1.23") == nil else { close() }
/// // ... serve, then:
/// open.release("192.168.1.23")
/// ```
public struct OpenConnections: Sendable {
    public let cap: ConnectionCap
    private var byAddress: [String: Int] = [:]
    private var total = 0

    public enum Refusal: Sendable, Equatable {
        /// Every seat is taken.
        case full
        /// The address holds its share.
        case addressFull
    }

    public init(cap: ConnectionCap) {
        self.cap = cap
    }

    /// Seats a connection from `address`, or says why not (and seats nothing).
    public mutating func admit(_ address: String) -> Refusal? {
        if total >= cap.total { return .full }
        if byAddress[address, default: 0] >= cap.perAddress { return .addressFull }
        byAddress[address, default: 0] += 1
        total += 1
        return nil
    }

    /// A connection from `address` that was seated closed.
    public mutating func release(_ address: String) {
        guard let held = byAddress[address] else { return }
        byAddress[address] = held > 1 ? held - 1 : nil
        total -= 1
    }

    /// Connections held, in all and from `address`.
    public var count: Int { total }
    public func count(from address: String) -> Int { byAddress[address, default: 0] }
}
