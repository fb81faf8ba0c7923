import Foundation
import HuddleCore
public import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The sockets a node listens on: UDP for pushes, digests and membership; TCP for pulls.
typealias DatagramSocket = NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>
/// The TCP listener hands over plain channels with auto-read off; each is wrapped in an
/// `NIOAsyncChannel` only by the task that serves it. NIO traps when an accepted `NIOAsyncChannel`
/// is dropped unconsumed, which happens to connections accepted just as a node shuts down
/// (apple/swift-nio#2637); a plain channel is harmless to drop.
typealias StreamListener = NIOAsyncChannel<any Channel, Never>

extension Node {
    /// Opens the store, listens, joins the configured room and runs until `/quit`, the end of
    /// stdin (console mode) or cancellation (SIGINT/SIGTERM through the service group).
    ///
    /// With `console`, the console is that interactive one on the terminal: it takes the terminal
    /// once the node is listening and gives it back however the node stops.
    ///
    /// When piped input ends, the node waits (at most ``DeliveryWait/timeout``) until a peer holds
    /// what it wrote; the outcome says whether one does.
    @discardableResult
    public static func run(
        _ configuration: NodeConfiguration, logger: Logger, console: InteractiveConsole? = nil
    ) async throws -> RunOutcome {
        let store = try HuddleStore(directory: configuration.dataDir)
        let identity = try store.loadOrCreateIdentity()
        try store.setNick(configuration.nick)
        let group = MultiThreadedEventLoopGroup.singleton
        let (udp, tcp) = try await bind(host: configuration.listenHost, port: configuration.port, on: group)
        let node = Node(
            configuration: configuration, store: store, identity: identity, logger: logger,
            port: udp.channel.localAddress?.port ?? configuration.port, datagrams: DatagramEndpoint(channel: udp.channel),
            console: console)
        // Whatever the node printed reaches its reader before the process exits.
        defer { node.sink.flush(timeout: .seconds(5)) }
        return try await node.serve(udp: udp, tcp: tcp, group: group)
    }

    func serve(udp: DatagramSocket, tcp: StreamListener, group: any EventLoopGroup) async throws -> RunOutcome {
        for seed in configuration.seeds {
            guard let address = PeerAddress(parsing: seed) else {
                showError("ignoring --peer \(seed): expected HOST:PORT")
                continue
            }
            // Resolved once, here: datagrams go to IPv4 literals only.
            guard let resolved = try? SocketAddress.makeAddressResolvingHost(address.host, port: Int(address.port)),
                case .v4 = resolved, let ip = resolved.ipAddress
            else {
                showError("ignoring --peer \(seed): no IPv4 address for \(address.host)")
                continue
            }
            membership.addSeed(PeerAddress(host: ip, port: address.port))
        }

        let control = ControlServer(logger: logger)
        let socketPath = DataDirectory.controlSocketPath(in: configuration.dataDir)
        try await control.start(path: socketPath) { [weak self] request in
            guard let self else { return .error("the node is shutting down") }
            return await self.handleControl(request)
        }
        defer { control.close() }

        defer { console?.stop() }
        show(renderer.ready(id: identity.id, nick: configuration.nick, port: port, dataDir: configuration.dataDir))
        loadKnownNicks()
        restoreRooms()
        let discoveries = startDiscovery()
        defer { discovery?.stop() }

        var outcome = RunOutcome.stopped
        // SIGINT/SIGTERM: peers hear this node left before its sockets close (see sayGoodbye()).
        // The tasks cancelled at the end may throw CancellationError: an outcome found stands.
        do {
            try await withGracefulShutdownHandler {
                try await withThrowingDiscardingTaskGroup { tasks in
                    tasks.addTask {
                        try await udp.executeThenClose { inbound, _ in
                            for try await envelope in inbound { await self.receive(envelope) }
                        }
                        // The socket closed under us: stop loudly rather than run deaf.
                        if !Task.isCancelled { throw NodeError.socketClosed("UDP") }
                    }
                    let syncServer = SyncServer(
                        respond: { await self.syncResponse(to: $0) },
                        reject: { await self.countDropped($0, $1, from: $2) })
                    tasks.addTask {
                        try await tcp.executeThenClose { connections in
                            try await withThrowingDiscardingTaskGroup { streams in
                                for try await connection in connections {
                                    streams.addTask { await syncServer.serve(connection) }
                                }
                            }
                        }
                        if !Task.isCancelled { throw NodeError.socketClosed("TCP") }
                    }
                    tasks.addTask { await self.timerLoop() }
                    tasks.addTask { await self.pullLoop(group: group) }
                    tasks.addTask { try await control.run() }
                    if let discoveries {
                        tasks.addTask {
                            for await event in discoveries { await self.discovered(event) }
                        }
                    }
                    if configuration.console {
                        let interactive = startInteractiveConsole()
                        let before = ownSeqs()
                        let inputEnded = await consoleLoop(interactive: interactive)
                        // Piped input ended (not /quit): what it wrote should reach a peer before
                        // the node goes.
                        if inputEnded, !interactive { outcome = await waitForDelivery(of: written(since: before)) }
                    } else {
                        while !Task.isCancelled { try await Task.sleep(for: .seconds(3600)) }
                    }
                    // /quit, Ctrl-D or the end of input: a stop on purpose, said to every live peer.
                    sayGoodbye()
                    tasks.cancelAll()
                }
            } onGracefulShutdown: {
                self.sayGoodbye()
            }
        } catch is CancellationError where outcome != .stopped {}
        return outcome
    }

    /// Joined rooms come back from the store; `--room` joins only if not joined already (a join
    /// resets calibration, so a restart must not re-join).
    ///
    /// A private room comes back only with its passphrase (`--passphrase-file`, or `/private`
    /// later): until then it stays locked, unread and unadvertised.
    func restoreRooms() {
        do {
            for room in try store.joinedRooms() {
                if RoomKey.isPrivate(room) {
                    locked.append(room)
                    continue
                }
                loadRoom(room)
                joined.append(room)
            }
            currentRoom = try store.currentRoom.flatMap { joined.contains($0) ? $0 : nil } ?? joined.last
        } catch {
            showError("could not load rooms from the store: \(error)")
        }
        membership.rooms = joined
        if let room = configuration.room {
            if let passphrase = configuration.passphrase {
                do {
                    join(try RoomKey(room: room, passphrase: passphrase))
                } catch {
                    showError("could not derive the key for \(room): \(error)")
                }
            } else if lockedNames().contains(room) {
                // Not the public room of the same name: what is typed there would be public.
                showError(
                    "\(room) is a private room on this node: start with --passphrase-file FILE, or type /private \(room)")
            } else {
                join(room)
            }
        }
        if !locked.isEmpty {
            let names = lockedNames()
            let which = names.count == locked.count ? names.joined(separator: ", ") : "\(locked.count) private rooms"
            showNotice("this run has no passphrase for \(which): /private ROOM opens it")
        }
    }

    /// Takes over the terminal for the interactive console, if there is one; if the terminal
    /// refuses raw mode, says so and goes on line by line. Returns whether it started.
    func startInteractiveConsole() -> Bool {
        guard let console else { return false }
        do {
            refreshConsole()
            try console.start()
            return true
        } catch {
            showError("the interactive console could not start (\(error)); reading stdin line by line")
            return false
        }
    }

    // MARK: Discovery

    /// Advertises this node and browses for others over mDNS, unless `--no-mdns`.
    func startDiscovery() -> AsyncStream<DiscoveryEvent>? {
        guard configuration.mdns else { return nil }
        let discovery = ServiceDiscovery(logger: logger)
        self.discovery = discovery
        return discovery.start(
            advertising: ServiceAdvertisement(id: identity.id, nick: configuration.nick, port: UInt16(port), rooms: joined))
    }

    func discovered(_ event: DiscoveryEvent) {
        switch event {
        case .found(let peer):
            guard peer.id != identity.id else { return }
            let address = PeerAddress(host: peer.host, port: peer.port)
            perform(
                membership.addDiscovered(
                    id: peer.id, nick: peer.nick, address: address, rooms: peer.rooms, now: clock.monotonicMicros()))
        case .lost(let id):
            logger.info("peer withdrew its mDNS service", metadata: ["huddle.id": "\(id)"])
        case .unavailable(let why):
            mdnsUnavailable = true
            logger.notice("\(why); carrying on with --peer seeds and gossip")
        case .available:
            logger.notice("mDNS discovery is on")
        }
    }

    // MARK: Sockets

    /// Binds UDP and TCP on the same port. With port 0, UDP picks a free port and TCP takes the
    /// same one; if TCP finds it taken, both retry on another.
    static func bind(
        host: String, port: Int, on group: any EventLoopGroup
    ) async throws -> (DatagramSocket, StreamListener) {
        var lastError: (any Error)?
        for _ in 0..<(port == 0 ? 8 : 1) {
            let udp: DatagramSocket
            do {
                udp = try await DatagramBootstrap(group: group)
                    .channelOption(.socketOption(.so_reuseaddr), value: 1)
                    .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 65_536))
                    .bind(host: host, port: port) { channel in
                        channel.eventLoop.makeCompletedFuture { try DatagramSocket(wrappingChannelSynchronously: channel) }
                    }
            } catch {
                throw NodeError.cannotListen(host: host, port: port, protocol: "UDP", underlying: "\(error)")
            }
            let chosen = udp.channel.localAddress?.port ?? port
            do {
                let tcp = try await ServerBootstrap(group: group)
                    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                    .childChannelOption(.autoRead, value: false)
                    .bind(host: host, port: chosen) { channel in
                        channel.eventLoop.makeSucceededFuture(channel)
                    }
                return (udp, tcp)
            } catch {
                lastError = error
                try? await udp.channel.close()
            }
        }
        throw NodeError.cannotListen(host: host, port: port, protocol: "TCP", underlying: "\(lastError.map { "\($0)" } ?? "")")
    }

    /// Decodes a datagram off the actor, then hands it in; events are screened on the actor
    /// (``screen(_:from:)``) and only those left are verified, off the actor again.
    nonisolated func receive(_ envelope: AddressedEnvelope<ByteBuffer>) async {
        // A flood from one address stops here, undecoded (counted as rate_limited).
        let source = DatagramEndpoint.source(of: envelope)
        guard datagramLimits.withLock({ $0.admit(source, now: clock.monotonicMicros()) }) else { return }
        // Events from a stranger out of signature checks cost no decoding (counted once per
        // datagram as check_budget).
        if DatagramEndpoint.carriesEvents(envelope),
            !datagramLimits.withLock({ $0.hasChecks(for: source, now: clock.monotonicMicros()) })
        {
            return await countDropped(.checkBudget, "events from a sender out of signature checks", from: "\(source)")
        }
        switch DatagramEndpoint.decode(envelope) {
        case .message(.events(let events), let source):
            let valid = await verify(events, from: "\(source)", budgetOf: source)
            await handle(.events(valid), from: source)
        case .message(let message, let source) where message.isMembership:
            guard message.hasValidMembershipSignature else {
                return await countDropped(.badSignature, "a probe or ack not signed by its sender", from: "\(source)")
            }
            await handle(message, from: source)
        case .message(let message, let source):
            await handle(message, from: source)
        case .dropped(let drop, let reason, let source):
            await countDropped(drop, reason, from: "\(source)")
        }
    }

    /// The events of a datagram or pull batch worth taking: screened, then signature-checked
    /// (a datagram's within its sender's budget of checks, `budgetOf`, see
    /// ``DatagramRateLimits/checks(_:from:now:)``); the rest are counted.
    nonisolated func verify(_ events: [Event], from source: String, budgetOf sender: PeerAddress? = nil) async -> [Event] {
        var screened = await screen(events, from: source)
        if let sender {
            let allowed = datagramLimits.withLock { $0.checks(screened.count, from: sender, now: clock.monotonicMicros()) }
            if allowed < screened.count {
                await countDropped(
                    .checkBudget, "\(screened.count - allowed) events over the sender's budget of signature checks",
                    from: source, count: screened.count - allowed)
                screened.removeSubrange(allowed...)
            }
        }
        let valid = await SignatureCheck.valid(screened)
        if valid.count < screened.count {
            let bad = screened.count - valid.count
            if let sender { datagramLimits.withLock { $0.penalize(bad, from: sender, now: clock.monotonicMicros()) } }
            await countDropped(.badSignature, "\(bad) events whose signatures do not verify", from: source, count: bad)
        }
        return valid
    }

    /// Runs queued pulls one at a time, verifying what arrives before the actor sees it.
    func pullLoop(group: any EventLoopGroup) async {
        let client = SyncClient(group: group)
        let me = identity.id
        for await request in pullRequests {
            var have = vector(of: request.room)
            if let origin = request.recheck { have[origin] = min(have[origin], request.from - 1) }
            let peer = "\(request.host):\(request.port)"
            do {
                try await client.pull(room: request.room, have: have, from: me, host: request.host, port: request.port) {
                    events in
                    let valid = await self.verify(events, from: peer)
                    // A peer that sends back this node's own events holds them.
                    if let seq = valid.filter({ $0.origin == me }).map(\.seq).max() {
                        await self.noteHeld(room: request.room, seq: seq, by: request.peer)
                    }
                    return await self.ingest(valid, room: request.room)
                }
            } catch {
                logger.debug("pull failed", metadata: ["huddle.peer": "\(peer)", "huddle.error": "\(error)"])
            }
            pullFinished(request)
        }
    }

    /// Wakes for hold-back releases, membership ticks and anti-entropy rounds; anything that
    /// becomes due earlier cancels the current sleep (``rescheduleTimer()``).
    func timerLoop() async {
        while !Task.isCancelled {
            let deadline = runDueWork()
            let delay = max(0, deadline - clock.wallMillis())
            let sleep = Task {
                do { try await Task.sleep(for: .milliseconds(delay)) } catch {}
            }
            setSleeper(sleep, until: deadline)
            await withTaskCancellationHandler {
                await sleep.value
            } onCancel: {
                sleep.cancel()
            }
            sleeperDeadline = .max
        }
    }
}

/// Why a node could not start.
public enum NodeError: Error, CustomStringConvertible {
    case cannotListen(host: String, port: Int, protocol: String, underlying: String)
    case socketClosed(String)

    public var description: String {
        switch self {
        case .cannotListen(let host, let port, let proto, let underlying):
            if underlying.contains("Address already in use") || underlying.contains("errno: 98") {
                "port \(port) is already in use (\(proto)): another node or program listens there; choose another "
                    + "with --port N, or leave --port out for a free one"
            } else if underlying.contains("Permission denied") || underlying.contains("errno: 13") {
                "port \(port) needs more rights than this user has (ports below 1024 are the system's); choose "
                    + "one above 1024 with --port N, or leave --port out for a free one"
            } else if underlying.contains("Cannot assign requested address") || underlying.contains("errno: 99") {
                "\(host) is not an address of this machine, so nothing can listen there"
            } else {
                port == 0
                    ? "could not listen on \(host) (\(proto)): \(underlying)"
                    : "could not listen on \(host):\(port) (\(proto)): \(underlying)"
            }
        case .socketClosed(let proto):
            "the \(proto) socket closed unexpectedly; stopping"
        }
    }
}
