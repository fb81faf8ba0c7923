public import Foundation
public import HuddleCore

/// Durations, clock times and offsets in the words a person reads.
///
/// ```swift
/// HumanFormat.duration(.milliseconds(350))    // "350 ms"
/// HumanFormat.duration(.seconds(2))           // "2.0 s"
/// HumanFormat.duration(.seconds(95))          // "1 min 35 s"
/// HumanFormat.lag(.seconds(2))                // "2.0 s behind you"
/// HumanFormat.sureness(confidence: 42)        // "sure"
/// HumanFormat.elapsed(.milliseconds(42_300))  // "0:42"
/// ```
public enum HumanFormat {
    /// A span in whole seconds, as a setting is given: "90 s".
    public static func seconds(_ span: TimeSpan) -> String {
        "\(span.milliseconds / 1000) s"
    }

    /// A length of time: milliseconds under a second, seconds to a tenth under a minute, then
    /// minutes and seconds, then hours and minutes; whole ms, rounded toward zero. The sign is
    /// dropped.
    public static func duration(_ span: TimeSpan) -> String {
        let ms = span.magnitude.milliseconds
        if ms < 1000 { return "\(ms) ms" }
        let tenths = (ms + 50) / 100
        if tenths < 600 { return "\(tenths / 10).\(tenths % 10) s" }
        let seconds = (ms + 500) / 1000
        if seconds < 3600 {
            let rest = seconds % 60
            return rest == 0 ? "\(seconds / 60) min" : "\(seconds / 60) min \(rest) s"
        }
        let minutes = seconds / 60
        let rest = minutes % 60
        return rest == 0 ? "\(minutes / 60) h" : "\(minutes / 60) h \(rest) min"
    }

    /// How far a stream is from the reader's: `lag` behind it (negative: ahead of it).
    public static func lag(_ lag: TimeSpan) -> String {
        if lag > .zero { return "\(duration(lag)) behind you" }
        if lag < .zero { return "\(duration(lag)) ahead of you" }
        return "in step with you"
    }

    /// How sure an offset heard in the sound is, in a word a viewer can act on; the number itself
    /// (a matcher's standard score, from 9 for a match that counts) stays in `--json` and
    /// `huddle status`. Its error is about 900 ms / confidence (``HeardMatch/sigma``): "sure" is
    /// within about 30 ms, under what a viewer notices; "fairly sure" within 60 ms; below that
    /// "roughly".
    public static func sureness(confidence: Double) -> String {
        if confidence >= 30 { return "sure" }
        if confidence >= 15 { return "fairly sure" }
        return "roughly"
    }

    /// An elapsed time as a stopwatch shows it: `0:42`, `12:05`, `1:02:09` (sign dropped).
    public static func elapsed(_ span: TimeSpan) -> String {
        let seconds = span.magnitude.milliseconds / 1000
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        if seconds < 3600 { return "\(seconds / 60):\(two(seconds % 60))" }
        return "\(seconds / 3600):\(two(seconds / 60 % 60)):\(two(seconds % 60))"
    }

    /// `HH:MM:SS` of `moment`, in the local time zone.
    public static func clock(_ moment: WallTime) -> String {
        clock(moment, timeZone: .current)
    }

    /// `HH:MM:SS` of `moment`, in `timeZone`.
    public static func clock(_ moment: WallTime, timeZone: TimeZone) -> String {
        // Floor division, without overflow for any moment (times come from other nodes).
        let seconds = moment.microsecondsSinceEpoch.flooredDivision(by: 1_000_000)
        let offset = Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(seconds))))
        let local = ((seconds % 86_400) + (offset % 86_400) + 2 * 86_400) % 86_400
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(two(local / 3600)):\(two(local / 60 % 60)):\(two(local % 60))"
    }

    /// The standing score of a room, as ``score(home:guest:homeName:guestName:)`` says it.
    public static func score(_ board: Scoreboard) -> String {
        score(home: board.home, guest: board.guest, homeName: board.teams?.home, guestName: board.teams?.guest)
    }

    /// `14–7`, or `Chiefs 14–7 Eagles` once the sides are named.
    public static func score(home: UInt16, guest: UInt16, homeName: String?, guestName: String?) -> String {
        guard let homeName, let guestName else { return "\(home)–\(guest)" }
        return "\(homeName) \(home)–\(guest) \(guestName)"
    }
}
