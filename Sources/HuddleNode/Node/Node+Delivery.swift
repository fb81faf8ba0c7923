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
    /// Waits, at most ``DeliveryWait/timeout``, until a peer holds this node's latest event in
    /// each room of `written`, asking live peers for it meanwhile; says what happened (stderr,
    /// or a `delivery` line with `--json`).
    func waitForDelivery(of written: [String: UInt64]) async -> RunOutcome {
        guard !written.isEmpty else { return .stopped }
        await step { machine, now in machine.startDeliveryWait(written, now: now) }
        let seconds = Int(DeliveryWait.timeout.seconds)
        tell(
            renderer.delivery(state: "waiting", fields: [("timeout_ms", .int(DeliveryWait.timeout.milliseconds))]),
            "waiting up to \(seconds) s for a peer to receive what you wrote…")
        while true {
            let possible = !configuration.seeds.isEmpty || (configuration.mdns && !mdnsUnavailable)
            guard let next = await step({ machine, now in machine.pollDelivery(now: now, peersPossible: possible) }) else {
                return .stopped
            }
            switch next {
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
            case .ask, .wait:
                break
            }
            do {
                try await Task.sleep(for: .milliseconds(50))
            } catch {
                // SIGTERM while waiting: say where things stand, once, on the next poll.
                await self.step { machine, now in machine.startDeliveryWait(written, now: now, timeout: .zero) }
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
