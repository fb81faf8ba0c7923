import Foundation
public import Logging
import Synchronization

/// Finds other Huddle nodes on the LAN, and advertises this one, over DNS-SD (mDNS): Avahi's
/// dns_sd compat library on Linux (it needs a running avahi-daemon), Bonjour on macOS.
///
/// ``start(advertising:)`` registers one `_huddle._tcp` service for the node (unless it only
/// browses, as `huddle rooms` does), browses for the others, resolves each one to an address,
/// port and TXT record, and reports them as ``DiscoveryEvent``s, one peer per node id. Its own
/// advertisement is not reported. ``update(rooms:)`` changes the advertised rooms in place;
/// ``stop()`` withdraws the service (peers see it go at once) and ends the stream.
///
/// When no mDNS daemon answers, the stream says so once with ``DiscoveryEvent/unavailable(_:)``
/// (a message that says how to start one) and discovery keeps trying every few seconds; when
/// the daemon comes back, it reports ``DiscoveryEvent/available`` and starts over. The node goes
/// on meanwhile with the peers it was given on the command line.
///
/// All dns_sd work happens on one dedicated thread driving every ref from a single `poll(2)`
/// (see `DiscoveryLoop`), so this type is safe to use from anywhere.
///
/// ```swift
/// let discovery = ServiceDiscovery(logger: logger)
/// let ad = ServiceAdvertisement(id: identity.id, nick: "alice", port: 7700, rooms: ["superbowl"])
/// let events = discovery.start(advertising: ad)      // or nil to browse only
/// discovery.update(rooms: ["superbowl", "nfl"])
/// for await event in events { ... }
/// discovery.stop()
/// ```
public final class ServiceDiscovery: Sendable {
    private enum State {
        case idle
        case running(DiscoveryMailbox, done: DispatchSemaphore)
        /// `stop()` was called; `done` is signalled (once, and passed on by every waiter) when the
        /// thread has finished. `nil` if it never ran.
        case stopped(done: DispatchSemaphore?)
    }

    private let logger: Logger
    private let configuration: DiscoveryConfiguration
    private let state = Mutex(State.idle)

    /// - Parameters:
    ///   - logger: where discovery logs (at info and below; peers and retries at debug).
    ///   - interface: the index of the one interface to announce and browse on (`--interface`,
    ///     ``MachineNetwork/index(of:)``); 0, every interface the mDNS daemon uses.
    public convenience init(logger: Logger, interface: UInt32 = 0) {
        self.init(logger: logger, configuration: DiscoveryConfiguration(interface: interface))
    }

    init(logger: Logger, configuration: DiscoveryConfiguration) {
        self.logger = logger
        self.configuration = configuration
    }

    deinit {
        if case .running(let mailbox, _) = state.withLock({ $0 }) {
            mailbox.post(.stop)
        }
    }

    /// Starts discovery and returns its events; call it once per instance. A second call (or a
    /// call after ``stop()``) returns a stream that is already finished.
    ///
    /// The stream ends after ``stop()``. Ending the iteration early (cancelling the task that
    /// reads it) stops discovery too.
    ///
    /// - Parameter advertisement: the node to advertise; `nil` to browse only.
    public func start(advertising advertisement: ServiceAdvertisement?) -> AsyncStream<DiscoveryEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DiscoveryEvent.self)
        // Avahi's compat library warns on stderr at its first use unless this is set.
        setenv("AVAHI_COMPAT_NOWARN", "1", 0)
        let started: DiscoveryMailbox? = state.withLock { state in
            guard case .idle = state else { return nil }
            guard let mailbox = DiscoveryMailbox() else {
                state = .stopped(done: nil)
                return nil
            }
            let done = DispatchSemaphore(value: 0)
            state = .running(mailbox, done: done)
            let loop = Loop(
                mailbox: mailbox, continuation: continuation, advertisement: advertisement,
                configuration: configuration, logger: logger)
            let thread = Thread {
                loop.make().run()
                done.signal()
            }
            thread.name = "huddle-discovery"
            thread.start()
            return mailbox
        }
        guard let mailbox = started else {
            logger.debug("discovery already started or stopped")
            continuation.finish()
            return stream
        }
        continuation.onTermination = { _ in mailbox.post(.stop) }
        return stream
    }

    /// Advertises `rooms` from now on (joining or leaving a room): the TXT record is updated in
    /// place, and peers browsing see the change within about a second. Does nothing when only
    /// browsing or not running.
    public func update(rooms: [String]) {
        guard case .running(let mailbox, _) = state.withLock({ $0 }) else { return }
        mailbox.post(.updateRooms(rooms))
    }

    /// Withdraws the node's service (the daemon sends the goodbye), frees everything, ends the
    /// event stream and the thread, and returns once that is done (a few milliseconds).
    /// Idempotent.
    public func stop() {
        let done: DispatchSemaphore? = state.withLock { state in
            switch state {
            case .idle:
                state = .stopped(done: nil)
                return nil
            case .running(let mailbox, let done):
                state = .stopped(done: done)
                mailbox.post(.stop)
                return done
            case .stopped(let done):
                return done
            }
        }
        guard let done else { return }
        done.wait()
        done.signal()  // for the next caller
    }

    /// What the thread needs to build its `DiscoveryLoop`, which is not `Sendable` and so is made
    /// on the thread itself.
    private struct Loop: Sendable {
        let mailbox: DiscoveryMailbox
        let continuation: AsyncStream<DiscoveryEvent>.Continuation
        let advertisement: ServiceAdvertisement?
        let configuration: DiscoveryConfiguration
        let logger: Logger

        func make() -> DiscoveryLoop {
            DiscoveryLoop(
                mailbox: mailbox, continuation: continuation, advertisement: advertisement,
                configuration: configuration, logger: logger)
        }
    }
}
