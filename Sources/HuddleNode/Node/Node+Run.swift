import Foundation
import HuddleCore
public import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

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
    ///
    /// The page is served by `web`, which runs beside the node in the same service group.
    @discardableResult
    public static func run(
        _ configuration: NodeConfiguration, logger: Logger, console: InteractiveConsole? = nil, web: WebService
    ) async throws -> RunOutcome {
        let store = try HuddleStore(directory: configuration.dataDir)
        let identity = try store.loadOrCreateIdentity()
        try store.setNick(configuration.nick)
        let group = MultiThreadedEventLoopGroup.singleton
        let (udp, tcp, endpoint) = try await bind(host: configuration.listenHost, port: configuration.port, on: group)
        let node = try Node(
            configuration: configuration, store: store, identity: identity, logger: logger,
            port: udp.channel.localAddress?.port ?? configuration.port, datagrams: endpoint,
            console: console, web: web, commitDelay: Self.injectedCommitDelay())
        // Whatever the node printed reaches its reader, and whatever it wrote reaches the disk,
        // before the process exits.
        defer {
            node.writer.finish()
            node.sink.flush(timeout: .seconds(5))
        }
        return try await node.serve(udp: udp, tcp: tcp, group: group)
    }

    /// A delay added to every store commit, from `HUDDLE_STORE_COMMIT_DELAY_MS`: a slow disk on
    /// demand, for the benchmark that checks that chat does not wait for the disk
    /// (`Scripts/bench --only machine`). Not for use otherwise.
    static func injectedCommitDelay() -> Duration? {
        guard let text = ProcessInfo.processInfo.environment["HUDDLE_STORE_COMMIT_DELAY_MS"], let ms = Int(text), ms > 0
        else { return nil }
        return .milliseconds(ms)
    }

    /// The `--peer` seeds, each resolved once, here (datagrams go to IPv4 literals only); one
    /// that does not parse or resolve is said and skipped.
    func resolvedSeeds() -> [PeerAddress] {
        var seeds: [PeerAddress] = []
        for seed in configuration.seeds {
            guard let address = PeerAddress(parsing: seed) else {
                showError("ignoring --peer \(seed): expected HOST:PORT")
                continue
            }
            guard let resolved = try? SocketAddress.makeAddressResolvingHost(address.host, port: Int(address.port)),
                case .v4 = resolved, let ip = resolved.ipAddress
            else {
                showError("ignoring --peer \(seed): no IPv4 address for \(address.host)")
                continue
            }
            seeds.append(PeerAddress(host: ip, port: address.port))
        }
        return seeds
    }

    /// The key of the private room `--room` and `--passphrase` name, if they do.
    func configuredKey() async -> RoomKey? {
        guard let room = configuration.room, let passphrase = configuration.passphrase else { return nil }
        do {
            return try await Self.deriveKey(room: room, passphrase: passphrase)
        } catch {
            showError("could not derive the key for \(room): \(error)")
            return nil
        }
    }

    func serve(udp: DatagramSocket, tcp: StreamListener, group: any EventLoopGroup) async throws -> RunOutcome {
        let seeds = resolvedSeeds()
        let key = await configuredKey()
        let control = try await startControl()
        defer { control.close() }
        // So that `huddle status --name NICK` finds this node wherever its data dir is.
        RunningNodes.register(nick: configuration.nick, dataDir: configuration.dataDir)
        defer { RunningNodes.unregister(nick: configuration.nick, dataDir: configuration.dataDir) }
        defer { console?.stop() }
        show(renderer.ready(id: identity.id, nick: configuration.nick, port: port, dataDir: configuration.dataDir))
        let room = configuration.passphrase == nil ? configuration.room : nil
        await feed(.start(room: room, key: key, seeds: seeds))
        let discoveries = startDiscovery()
        defer { discovery?.stop() }
        await startConfiguredListening()
        defer { listening.session?.stop() }
        if configuration.web { startWeb() }
        defer { stopWeb() }
        var outcome = RunOutcome.stopped
        // SIGINT/SIGTERM: peers hear this node left before its sockets close (see sayGoodbye()).
        // The tasks cancelled at the end may throw CancellationError: an outcome found stands.
        do {
            try await withGracefulShutdownHandler {
                try await withThrowingDiscardingTaskGroup { tasks in
                    addServingTasks(to: &tasks, udp: udp, tcp: tcp, group: group, control: control, discoveries: discoveries)
                    outcome = try await runConsole()
                    // /quit, Ctrl-D or the end of input: what waits for a commit is shown and
                    // sent, then the stop on purpose is said to every live peer.
                    await settle()
                    sayGoodbye()
                    tasks.cancelAll()
                }
            } onGracefulShutdown: {
                self.sayGoodbye()
            }
        } catch is CancellationError where outcome != .stopped {}
        // A signal stopped it: what the node decided to show still reaches its reader.
        await settle()
        return outcome
    }

    /// The control socket (`huddle status`, `huddle say`, …), answering from now on.
    func startControl() async throws -> ControlServer {
        let control = ControlServer(logger: logger)
        try await control.start(path: DataDirectory.controlSocketPath(in: configuration.dataDir)) { [weak self] request in
            guard let self else { return .error("the node is shutting down") }
            return await self.handleControl(request)
        }
        return control
    }

    /// The console, until `/quit` or the end of input; piped input that ended (not `/quit`) then
    /// waits for what it wrote to reach a peer. Without a console, until the node is stopped.
    /// How the run ends.
    func runConsole() async throws -> RunOutcome {
        guard configuration.console else {
            while !Task.isCancelled { try await Task.sleep(for: .seconds(3600)) }
            return .stopped
        }
        let interactive = startInteractiveConsole()
        let inputEnded = await consoleLoop(interactive: interactive)
        return inputEnded && !interactive ? await waitForDelivery() : .stopped
    }

    /// The run's long-lived tasks: the two sockets (one closing under the node stops it loudly,
    /// rather than let it run deaf), the timer, pulls, picture fetches, the control socket, and
    /// what mDNS finds.
    func addServingTasks(
        to tasks: inout ThrowingDiscardingTaskGroup<any Error>, udp: DatagramSocket, tcp: StreamListener,
        group: any EventLoopGroup, control: ControlServer, discoveries: AsyncStream<DiscoveryEvent>?
    ) {
        tasks.addTask {
            try await udp.executeThenClose { inbound, _ in
                for try await envelope in inbound { await self.receive(envelope) }
            }
            if !Task.isCancelled { throw NodeError.socketClosed("UDP") }
        }
        let syncServer = SyncServer(
            respond: { await self.syncResponse(to: $0) },
            piece: { [pictures] in pictures.piece($0) },
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
        tasks.addTask { await self.pictureLoop(group: group) }
        tasks.addTask { try await control.run() }
        if let discoveries {
            tasks.addTask {
                for await event in discoveries { await self.discovered(event) }
            }
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
        tellOfTheNetwork()
        let kept = configuration.interface ?? MachineNetwork.keptInterface(in: MachineNetwork.interfaces())
        let discovery = ServiceDiscovery(logger: logger, interface: kept.flatMap(MachineNetwork.index(of:)) ?? 0)
        self.discovery = discovery
        return discovery.start(
            advertising: ServiceAdvertisement(
                id: identity.id, nick: configuration.nick, port: UInt16(port), rooms: machine.membership.rooms))
    }

    func discovered(_ event: DiscoveryEvent) async {
        switch event {
        case .found(let peer):
            let address = PeerAddress(host: peer.host, port: peer.port)
            await feed(
                .discovered(
                    id: peer.id, nick: peer.nick, address: address, rooms: peer.rooms,
                    protocolVersion: peer.protocolVersion))
        case .lost(let id):
            logger.info("peer withdrew its mDNS service", metadata: ["huddle.id": "\(id)"])
        case .unavailable(let why):
            run.mdnsUnavailable = true
            // A wait for delivery that counted on mDNS to find a peer stops counting on it.
            if machine.deliveryWait != nil, configuration.seeds.isEmpty { await feed(.inputEnded(peersFindable: false)) }
            logger.notice("\(why); carrying on with --peer seeds and gossip")
        case .available:
            logger.notice("mDNS discovery is on")
        case .alone(let ownAnnouncementSeen):
            await feed(.nobodyAnnounced(ownAnnouncementSeen: ownAnnouncementSeen))
        }
    }

    // MARK: Sockets

    /// Binds UDP and TCP on the same port. With port 0, UDP picks a free port and TCP takes the
    /// same one; if TCP finds it taken, both retry on another.
    ///
    /// The UDP socket is made here and handed to NIO, which reads from it; the node sends on it
    /// itself (``DatagramSender``), so the third is the node's way out, ready for its ``Node``.
    static func bind(
        host: String, port: Int, on group: any EventLoopGroup
    ) async throws -> (DatagramSocket, StreamListener, DatagramEndpoint) {
        var lastError: (any Error)?
        for _ in 0..<(port == 0 ? 8 : 1) {
            let udp: DatagramSocket
            let sender: DatagramSender
            do {
                let descriptor = try DatagramSender.boundSocket(host: host, port: port)
                do {
                    sender = try DatagramSender(duplicating: descriptor)
                } catch {
                    close(descriptor)
                    throw error
                }
                // Not read from until its reader is in place (wrapped after it is registered:
                // the bootstrap's async `withBoundSocket` failed here with "operation unsupported").
                let channel = try await DatagramBootstrap(group: group)
                    .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 65_536))
                    .channelOption(.autoRead, value: false)
                    .withBoundSocket(descriptor).get()
                udp = try await channel.eventLoop.submit {
                    let socket = try DatagramSocket(wrappingChannelSynchronously: channel)
                    try channel.syncOptions?.setOption(.autoRead, value: true)
                    return socket
                }.get()
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
                return (udp, tcp, DatagramEndpoint(channel: udp.channel, sender: sender))
            } catch {
                lastError = error
                try? await udp.channel.close()
            }
        }
        throw NodeError.cannotListen(host: host, port: port, protocol: "TCP", underlying: "\(lastError.map { "\($0)" } ?? "")")
    }

    /// Hands a datagram's bytes to the machine, which decodes and checks them. A flood from one
    /// address stops here first, at its rate, off the actor (counted as rate_limited).
    nonisolated func receive(_ envelope: AddressedEnvelope<ByteBuffer>) async {
        let source = DatagramEndpoint.source(of: envelope)
        guard datagrams.limits.withLock({ $0.admit(source, now: clock.monotonic()) }) else { return }
        let bytes = Array(envelope.data.readableBytesView)
        guard DeliveryTrace.enabled else { return await take(bytes, from: source) }
        // Tracing (a benchmark) only: the events' ids, from a copy decoded here.
        let received = DeliveryTrace.now()
        let ids: [EventID] =
            if case .message(.events(let events))? = try? Datagram(decoding: bytes) { events.map(\.id) } else { [] }
        DeliveryTrace.mark(.received, ids, at: received)
        DeliveryTrace.mark(.decoded, ids)
        await take(bytes, from: source)
        DeliveryTrace.mark(.taken, ids)
    }

    /// Runs each pull the machine starts (it decides how many at once), each on a connection of
    /// its own, batch after batch as the machine asks (`NodeMachine+Pulls`).
    func pullLoop(group: any EventLoopGroup) async {
        let client = SyncClient(group: group)
        await withDiscardingTaskGroup { pulls in
            for await (pull, first) in self.fetches.pulls.items {
                pulls.addTask { await self.run(pull, first: first, with: client) }
            }
        }
    }

    /// One pull's connection, until the machine ends the pull or the connection ends. Each batch's
    /// signatures are checked here, in the pull's own task, on every core: not on the actor,
    /// which meanwhile shows the batch before.
    nonisolated func run(_ pull: PullRequest, first: SyncRequest, with client: SyncClient) async {
        let pulled = Atomic<Int>(0)
        do {
            try await client.pull(first, host: pull.address.host, port: Int(pull.address.port)) { events, more in
                pulled.add(events.count, ordering: .relaxed)
                var step = await self.pullStep(.pullBatch(pull, events: events, more: more), of: pull)
                while true {
                    switch step {
                    case .check(let events, let more):
                        let valid = await SignatureCheck.valid(events)
                        if valid.count < events.count {
                            self.logger.debug(
                                "dropped input",
                                metadata: [
                                    "huddle.peer": "\(pull.address)",
                                    "huddle.reason": "\(events.count - valid.count) events whose signatures do not verify",
                                ])
                        }
                        step = await self.pullStep(
                            .pullChecked(pull, valid: valid, invalid: events.count - valid.count, more: more), of: pull)
                    case .next(let request): return request
                    case .done: return nil
                    }
                }
            }
        } catch {
            logger.debug("pull failed", metadata: ["huddle.peer": "\(pull.address)", "huddle.error": "\(error)"])
        }
        await pullEnded(pull)
        // A catch-up, not a repair of a few events: what it freed goes back.
        if pulled.load(ordering: .relaxed) >= WireLimits.maxEventsPerBatch { ProcessMemory.giveBackFreed() }
    }

    /// Wakes for hold-back releases, membership ticks and anti-entropy rounds; anything that
    /// becomes due earlier cancels the current sleep (``rescheduleTimer()``).
    func timerLoop() async {
        while !Task.isCancelled {
            let deadline = await runDueWork()
            let delay = max(.zero, deadline - clock.monotonic())
            let sleep = Task {
                do { try await Task.sleep(for: .microseconds(delay.microseconds)) } catch {}
            }
            setSleeper(sleep, until: deadline)
            await withTaskCancellationHandler {
                await sleep.value
            } onCancel: {
                sleep.cancel()
            }
            sleeper.until = .distantFuture
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
