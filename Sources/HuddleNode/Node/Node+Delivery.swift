import Foundation
import HuddleCore

/// How a node's run ended, for its exit code.
public enum RunOutcome: Sendable, Equatable {
    /// Stopped with nothing left behind: nothing was written, or a peer holds it.
    case stopped
    /// Piped input ended and no peer was known to hold what this node wrote: it is stored in the
    /// data dir and goes out when a node runs there again.
    case notYetSent

    /// The exit code of `huddle run` when what was written is stored and not yet sent.
    public static let notYetSentExitCode: Int32 = 3
}

extension Node {
    /// This node's latest seq in each joined room.
    func ownSeqs() -> [String: UInt64] {
        var seqs: [String: UInt64] = [:]
        for (room, session) in rooms { seqs[room] = session.log.vector[identity.id] }
        return seqs
    }

    /// The rooms this node wrote in since `before` (``ownSeqs()`` then), with its latest seq.
    func written(since before: [String: UInt64]) -> [String: UInt64] {
        ownSeqs().filter { $0.value > (before[$0.key] ?? 0) }
    }

    /// `peer` is known to hold this node's events of `room` up to `seq`.
    func noteHeld(room: String, seq: UInt64, by peer: NodeID) {
        guard seq > 0, deliveryWait != nil else { return }
        deliveryWait?.heard(room: room, seq: seq, from: membership.peers[peer]?.nick ?? "\(peer)")
    }

    /// Waits, at most ``DeliveryWait/timeout``, until a peer holds this node's latest event in
    /// each room of `written`, asking live peers for it meanwhile; says what happened (stderr,
    /// or a `delivery` line with `--json`).
    func waitForDelivery(of written: [String: UInt64]) async -> RunOutcome {
        guard !written.isEmpty else { return .stopped }
        deliveryWait = DeliveryWait(written: written, now: clock.wallMillis())
        defer { deliveryWait = nil }
        let seconds = DeliveryWait.timeout / 1000
        tell(
            renderer.delivery(state: "waiting", fields: [("timeout_ms", .int(DeliveryWait.timeout))]),
            "waiting up to \(seconds) s for a peer to receive what you wrote…")
        while true {
            let live = Dictionary(uniqueKeysWithValues: written.keys.map { ($0, roomPeers($0)) })
            let possible = !configuration.seeds.isEmpty || (configuration.mdns && !mdnsUnavailable)
                || !membership.peers.isEmpty
            guard var wait = deliveryWait else { return .stopped }
            let step = wait.poll(now: clock.wallMillis(), livePeers: live, peersPossible: possible)
            deliveryWait = wait
            switch step {
            case .delivered(let nicks):
                let who = nicks.isEmpty ? "a peer" : nicks.map(TerminalText.escaped).joined(separator: ", ")
                tell(
                    renderer.delivery(state: "delivered", fields: [("to", .array(nicks.map { .string($0) }))]),
                    "\(who) received what you wrote; goodbye")
                return .stopped
            case .giveUp(let reason):
                let why =
                    switch reason {
                    case .timedOut: "no peer received it within \(seconds) s"
                    case .noPeers:
                        "no peer is known and none can be found (no --peer, and mDNS is "
                            + (configuration.mdns ? "not available here)" : "off)")
                    }
                tell(
                    renderer.delivery(
                        state: "not_sent",
                        fields: [("reason", .string(why)), ("exit_code", .int(Int64(RunOutcome.notYetSentExitCode)))]),
                    "not sent yet: \(why). What you wrote is stored in \(configuration.dataDir) and goes out "
                        + "when a node runs there again (exit code \(RunOutcome.notYetSentExitCode))")
                return .notYetSent
            case .ask(let asks):
                for ask in asks {
                    pullRequestSink.yield(PullRequest(
                        room: ask.room, peer: ask.peer.id, host: ask.peer.syncAddress.host,
                        port: Int(ask.peer.syncAddress.port), recheck: identity.id, from: ask.seq, confirm: true))
                }
            case .wait:
                break
            }
            do {
                try await Task.sleep(for: .milliseconds(50))
            } catch {
                // SIGTERM while waiting: say where things stand, once, on the next poll.
                deliveryWait = DeliveryWait(written: written, now: clock.wallMillis() - DeliveryWait.timeout)
            }
        }
    }

    /// A line about the wait: the JSON line on stdout with `--json`, else words on stderr, so
    /// stdout keeps only the conversation.
    private func tell(_ json: String, _ words: String) {
        if renderer.json {
            show(json)
        } else {
            FileHandle.standardError.write(Data("huddle: \(words)\n".utf8))
        }
    }
}
