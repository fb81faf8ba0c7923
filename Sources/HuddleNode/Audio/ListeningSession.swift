public import HuddleAudio
public import HuddleCore

/// Everything a node needs to listen, in one place: a ``Listener`` on the source, a
/// ``MatchRunner`` fed with its windows and with the peers' verified windows, and one stream of
/// what the node must act on. The node machine takes these events as inputs and does the rest
/// (send windows, publish matches through ``HeardPublishing``, say it listens).
///
/// ```swift
/// let session = ListeningSession(source: try PulseAudioSource())
/// for await event in session.events {
///     switch event {
///     case .started(let kind, let at): say(#"{"type":"listening","source":"\#(kind)","started_at":\#(at)}"#)
///     case .window(let features): machine.heardOwnSound(features)  // SoundSharing says to whom
///     case .matched(let attempt): if let heard = attempt.result.heard { maybePublish(heard) }
///     case .stopped(let reason): say(reason ?? "the file played to its end")
///     }
/// }
/// session.received(window, receivedAt: now)   // a peer's verified, opened SoundWindow
/// ```
public final class ListeningSession: Sendable {
    public enum Event: Sendable, Equatable {
        /// Listening began; `at` is when, on the node's wall clock, the first sample counts as heard.
        case started(source: AudioSourceKind, at: WallTime)
        /// The next 2 s of own sound: the machine seals it for the peers ``SoundSharing`` names.
        case window(AudioFeatures)
        /// A match of own sound against a peer's was tried; aligned ones carry a `HeardMatch`.
        case matched(MatchRunner.Attempt)
        /// Listening ended: `nil` when the source ran out, else the one line saying why.
        case stopped(reason: String?)
    }

    public let events: AsyncStream<Event>
    public let listener: Listener
    public let runner: MatchRunner

    public init(source: any AudioSource, cadence: MatchRunner.Cadence = MatchRunner.Cadence(),
                clock: any ListeningClock = SystemListeningClock()) {
        let listener = Listener(source: source)
        let runner = MatchRunner(cadence: cadence, clock: clock)
        self.listener = listener
        self.runner = runner
        let (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(256))
        self.events = events
        let own = Task {
            for await output in listener.outputs {
                switch output {
                case .started(let kind, let at): continuation.yield(.started(source: kind, at: at))
                case .window(let features):
                    runner.addOwn(features)
                    continuation.yield(.window(features))
                case .stopped(let reason): continuation.yield(.stopped(reason: reason))
                }
            }
        }
        let matches = Task {
            for await attempt in runner.matches { continuation.yield(.matched(attempt)) }
        }
        continuation.onTermination = { _ in
            listener.stop()
            runner.stop()
            own.cancel()
            matches.cancel()
        }
    }

    /// A peer's window, its signature verified and opened with the pair's key by the node.
    public func received(_ window: SoundWindow, receivedAt: WallTime) {
        guard window.isOpen else { return }
        // The matcher works in ms of the wall clock, as sound windows carry them.
        runner.addPeer(
            window.from,
            AudioFeatures(start: window.start.millisecondsSinceEpoch, bits: window.bits, loud: window.loud),
            sentAt: window.sentAt.millisecondsSinceEpoch, receivedAt: receivedAt.millisecondsSinceEpoch)
    }

    /// Stops listening and matching.
    public func stop() {
        listener.stop()
        runner.stop()
    }
}
