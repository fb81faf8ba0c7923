/// The moments anyone can name before they happen: kickoff, the anthem, the start of a half or a
/// quarter, the end of a break, the game clock crossing a reading ("10:00", "q2 5:00"). Their names
/// tell nothing about the play, so a proposal of one may reach a reader who is not placed yet at
/// once; any other name ("safety", "a goal") is the play itself, and waits like a line
/// (``RoomSession``).
///
/// Labels are matched after ``CalibrationLabel`` normalises them, with hyphens and runs of spaces
/// read as one space and a leading "the" or "start of (the)" left out:
///
/// ```swift
/// SpoilerFreeMoment.contains(CalibrationLabel("Kick-off")!)              // true
/// SpoilerFreeMoment.contains(CalibrationLabel("start of the 2nd half")!)  // true
/// SpoilerFreeMoment.contains(CalibrationLabel("q3 12:00")!)               // true: the clock passes it
/// SpoilerFreeMoment.contains(CalibrationLabel("safety")!)                 // false
/// SpoilerFreeMoment.contains(CalibrationLabel("overtime")!)               // false: it says the score is tied
/// ```
public enum SpoilerFreeMoment {
    /// What the console and the page suggest marking, in the order a game shows them.
    public static let suggested = ["kickoff", "anthem", "2nd half", "end of break"]

    /// In words, for a sentence: what kinds of moment are spoiler-free.
    public static let inWords =
        "kickoff, the anthem, the start of a half or quarter, the end of a break, the game clock at 10:00"

    /// Whether `label` names a moment any schedule predicts.
    public static func contains(_ label: CalibrationLabel) -> Bool {
        var words = label.normalized.split(whereSeparator: { $0.isWhitespace || $0 == "-" }).map(String.init)
        if words.first == "the" { words.removeFirst() }
        if words.starts(with: ["start", "of"]) {
            words.removeFirst(2)
            if words.first == "the" { words.removeFirst() }
        }
        // The game clock crossing a reading, alone or after or before its period: "10:00",
        // "q3 12:00", "12:00 2nd half".
        if let clock = words.firstIndex(where: isClockReading) {
            var period = words
            period.remove(at: clock)
            if period.isEmpty || contains(CalibrationLabel(period.joined(separator: " "))!) { return true }
        }
        let phrase = words.joined(separator: " ")
        if starts.contains(phrase) || breaks.contains(phrase) { return true }
        // "2nd half", "third quarter", "q3", "7th inning", "first period".
        if words.count == 1, let only = words.first, only.count == 2, only.first == "q", let n = Int(only.dropFirst()) {
            return (1...4).contains(n)
        }
        return words.count == 2 && ordinals.contains(words[0]) && parts.contains(words[1])
    }

    /// "10:00", "2:30", "45:00": minutes and seconds as a game clock shows them.
    private static func isClockReading(_ word: String) -> Bool {
        let parts = word.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let minutes = Int(parts[0]), let seconds = Int(parts[1]) else { return false }
        return (1...2).contains(parts[0].count) && parts[1].count == 2 && (0...99).contains(minutes) && seconds < 60
    }

    /// Where a game starts, by sport.
    private static let starts: Set<String> = [
        "kickoff", "kick off", "tipoff", "tip off", "first pitch", "puck drop", "faceoff", "face off", "opening faceoff",
        "opening kickoff", "anthem", "national anthem", "coin toss", "coin flip", "start", "game start", "halftime",
        "half time", "end of first half", "end of 1st half", "end of the first half", "end of the 1st half",
        "second half kickoff", "2nd half kickoff", "seventh inning stretch", "7th inning stretch",
    ]

    /// The end of a break for advertising, or of the half-time show.
    private static let breaks: Set<String> = [
        "end of break", "end of the break", "break over", "back from break", "back from the break",
        "end of commercial", "end of commercials", "end of the commercials", "end of ad break", "end of ads",
        "back from commercial", "back from commercials", "commercial over", "commercials over", "ads over",
        "end of halftime", "end of half time", "end of halftime show",
    ]

    private static let ordinals: Set<String> = [
        "1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th", "9th", "first", "second", "third", "fourth", "fifth",
        "sixth", "seventh", "eighth", "ninth",
    ]

    private static let parts: Set<String> = ["half", "quarter", "period", "inning", "innings", "set", "frame"]
}
