import Foundation
import HuddleCore

/// When one message passed each step of its way from the writer's machine to the reader's,
/// written to stderr as `huddle-trace STAGE ORIGIN:SEQ µs` (wall clock) when the environment has
/// `HUDDLE_TRACE_DELIVERY`: what `Scripts/bench --only machine` reads to say where the time of
/// send -> shown goes. Unset (always, outside that bench), each mark is one branch.
///
/// The writer marks ``Stage/made`` (its machine signed the event), ``Stage/stored`` (its
/// commit returned) and ``Stage/sent`` (the push was handed to the socket); the reader
/// ``Stage/received`` (the datagram reached the node), ``Stage/decoded`` (past the rate limit,
/// about to hop onto the actor, where its machine decodes it; the ids come from a copy decoded for
/// the trace) and ``Stage/taken`` (its machine took the event, the instant `shown_at` is read from).
enum DeliveryTrace {
    static let enabled = ProcessInfo.processInfo.environment["HUDDLE_TRACE_DELIVERY"] != nil

    enum Stage: String {
        case made, stored, sent, received, decoded, taken
    }

    /// The wall clock in µs, or 0 when tracing is off (so a caller can take it unconditionally).
    static func now() -> Int64 {
        enabled ? SystemClock.preciseWall().microsecondsSinceEpoch : 0
    }

    /// One line per event, all at `at` (now by default).
    static func mark(_ stage: Stage, _ ids: some Sequence<EventID>, at: Int64? = nil) {
        guard enabled else { return }
        let at = at ?? now()
        var text = ""
        for id in ids { text += "huddle-trace \(stage.rawValue) \(id.origin.hex.prefix(16)):\(id.seq) \(at)\n" }
        guard !text.isEmpty else { return }
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// This node's own events among `writes` (none when tracing is off: nothing to mark).
    static func own(_ writes: [StoreWrite]) -> [EventID] {
        guard enabled else { return [] }
        return writes.flatMap { write -> [EventID] in
            if case .events(let events, own: true) = write { events.map(\.id) } else { [] }
        }
    }
}
