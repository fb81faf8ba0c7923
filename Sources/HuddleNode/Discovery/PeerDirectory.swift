import HuddleCore

/// A service instance as one browse result reports it: the same instance shows up once per
/// interface (and Avahi reports it once per address family on each, which only counts here).
struct ServiceSighting: Hashable, Sendable, CustomStringConvertible {
    var instance: String
    var interface: UInt32
    var domain: String

    var description: String { "\(instance) on interface \(interface)" }
}

/// Timing and bounds of discovery. The defaults suit a home LAN; tests shorten them.
struct DiscoveryConfiguration: Sendable {
    /// The interface to announce and browse on (its index); 0, every one the mDNS daemon uses.
    var interface: UInt32 = 0
    /// How often to try again while no mDNS daemon answers.
    var retryInterval: Duration = .seconds(5)
    /// Most service instances tracked at once; more (a flood of fake services) are ignored.
    var maxSightings = 256
    /// Most resolves waiting for an answer at once. Each dns_sd ref costs Avahi's compat
    /// library a thread and a D-Bus connection, so the rest wait their turn.
    var maxPendingResolves = 8
    /// Most resolves kept open after their answer to follow TXT changes (rooms joined or left).
    /// Beyond this, a resolve is freed after its first answer.
    var maxWatchers = 32
    /// A resolve without an answer by then is given up (and retried after ``retryDelay``).
    var resolveTimeout: Duration = .seconds(10)
    /// How long to wait for an A record before asking for AAAA, and for AAAA before giving up.
    var addressTimeout: Duration = .seconds(2)
    /// Wait before trying again a resolve or an address lookup that failed.
    var retryDelay: Duration = .seconds(15)
    /// How long after discovery first goes on, with nobody found, the node says it is alone:
    /// mDNS answers on a home network in a second or two.
    var aloneAfter: Duration = .seconds(12)
    /// While nobody is found, the browse starts again this often: a new browse asks the network
    /// at once, where the daemon's own questions soon come minutes apart (a Wi-Fi that dropped
    /// multicast and lets it through again, a friend whose announcement was lost).
    var rebrowseEvery: Duration = .seconds(30)
}

/// The peers browsing has found, as a pure state machine: browse, resolve and address results
/// go in (with the time), ``Directive``s come out for the shell (`DiscoveryLoop`) to carry out:
/// which dns_sd resolves and record queries to start or free, and which events to report.
///
/// - Every sighting gets one resolve, at most ``DiscoveryConfiguration/maxPendingResolves`` at
///   a time; an answered resolve stays open (up to ``DiscoveryConfiguration/maxWatchers``) so
///   a changed TXT record comes in as another answer.
/// - Each answer with a valid TXT starts an address lookup of the host it names: A first, AAAA
///   only if no A came within ``DiscoveryConfiguration/addressTimeout``.
/// - Peers are keyed by node id: of all the sightings that name one id and have an address,
///   one is reported (IPv4 before IPv6, then lowest interface, then instance name); a change
///   to it is reported as ``DiscoveryEvent/found(_:)`` again, the last one going as
///   ``DiscoveryEvent/lost(_:)``.
/// - The node's own id, and TXT records that do not parse, are ignored (and their resolve freed).
struct PeerDirectory {
    /// Which address record to look up.
    enum AddressFamily: Hashable, Sendable {
        case ipv4
        case ipv6
    }

    /// Why a sighting is not a peer.
    enum IgnoreReason: Hashable, Sendable {
        /// It is this node's own advertisement.
        case ownNode
        /// Its TXT record is not a valid Huddle advertisement.
        case invalidTXT(TXTRecordError)
        /// More sightings than ``DiscoveryConfiguration/maxSightings`` are tracked.
        case tooManySightings
    }

    /// What the shell should do.
    enum Directive: Hashable, Sendable {
        /// Start a resolve for the sighting.
        case resolve(ServiceSighting)
        /// Free the sighting's resolve, if it has one.
        case cancelResolve(ServiceSighting)
        /// Look up `host`'s address on the sighting's interface, replacing any lookup running.
        case queryAddress(ServiceSighting, host: String, family: AddressFamily)
        /// Free the sighting's address lookup, if it has one.
        case cancelQuery(ServiceSighting)
        /// Report an event.
        case emit(DiscoveryEvent)
        /// Log (at debug) that a sighting is not a peer.
        case ignore(ServiceSighting, IgnoreReason)
        /// Free the browse and start another (then ``browseRestarted()``).
        case restartBrowse
    }

    typealias Instant = ContinuousClock.Instant

    private enum ResolveState: Equatable {
        /// Waiting for a free resolve slot.
        case queued
        /// A resolve is running, started at `since`, not answered yet.
        case pending(since: Instant)
        /// A resolve answered and stays open to follow changes.
        case watching
        /// No resolve; a new one is due at `retryAt` (never if `nil`).
        case idle(retryAt: Instant?)

        var isPending: Bool {
            if case .pending = self { return true }
            return false
        }
    }

    private struct Lookup: Equatable {
        var host: String
        var family: AddressFamily
        var since: Instant
    }

    private struct Entry {
        /// Browse adds minus removes: Avahi adds an instance once per address family.
        var presence = 1
        var resolve = ResolveState.queued
        /// The last valid answer.
        var advertisement: ServiceAdvertisement?
        var host: String?
        var address: String?
        var addressFamily = AddressFamily.ipv4
        var lookup: Lookup?
        var lookupRetryAt: Instant?
    }

    /// This node's id: its own advertisement is not a peer.
    let ownID: NodeID?
    let configuration: DiscoveryConfiguration
    private var entries: [ServiceSighting: Entry] = [:]
    private var resolveQueue: [ServiceSighting] = []
    /// What was last reported for each id.
    private(set) var peers: [NodeID: DiscoveredPeer] = [:]
    /// When to say that nobody was found (``DiscoveryEvent/alone(ownAnnouncementSeen:)``), until
    /// it is said or someone is.
    private var aloneCheckAt: Instant?
    private var aloneChecked = false
    /// When to see whether the browse should start again (``DiscoveryConfiguration/rebrowseEvery``).
    private var rebrowseAt: Instant?
    /// Whether a browse brought this node's own announcement back: mDNS works on this machine.
    private(set) var ownAnnouncementSeen = false

    init(ownID: NodeID?, configuration: DiscoveryConfiguration = .init()) {
        self.ownID = ownID
        self.configuration = configuration
    }

    /// Number of sightings tracked.
    var sightingCount: Int { entries.count }

    // MARK: Inputs

    /// Discovery went on: if nobody is found by ``DiscoveryConfiguration/aloneAfter`` from the
    /// first time, ``tick(now:)`` says so, once.
    mutating func wentOnline(now: Instant) {
        rebrowseAt = now + configuration.rebrowseEvery
        guard !aloneChecked, aloneCheckAt == nil else { return }
        aloneCheckAt = now + configuration.aloneAfter
    }

    /// A browse reported the instance (once per address family).
    mutating func browseAdded(_ sighting: ServiceSighting, now: Instant) -> [Directive] {
        if entries[sighting] != nil {
            entries[sighting]!.presence += 1
            return []
        }
        guard entries.count < configuration.maxSightings else { return [.ignore(sighting, .tooManySightings)] }
        entries[sighting] = Entry()
        resolveQueue.append(sighting)
        return startQueuedResolves(now: now)
    }

    /// A browse reported the instance gone (once per address family).
    mutating func browseRemoved(_ sighting: ServiceSighting, now: Instant) -> [Directive] {
        guard var entry = entries[sighting] else { return [] }
        entry.presence -= 1
        guard entry.presence <= 0 else {
            entries[sighting] = entry
            return []
        }
        entries[sighting] = nil
        resolveQueue.removeAll { $0 == sighting }
        var directives = [Directive]()
        if entry.resolve == .watching || entry.resolve.isPending { directives.append(.cancelResolve(sighting)) }
        if entry.lookup != nil { directives.append(.cancelQuery(sighting)) }
        if let id = entry.advertisement?.id { directives += refresh(id) }
        return directives + startQueuedResolves(now: now)
    }

    /// A resolve answered: the instance's host, port and TXT record.
    mutating func resolved(
        _ sighting: ServiceSighting, host: String, port: UInt16, txt: [UInt8], now: Instant
    ) -> [Directive] {
        guard var entry = entries[sighting], entry.resolve == .watching || entry.resolve.isPending else { return [] }
        let previousID = entry.advertisement?.id
        var directives = [Directive]()

        let parsed: ServiceAdvertisement
        do {
            parsed = try ServiceAdvertisement.parse(txt: txt, port: port)
        } catch {
            directives.append(.ignore(sighting, .invalidTXT(error)))
            return directives + forget(sighting, entry, previousID: previousID, now: now)
        }
        if parsed.id == ownID {
            ownAnnouncementSeen = true
            directives.append(.ignore(sighting, .ownNode))
            return directives + forget(sighting, entry, previousID: previousID, now: now)
        }

        if entry.resolve.isPending {
            if watcherCount < configuration.maxWatchers {
                entry.resolve = .watching
            } else {
                entry.resolve = .idle(retryAt: nil)
                directives.append(.cancelResolve(sighting))
            }
        }
        if entry.host != host {
            entry.address = nil
        }
        entry.host = host
        entry.advertisement = parsed
        // Ask again even for the same host: a resolve answers again when the address changed.
        entry.lookup = Lookup(host: host, family: .ipv4, since: now)
        entry.lookupRetryAt = nil
        entries[sighting] = entry
        directives.append(.queryAddress(sighting, host: host, family: .ipv4))
        if let previousID, previousID != parsed.id { directives += refresh(previousID) }
        directives += refresh(parsed.id)
        return directives + startQueuedResolves(now: now)
    }

    /// A resolve failed (or the shell could not start it): free it and try again later.
    mutating func resolveFailed(_ sighting: ServiceSighting, now: Instant) -> [Directive] {
        guard var entry = entries[sighting], entry.resolve == .watching || entry.resolve.isPending else { return [] }
        entry.resolve = .idle(retryAt: now + configuration.retryDelay)
        entries[sighting] = entry
        return [.cancelResolve(sighting)] + startQueuedResolves(now: now)
    }

    /// An address lookup answered with `address` (an IP literal).
    mutating func addressFound(
        _ sighting: ServiceSighting, family: AddressFamily, address: String, now: Instant
    ) -> [Directive] {
        guard var entry = entries[sighting], let lookup = entry.lookup, lookup.family == family else { return [] }
        entry.lookup = nil
        entry.address = address
        entry.addressFamily = family
        entries[sighting] = entry
        var directives: [Directive] = [.cancelQuery(sighting)]
        if let id = entry.advertisement?.id { directives += refresh(id) }
        return directives
    }

    /// An address lookup failed (or could not start): give up on it for now.
    mutating func addressFailed(_ sighting: ServiceSighting, now: Instant) -> [Directive] {
        guard var entry = entries[sighting], entry.lookup != nil else { return [] }
        entry.lookup = nil
        entry.lookupRetryAt = now + configuration.retryDelay
        entries[sighting] = entry
        return [.cancelQuery(sighting)]
    }

    /// Timeouts and retries due by `now`.
    mutating func tick(now: Instant) -> [Directive] {
        var directives = [Directive]()
        if let at = rebrowseAt, at <= now {
            rebrowseAt = now + configuration.rebrowseEvery
            if peers.isEmpty { directives.append(.restartBrowse) }
        }
        if let at = aloneCheckAt, at <= now {
            aloneCheckAt = nil
            aloneChecked = true
            directives.append(.emit(.alone(ownAnnouncementSeen: ownAnnouncementSeen)))
        }
        for sighting in entries.keys.sorted(by: Self.order) {
            guard var entry = entries[sighting] else { continue }
            switch entry.resolve {
            case .pending(let since) where now - since >= configuration.resolveTimeout:
                directives += resolveFailed(sighting, now: now)
                entry = entries[sighting]!
            case .idle(let retryAt?) where retryAt <= now:
                entry.resolve = .queued
                resolveQueue.append(sighting)
            default:
                break
            }
            if let lookup = entry.lookup, now - lookup.since >= configuration.addressTimeout {
                switch lookup.family {
                case .ipv4:
                    entry.lookup = Lookup(host: lookup.host, family: .ipv6, since: now)
                    directives.append(.queryAddress(sighting, host: lookup.host, family: .ipv6))
                case .ipv6:
                    entry.lookup = nil
                    entry.lookupRetryAt = now + configuration.retryDelay
                    directives.append(.cancelQuery(sighting))
                }
            } else if entry.lookup == nil, let retryAt = entry.lookupRetryAt, retryAt <= now, let host = entry.host {
                entry.lookupRetryAt = nil
                entry.lookup = Lookup(host: host, family: .ipv4, since: now)
                directives.append(.queryAddress(sighting, host: host, family: .ipv4))
            }
            entries[sighting] = entry
        }
        return directives + startQueuedResolves(now: now)
    }

    /// The earliest time ``tick(now:)`` has something to do, if any.
    var nextDeadline: Instant? {
        var deadline: Instant?
        func consider(_ instant: Instant?) {
            guard let instant else { return }
            deadline = deadline.map { min($0, instant) } ?? instant
        }
        for entry in entries.values {
            switch entry.resolve {
            case .pending(let since): consider(since + configuration.resolveTimeout)
            case .idle(let retryAt): consider(retryAt)
            case .queued, .watching: break
            }
            consider(entry.lookup.map { $0.since + configuration.addressTimeout })
            if entry.lookup == nil, entry.host != nil { consider(entry.lookupRetryAt) }
        }
        consider(aloneCheckAt)
        if peers.isEmpty { consider(rebrowseAt) }
        return deadline
    }

    /// The browse started again (``Directive/restartBrowse``, said only while no peer is
    /// reported): every sighting is forgotten, its resolve and lookup freed, and the new browse
    /// reports again those still there.
    mutating func browseRestarted() -> [Directive] {
        var directives = [Directive]()
        for (sighting, entry) in entries.sorted(by: { Self.order($0.key, $1.key) }) {
            if entry.resolve == .watching || entry.resolve.isPending { directives.append(.cancelResolve(sighting)) }
            if entry.lookup != nil { directives.append(.cancelQuery(sighting)) }
        }
        entries = [:]
        resolveQueue = []
        return directives
    }

    /// Forgets everything (the daemon went away; the shell has freed every ref): every peer
    /// reported so far is lost.
    mutating func reset() -> [Directive] {
        let lost = peers.keys.sorted().map { Directive.emit(.lost($0)) }
        entries = [:]
        resolveQueue = []
        peers = [:]
        return lost
    }

    // MARK: Helpers

    private var watcherCount: Int { entries.values.count(where: { $0.resolve == .watching }) }
    private var pendingCount: Int { entries.values.count(where: { $0.resolve.isPending }) }

    private mutating func startQueuedResolves(now: Instant) -> [Directive] {
        var directives = [Directive]()
        var pending = pendingCount
        while pending < configuration.maxPendingResolves, !resolveQueue.isEmpty {
            let sighting = resolveQueue.removeFirst()
            guard entries[sighting]?.resolve == .queued else { continue }
            entries[sighting]!.resolve = .pending(since: now)
            directives.append(.resolve(sighting))
            pending += 1
        }
        return directives
    }

    /// The sighting is not a peer (any more): free its resolve and lookup, keep it (so repeated
    /// browse adds do not resolve it again) without an advertisement.
    private mutating func forget(
        _ sighting: ServiceSighting, _ entry: Entry, previousID: NodeID?, now: Instant
    ) -> [Directive] {
        var entry = entry
        var directives: [Directive] = [.cancelResolve(sighting)]
        if entry.lookup != nil { directives.append(.cancelQuery(sighting)) }
        entry.resolve = .idle(retryAt: nil)
        entry.advertisement = nil
        entry.host = nil
        entry.address = nil
        entry.lookup = nil
        entry.lookupRetryAt = nil
        entries[sighting] = entry
        if let previousID { directives += refresh(previousID) }
        return directives + startQueuedResolves(now: now)
    }

    /// Reports the best sighting of `id` if it differs from what was reported, or its loss.
    private mutating func refresh(_ id: NodeID) -> [Directive] {
        var best: (sighting: ServiceSighting, entry: Entry)?
        for (sighting, entry) in entries where entry.advertisement?.id == id && entry.address != nil {
            if let current = best, !Self.better(sighting, entry, than: current.sighting, current.entry) { continue }
            best = (sighting, entry)
        }
        guard let best, let ad = best.entry.advertisement, let address = best.entry.address else {
            return peers.removeValue(forKey: id) == nil ? [] : [.emit(.lost(id))]
        }
        let peer = DiscoveredPeer(
            id: id, nick: ad.nick, rooms: ad.rooms, protocolVersion: ad.protocolVersion, host: address,
            port: ad.port, instanceName: best.sighting.instance)
        guard peers[id] != peer else { return [] }
        peers[id] = peer
        aloneCheckAt = nil
        aloneChecked = true
        return [.emit(.found(peer))]
    }

    private static func better(_ a: ServiceSighting, _ ea: Entry, than b: ServiceSighting, _ eb: Entry) -> Bool {
        if ea.addressFamily != eb.addressFamily { return ea.addressFamily == .ipv4 }
        return order(a, b)
    }

    private static func order(_ a: ServiceSighting, _ b: ServiceSighting) -> Bool {
        (a.interface, a.instance, a.domain) < (b.interface, b.instance, b.domain)
    }
}
