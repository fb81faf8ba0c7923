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
    /// Piped input ended: waits until the machine says a peer holds what this node wrote, or that
    /// it gave up (at most ``DeliveryWait/timeout``; ``NodeEffect/delivery(_:)``, told by
    /// ``tellDelivery(_:)``). A signal meanwhile ends the wait at once, not sent.
    func waitForDelivery() async -> RunOutcome {
        let peersFindable = !configuration.seeds.isEmpty || (configuration.mdns && !run.mdnsUnavailable)
        await feed(.inputEnded(peersFindable: peersFindable))
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if run.deliveryEnded == nil { run.deliveryWaiter = continuation } else { continuation.resume() }
            }
        } onCancel: {
            Task { await self.feed(.stopping) }
        }
        return run.deliveryEnded ?? .stopped
    }

    /// Tells the reader where the wait for delivery stands (the JSON line on stdout with
    /// `--json`, else words on stderr, so stdout keeps only the conversation); once it ended,
    /// the run waiting for it goes on.
    func tellDelivery(_ report: DeliveryWait.Report) {
        let seconds = Int(DeliveryWait.timeout.seconds)
        switch report {
        case .waiting(let timeout):
            tell(
                JSONRenderer.delivery(state: "waiting", fields: [("timeout_ms", .int(timeout.milliseconds))]),
                "waiting up to \(Int(timeout.seconds)) s for a peer to receive what you wrote…")
        case .nothingWritten:
            break
        case .delivered(let nicks):
            let who = nicks.isEmpty ? "a peer" : nicks.map(TerminalText.escaped).joined(separator: ", ")
            tell(
                JSONRenderer.delivery(state: "delivered", fields: [("to", .array(nicks.map { .string($0) }))]),
                "\(who) received what you wrote; goodbye")
        case .notSent(let reason):
            let why =
                switch reason {
                case .timedOut: "no peer received it within \(seconds) s"
                case .noPeers:
                    "no peer is known and none can be found (no --peer, and mDNS is "
                        + (configuration.mdns ? "not available here)" : "off)")
                case .stopped: "the node was stopped before a peer received it"
                }
            tell(
                JSONRenderer.delivery(
                    state: "not_sent",
                    fields: [("reason", .string(why)), ("exit_code", .int(Int64(RunOutcome.notYetSentExitCode)))]),
                "not sent yet: \(why). What you wrote is stored in \(configuration.dataDir) and goes out "
                    + "when a node runs there again (exit code \(RunOutcome.notYetSentExitCode))")
        }
        guard report.isEnd else { return }
        run.deliveryEnded = if case .notSent = report { .notYetSent } else { .stopped }
        run.deliveryWaiter?.resume()
        run.deliveryWaiter = nil
    }

    private func tell(_ json: String, _ words: String) {
        if renderer.isJSON {
            show(json)
        } else {
            FileHandle.standardError.write(Data("huddle: \(words)\n".utf8))
        }
    }
}
