public import Foundation

/// Durations, clock times and offsets in the words a person reads.
///
/// ```swift
/// HumanFormat.duration(milliseconds: 350)      // "350 ms"
/// HumanFormat.duration(milliseconds: 2_000)    // "2.0 s"
/// HumanFormat.duration(milliseconds: 95_000)   // "1 min 35 s"
/// HumanFormat.lag(2_000)                       // "2.0 s behind you"
/// HumanFormat.elapsed(milliseconds: 42_300)    // "0:42"
/// ```
public enum HumanFormat {
    /// A length of time: milliseconds under a second, seconds to a tenth under a minute, then
    /// minutes and seconds, then hours and minutes. The sign is dropped.
    public static func duration(milliseconds: Int64) -> String {
        let ms = milliseconds.magnitude
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

    /// How far a stream is from the reader's: `lag` ms behind it (negative: ahead of it).
    public static func lag(_ lag: Int64) -> String {
        if lag > 0 { return "\(duration(milliseconds: lag)) behind you" }
        if lag < 0 { return "\(duration(milliseconds: lag)) ahead of you" }
        return "in step with you"
    }

    /// An elapsed time as a stopwatch shows it: `0:42`, `12:05`, `1:02:09` (sign dropped).
    public static func elapsed(milliseconds: Int64) -> String {
        let seconds = milliseconds.magnitude / 1000
        func two(_ n: UInt64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        if seconds < 3600 { return "\(seconds / 60):\(two(seconds % 60))" }
        return "\(seconds / 3600):\(two(seconds / 60 % 60)):\(two(seconds % 60))"
    }

    /// `HH:MM:SS` of `milliseconds` since the Unix epoch, in the local time zone.
    public static func clock(_ milliseconds: Int64) -> String {
        clock(milliseconds, timeZone: .current)
    }

    /// `HH:MM:SS` of `milliseconds` since the Unix epoch, in `timeZone`.
    public static func clock(_ milliseconds: Int64, timeZone: TimeZone) -> String {
        // Floor division, without overflow for any Int64 (times come from other nodes).
        let seconds = milliseconds / 1000 - (milliseconds % 1000 < 0 ? 1 : 0)
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
