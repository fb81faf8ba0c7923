import Foundation
public import HuddleAudio
public import HuddleCore
import Synchronization

/// Matches this node's own sound against each peer's on a thread of its own, whenever the peer
/// sent 3 s of sound or more since the last try: every 5 s of own sound until a pair is aligned,
/// over the last 120 s of each side centred on the two clocks' difference (±120 s); then every
/// 10 s, over the last 20 s both heard, ±5 s around the last lag (so a rebuffer outweighs the
/// sound before it), and the peer's same recent sound against the last 120 s of own when that
/// does not align. Once a pair is placed a peer sends only brief re-checks (``SoundSharing``):
/// each is matched on its own, never summed with the older ones. Aligned matches come out of
/// ``matches`` as `HeardMatch`es for the node to publish (through ``HeardPublishing``).
///
/// ```swift
/// let runner = MatchRunner()
/// runner.addOwn(features)                                            // from the Listener
/// runner.addPeer(bob, window, sentAt: window.sentAt, receivedAt: now)  // a verified window
/// for await match in runner.matches { publish(match) }
/// ```
public final class MatchRunner: Sendable {
    /// How often, in seconds of own sound, a pair is matched before and after its first aligned match.
    public struct Cadence: Sendable, Equatable {
        public var untilAligned: Double = 5
        public var afterAligned: Double = 10
        /// Seconds of each side compared in a full search.
        public var window: Double = 120
        /// Seconds of sound both heard that a re-check around the last lag compares: the recent
        /// sound only, so that a step (a rebuffer) outweighs what came before it within
        /// ``afterAligned`` + this / 2.
        public var recheck: Double = 20
        /// Seconds of a peer's sound kept.
        public var kept: Int = 150
        public init() {}
    }

    /// One attempt, for status lines and tests: the pair, and what the matcher said.
    public struct Attempt: Sendable, Equatable {
        public var peer: NodeID
        public var result: PairMatch
    }

    public let matches: AsyncStream<Attempt>
    private let continuation: AsyncStream<Attempt>.Continuation
    private let cadence: Cadence
    private let clock: any ListeningClock
    private let state: Mutex<State>

    struct Pair {
        var timeline: FeatureTimeline
        /// (own clock ms when noted, receivedAt − sentAt in ms), the last minute's.
        var clockDifferences: [(at: Int64, difference: Int64)] = []
        /// Own sound's end (ms) at the last attempt.
        var lastAttempt: Int64?
        /// Frames of the peer's that came since the last attempt: the next waits for 3 s of them
        /// (a re-check of 4 s comes in two windows, and is matched once both are in).
        var newFrames = 0
        /// The last aligned lag, ms of the node clocks.
        var lastLag: Int64?
    }

    struct State {
        var own: FeatureTimeline
        var pairs: [NodeID: Pair] = [:]
        var stopped = false
    }

    public init(cadence: Cadence = Cadence(), clock: any ListeningClock = SystemListeningClock()) {
        self.cadence = cadence
        self.clock = clock
        state = Mutex(State(own: FeatureTimeline(seconds: cadence.kept)))
        (matches, continuation) = AsyncStream.makeStream(of: Attempt.self, bufferingPolicy: .bufferingNewest(64))
        let thread = Thread { [self] in loop() }
        thread.name = "huddle-matcher"
        thread.start()
    }

    /// This node's next window of sound.
    public func addOwn(_ features: AudioFeatures) {
        state.withLock { $0.own.add(features) }
    }

    /// A peer's window, verified (and opened) by the node: `sentAt` on the peer's clock,
    /// `receivedAt` on this node's, both ms.
    public func addPeer(_ peer: NodeID, _ features: AudioFeatures, sentAt: Int64, receivedAt: Int64) {
        state.withLock { state in
            var pair = state.pairs[peer] ?? Pair(timeline: FeatureTimeline(seconds: cadence.kept))
            pair.timeline.add(features)
            pair.newFrames += features.count
            pair.clockDifferences.append((receivedAt, receivedAt &- sentAt))
            pair.clockDifferences.removeAll { $0.at < receivedAt - 60_000 }
            state.pairs[peer] = pair
        }
    }

    /// Forgets a peer (it left, or its join reset it).
    public func forget(_ peer: NodeID) {
        _ = state.withLock { $0.pairs.removeValue(forKey: peer) }
    }

    /// Stops the thread; ``matches`` ends.
    public func stop() {
        state.withLock { $0.stopped = true }
    }

    /// The pairs due a match now, with what to match: at most one a call, the longest waiting.
    func nextDue() -> (peer: NodeID, own: AudioFeatures, theirs: AudioFeatures, centre: Int64, narrow: Bool)? {
        state.withLock { state in
            let ownEnd = state.own.end
            var due: (NodeID, Int64)?
            let enough = 3 * AudioFeatures.framesPerSecond
            for (peer, pair) in state.pairs where pair.timeline.count >= enough && pair.newFrames >= enough {
                let every = Int64((pair.lastLag == nil ? cadence.untilAligned : cadence.afterAligned) * 1000)
                let since = pair.lastAttempt.map { ownEnd - $0 } ?? .max
                guard state.own.count >= 3 * AudioFeatures.framesPerSecond, since >= every else { continue }
                if due.map({ since > $0.1 || (since == $0.1 && peer < $0.0) }) ?? true { due = (peer, since) }
            }
            guard let (peer, _) = due, let pair = state.pairs[peer] else { return nil }
            state.pairs[peer]?.lastAttempt = ownEnd
            state.pairs[peer]?.newFrames = 0
            let difference = pair.clockDifferences.map(\.difference).min() ?? 0
            guard let lastLag = pair.lastLag else {
                return (peer, state.own.last(seconds: cadence.window), pair.timeline.last(seconds: cadence.window),
                        difference, false)
            }
            // A re-check compares the last `recheck` seconds both heard: each side's latest sound
            // reaches that far back, plus how far apart the streams are (the lag without the
            // clocks' difference) and a window's delay on the wire.
            let apart = Double(abs(lastLag - difference)) / 1000
            let span = min(cadence.window, cadence.recheck + apart + 2)
            return (peer, state.own.last(seconds: span), pair.timeline.last(seconds: span), lastLag, true)
        }
    }

    private func loop() {
        while !state.withLock({ $0.stopped }) {
            guard let work = nextDue() else {
                clock.sleep(until: clock.wall() + .milliseconds(250))
                continue
            }
            var result = PairMatch.run(
                own: work.own, peer: work.theirs, peerID: work.peer, centre: work.centre, reach: work.narrow ? 5 : 120)
            if work.narrow, result.heard == nil {
                // Not there any more: the peer's same recent sound, searched in full. (Not its
                // older sound: from before a rebuffer, it would pull toward the old lag.)
                let (difference, own) = state.withLock { state in
                    (state.pairs[work.peer]?.clockDifferences.map(\.difference).min() ?? 0,
                     state.own.last(seconds: cadence.window))
                }
                result = PairMatch.run(own: own, peer: work.theirs, peerID: work.peer, centre: difference, reach: 120)
            }
            if let heard = result.heard {
                // The matcher's lags are whole ms (toward zero).
                state.withLock { $0.pairs[work.peer]?.lastLag = heard.lag.microseconds / 1000 }
            }
            continuation.yield(Attempt(peer: work.peer, result: result))
        }
        continuation.finish()
    }
}
