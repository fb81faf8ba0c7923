import HuddleCore
import Logging

#if canImport(CDNSSD)
import CDNSSD
#elseif canImport(dnssd)
import dnssd
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The thread behind ``ServiceDiscovery``: it owns every dns_sd ref and drives them all from one
/// `poll(2)` on their `DNSServiceRefSockFD`s and the mailbox's wake-up pipe.
///
/// `DNSServiceProcessResult` is called only for a ref whose socket is readable; callbacks just
/// leave replies in the inbox, which the loop handles after the call returns, so refs are
/// created and freed outside callbacks. The loop interprets ``PeerDirectory``'s directives,
/// registers and updates the node's own service, and goes off (freeing every ref, reporting
/// peers lost and discovery unavailable) when the mDNS daemon is missing or goes away, trying
/// again every ``DiscoveryConfiguration/retryInterval``.
///
/// Everything here runs on the loop's thread; only the mailbox and the continuation are shared.
final class DiscoveryLoop {
    private enum Role {
        case register
        case browse
        case resolve(ServiceSighting)
        case query(ServiceSighting, PeerDirectory.AddressFamily)
    }

    private struct LiveRef {
        let ref: DNSServiceRef
        let fd: Int32
        let role: Role
        let context: Unmanaged<DNSServiceCallbackContext>
    }

    /// Name conflicts tolerated in a row before advertising gives up until the next retry.
    private static let maxRegisterAttempts = 10
    /// Longest `poll` wait, so a lost wake-up costs at most this.
    private static let maxPollMilliseconds: Int64 = 30_000

    private let mailbox: DiscoveryMailbox
    private let continuation: AsyncStream<DiscoveryEvent>.Continuation
    private let configuration: DiscoveryConfiguration
    private let logger: Logger
    private var advertisement: ServiceAdvertisement?
    private var directory: PeerDirectory
    private let inbox = DNSServiceInbox()

    private var refs: [UInt64: LiveRef] = [:]
    private var nextRefID: UInt64 = 1
    private var registerRef: UInt64?
    private var browseRef: UInt64?
    private var resolveRefs: [ServiceSighting: UInt64] = [:]
    private var queryRefs: [ServiceSighting: UInt64] = [:]

    private var registerAttempt = 1
    /// The TXT record the daemon has for our service.
    private var advertisedTXT: [UInt8]?
    private var online = false
    /// Whether the current outage has been reported (it is reported once).
    private var outageReported = false
    /// When to try again while off.
    private var retryAt: ContinuousClock.Instant?
    private var running = true

    init(
        mailbox: DiscoveryMailbox, continuation: AsyncStream<DiscoveryEvent>.Continuation,
        advertisement: ServiceAdvertisement?, configuration: DiscoveryConfiguration, logger: Logger
    ) {
        self.mailbox = mailbox
        self.continuation = continuation
        self.advertisement = advertisement
        self.configuration = configuration
        self.logger = logger
        self.directory = PeerDirectory(ownID: advertisement?.id, configuration: configuration)
    }

    /// Runs until a ``DiscoveryMailbox/Command/stop`` command; then the goodbye is sent, every ref
    /// freed and the stream finished.
    func run() {
        connect()
        while running {
            for command in mailbox.take() {
                handle(command)
            }
            guard running else { break }
            drainInbox()
            let now = ContinuousClock.now
            if online {
                perform(directory.tick(now: now))
            } else if let retryAt, retryAt <= now {
                connect()
            }
            pollOnce()
        }
        closeAll()
        continuation.finish()
        logger.debug("discovery stopped")
    }

    // MARK: Commands

    private func handle(_ command: DiscoveryMailbox.Command) {
        switch command {
        case .stop:
            running = false
        case .updateRooms(let rooms):
            guard var ad = advertisement else {
                logger.debug("not advertising; rooms not updated")
                return
            }
            ad.rooms = rooms
            advertisement = ad
            updateTXT()
        }
    }

    private func updateTXT() {
        guard let ad = advertisement, online, let id = registerRef, let live = refs[id] else { return }
        let txt = ad.txtRecord()
        guard txt != advertisedTXT else { return }
        let error = DNSServiceCalls.updateTXT(live.ref, txt: txt)
        if error == DNSServiceErrorType(kDNSServiceErr_NoError) {
            advertisedTXT = txt
            logger.debug("advertised rooms updated", metadata: ["huddle.rooms": "\(ad.advertisedRooms)"])
            return
        }
        logger.debug(
            "could not update the TXT record; registering again",
            metadata: ["huddle.error": "\(DNSServiceError(code: error))"])
        close(id)
        if let error = register() { goOffline(reason: "could not advertise: \(error)") }
    }

    // MARK: Going on and off

    private func connect() {
        retryAt = nil
        switch openBrowse() {
        case .success(let id):
            browseRef = id
        case .failure(let error):
            goOffline(reason: "\(error)")
            return
        }
        if let error = register() {
            goOffline(reason: error.isDaemonMissing ? "\(error)" : "could not advertise: \(error)")
            return
        }
        online = true
        outageReported = false
        directory.wentOnline(now: .now)
        logger.info("discovery is on", metadata: ["huddle.service": "\(ServiceAdvertisement.serviceType)"])
        continuation.yield(.available)
    }

    /// A browse on the configured interface (or all).
    private func openBrowse() -> Result<UInt64, DNSServiceError> {
        let interface = configuration.interface
        return open(.browse) { DNSServiceCalls.browse(interface: interface, context: $0) }
    }

    /// Registers the advertisement (if any), picking the next name on a conflict. `nil` when
    /// registered (or nothing to register).
    private func register() -> DNSServiceError? {
        guard let ad = advertisement else { return nil }
        let txt = ad.txtRecord()
        while registerAttempt <= Self.maxRegisterAttempts {
            let name = ad.instanceName(attempt: registerAttempt)
            let interface = configuration.interface
            let result = open(.register) {
                DNSServiceCalls.register(name: name, port: ad.port, txt: txt, interface: interface, context: $0)
            }
            switch result {
            case .success(let id):
                registerRef = id
                advertisedTXT = txt
                logger.debug("registering", metadata: ["huddle.instance": "\(name)"])
                return nil
            case .failure(let error) where error.code == DNSServiceErrorType(kDNSServiceErr_NameConflict):
                logger.info("service name taken; trying another", metadata: ["huddle.instance": "\(name)"])
                registerAttempt += 1
            case .failure(let error):
                return error
            }
        }
        registerAttempt = 1
        return DNSServiceError(code: DNSServiceErrorType(kDNSServiceErr_NameConflict))
    }

    /// Frees every ref, reports every peer lost and (once per outage) discovery unavailable, and
    /// schedules the next try.
    private func goOffline(reason: String) {
        closeAll()
        let wasOnline = online
        online = false
        advertisedTXT = nil
        perform(directory.reset())
        retryAt = .now + configuration.retryInterval
        guard !outageReported else {
            logger.debug("discovery still off", metadata: ["huddle.reason": "\(reason)"])
            return
        }
        outageReported = true
        let message =
            "discovery is off: \(reason); trying again every \(Self.describe(configuration.retryInterval))"
            + " (peers given with --peer still work)"
        logger.info(
            wasOnline ? "discovery went off" : "discovery is off", metadata: ["huddle.reason": "\(reason)"])
        continuation.yield(.unavailable(message))
    }

    private func daemonLost(_ error: DNSServiceError) {
        if error.isDaemonMissing {
            goOffline(
                reason: "the mDNS daemon stopped answering (on Debian/Ubuntu: sudo systemctl start avahi-daemon)")
        } else {
            goOffline(reason: "mDNS failed: \(error)")
        }
    }

    // MARK: Polling

    private func pollOnce() {
        let ids = refs.keys.sorted()
        var fds = [pollfd(fd: mailbox.wakeReadFD, events: Int16(POLLIN), revents: 0)]
        for id in ids {
            fds.append(pollfd(fd: refs[id]!.fd, events: Int16(POLLIN), revents: 0))
        }
        let ready = poll(&fds, nfds_t(fds.count), pollTimeout())
        guard ready > 0 else {
            if ready < 0, errno != EINTR {
                logger.debug("poll failed", metadata: ["huddle.errno": "\(errno)"])
            }
            return
        }
        for (index, id) in ids.enumerated() {
            let revents = fds[index + 1].revents
            // A ref freed while handling an earlier one is skipped (its fd may be reused already).
            guard revents != 0, let live = refs[id] else { continue }
            if revents & Int16(POLLIN) != 0 {
                let error = DNSServiceProcessResult(live.ref)
                drainInbox()
                if error != DNSServiceErrorType(kDNSServiceErr_NoError), refs[id] != nil {
                    failed(id, DNSServiceError(code: error))
                }
            } else {
                failed(id, DNSServiceError(code: DNSServiceErrorType(kDNSServiceErr_Unknown)))
            }
        }
    }

    private func pollTimeout() -> Int32 {
        let deadline = online ? directory.nextDeadline : retryAt
        guard let deadline else { return Int32(Self.maxPollMilliseconds) }
        let wait = deadline - .now
        guard wait > .zero else { return 0 }
        let (seconds, attoseconds) = wait.components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(min(milliseconds, Self.maxPollMilliseconds))
    }

    /// A ref's socket failed or `DNSServiceProcessResult` returned an error.
    private func failed(_ id: UInt64, _ error: DNSServiceError) {
        guard let live = refs[id] else { return }
        switch live.role {
        case .register, .browse:
            daemonLost(error)
        case .resolve(let sighting):
            perform(directory.resolveFailed(sighting, now: .now))
        case .query(let sighting, _):
            perform(directory.addressFailed(sighting, now: .now))
        }
    }

    // MARK: Replies

    private func drainInbox() {
        while !inbox.replies.isEmpty {
            let replies = inbox.replies
            inbox.replies = []
            for (id, reply) in replies {
                // Replies of a ref freed meanwhile are dropped.
                guard let live = refs[id] else { continue }
                handle(reply, role: live.role, id: id)
            }
        }
    }

    private func handle(_ reply: DNSServiceReply, role: Role, id: UInt64) {
        let noError = DNSServiceErrorType(kDNSServiceErr_NoError)
        switch (reply, role) {
        case (.register(let error, let name), .register):
            if error == noError {
                logger.info("advertising", metadata: ["huddle.instance": "\(name)"])
            } else if error == DNSServiceErrorType(kDNSServiceErr_NameConflict) {
                logger.info("service name taken; trying another", metadata: ["huddle.instance": "\(name)"])
                close(id)
                registerAttempt += 1
                if let error = register() { goOffline(reason: "could not advertise: \(error)") }
            } else {
                daemonLost(DNSServiceError(code: error))
            }

        case (.browse(let flags, let interface, let error, let instance, let domain), .browse):
            guard error == noError else {
                daemonLost(DNSServiceError(code: error))
                return
            }
            let sighting = ServiceSighting(
                instance: instance, interface: interface, domain: domain.isEmpty ? DNSServiceCalls.domain : domain)
            if flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0 {
                perform(directory.browseAdded(sighting, now: .now))
            } else {
                perform(directory.browseRemoved(sighting, now: .now))
            }

        case (.resolve(_, let error, let host, let port, let txt), .resolve(let sighting)):
            if error == noError, !host.isEmpty {
                perform(directory.resolved(sighting, host: host, port: port, txt: txt, now: .now))
            } else {
                logger.debug(
                    "resolve failed",
                    metadata: ["huddle.instance": "\(sighting)", "huddle.error": "\(DNSServiceError(code: error))"])
                perform(directory.resolveFailed(sighting, now: .now))
            }

        case (.query(let flags, let interface, let error, let type, let rdata), .query(let sighting, let family)):
            guard error == noError else {
                perform(directory.addressFailed(sighting, now: .now))
                return
            }
            guard flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0,
                let address = Self.address(rdata, type: type, family: family, interface: interface)
            else { return }
            perform(directory.addressFound(sighting, family: family, address: address, now: .now))

        default:
            logger.debug("unexpected dns_sd reply", metadata: ["huddle.reply": "\(reply)"])
        }
    }

    /// The IP literal in an A or AAAA record of the family asked for; an IPv6 link-local address
    /// gets its zone (`%eth0`), without which it cannot be used.
    private static func address(
        _ rdata: [UInt8], type: UInt16, family: PeerDirectory.AddressFamily, interface: UInt32
    ) -> String? {
        let (wantedType, count, af): (Int, Int, Int32) =
            switch family {
            case .ipv4: (Int(kDNSServiceType_A), 4, AF_INET)
            case .ipv6: (Int(kDNSServiceType_AAAA), 16, AF_INET6)
            }
        guard Int(type) == wantedType, rdata.count == count else { return nil }
        var buffer = [CChar](repeating: 0, count: 64)
        guard inet_ntop(af, rdata, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        var literal = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if family == .ipv6, rdata[0] == 0xFE, rdata[1] & 0xC0 == 0x80 {
            var name = [CChar](repeating: 0, count: 64)
            if if_indextoname(interface, &name) != nil {
                literal += "%" + String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }
        return literal
    }

    // MARK: Directives

    private func perform(_ directives: [PeerDirectory.Directive]) {
        var queue = directives[...]
        while let directive = queue.popFirst() {
            queue.append(contentsOf: execute(directive))
        }
    }

    private func execute(_ directive: PeerDirectory.Directive) -> [PeerDirectory.Directive] {
        switch directive {
        case .resolve(let sighting):
            switch open(.resolve(sighting), { DNSServiceCalls.resolve(sighting, context: $0) }) {
            case .success(let id):
                resolveRefs[sighting] = id
                return []
            case .failure(let error):
                logger.debug(
                    "could not start a resolve",
                    metadata: ["huddle.instance": "\(sighting)", "huddle.error": "\(error)"])
                return directory.resolveFailed(sighting, now: .now)
            }
        case .cancelResolve(let sighting):
            if let id = resolveRefs[sighting] { close(id) }
            return []
        case .queryAddress(let sighting, let host, let family):
            if let id = queryRefs[sighting] { close(id) }
            let type = UInt16(family == .ipv4 ? kDNSServiceType_A : kDNSServiceType_AAAA)
            let result = open(.query(sighting, family)) {
                DNSServiceCalls.query(host: host, type: type, interface: sighting.interface, context: $0)
            }
            switch result {
            case .success(let id):
                queryRefs[sighting] = id
                return []
            case .failure(let error):
                logger.debug(
                    "could not start an address lookup",
                    metadata: ["huddle.host": "\(host)", "huddle.error": "\(error)"])
                return directory.addressFailed(sighting, now: .now)
            }
        case .cancelQuery(let sighting):
            if let id = queryRefs[sighting] { close(id) }
            return []
        case .emit(let event):
            log(event)
            continuation.yield(event)
            return []
        case .ignore(let sighting, let reason):
            logger.debug(
                "ignoring a service", metadata: ["huddle.instance": "\(sighting)", "huddle.reason": "\(reason)"])
            return []
        case .restartBrowse:
            if let id = browseRef { close(id) }
            let freed = directory.browseRestarted()
            switch openBrowse() {
            case .success(let id):
                browseRef = id
                logger.debug("nobody found yet: browsing again")
            case .failure(let error):
                daemonLost(error)
            }
            return freed
        }
    }

    private func log(_ event: DiscoveryEvent) {
        switch event {
        case .found(let peer):
            logger.debug(
                "peer found",
                metadata: [
                    "huddle.peer": "\(peer.id)", "huddle.address": "\(peer.host):\(peer.port)",
                    "huddle.rooms": "\(peer.rooms)",
                ])
        case .lost(let id):
            logger.debug("peer lost", metadata: ["huddle.peer": "\(id)"])
        case .alone(let ownAnnouncementSeen):
            logger.debug("nobody found", metadata: ["huddle.own_announcement_seen": "\(ownAnnouncementSeen)"])
        case .available, .unavailable:
            break
        }
    }

    // MARK: Refs

    private func open(
        _ role: Role, _ call: (UnsafeMutableRawPointer) -> (DNSServiceErrorType, DNSServiceRef?)
    ) -> Result<UInt64, DNSServiceError> {
        let id = nextRefID
        nextRefID += 1
        let context = Unmanaged.passRetained(DNSServiceCallbackContext(ref: id, inbox: inbox))
        let (error, ref) = call(context.toOpaque())
        let noError = DNSServiceErrorType(kDNSServiceErr_NoError)
        guard error == noError, let ref else {
            context.release()
            let code = error == noError ? DNSServiceErrorType(kDNSServiceErr_Unknown) : error
            return .failure(DNSServiceError(code: code))
        }
        let fd = DNSServiceRefSockFD(ref)
        guard fd >= 0 else {
            DNSServiceRefDeallocate(ref)
            context.release()
            return .failure(DNSServiceError(code: DNSServiceErrorType(kDNSServiceErr_Unknown)))
        }
        refs[id] = LiveRef(ref: ref, fd: fd, role: role, context: context)
        return .success(id)
    }

    /// Frees a ref. Deallocating the register ref withdraws the service (the goodbye).
    private func close(_ id: UInt64) {
        guard let live = refs.removeValue(forKey: id) else { return }
        DNSServiceRefDeallocate(live.ref)
        live.context.release()
        switch live.role {
        case .register: if registerRef == id { registerRef = nil }
        case .browse: if browseRef == id { browseRef = nil }
        case .resolve(let sighting): if resolveRefs[sighting] == id { resolveRefs[sighting] = nil }
        case .query(let sighting, _): if queryRefs[sighting] == id { queryRefs[sighting] = nil }
        }
    }

    /// Frees every ref, the registration first so its goodbye goes out at once.
    private func closeAll() {
        if let registerRef { close(registerRef) }
        for id in refs.keys.sorted() { close(id) }
        inbox.replies = []
    }

    private static func describe(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if attoseconds == 0 { return "\(seconds) s" }
        return "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000) ms"
    }
}
