/// Tab completion for a console line: command names, then each command's argument (room names for
/// `/join`, labels for `/now`, `/unmark`, `/ignore` and `/event`), and nicks wherever else a word
/// is typed: in a chat line, after `/msg` (its target and its text), after `/who`.
///
/// Pure: give it the text before the cursor and what the node knows; it says what to put in place
/// of the word being typed and, when the choice is not unique, the candidates to list. Matching
/// ignores case; what is inserted is spelled as the candidate is.
///
/// ```swift
/// let words = ConsoleCompletion.Words(rooms: ["superbowl"], nicks: ["Bob", "bella"], labels: ["kickoff"])
/// ConsoleCompletion.complete("/jo", words: words)          // "/jo" → "/join ", unique
/// ConsoleCompletion.complete("/join s", words: words)      // "s" → "superbowl "
/// ConsoleCompletion.complete("b", words: words)            // unchanged; candidates Bob, bella
/// ConsoleCompletion.complete("bo", words: words)           // "bo" → "Bob: " (a nick opening a line)
/// ```
public enum ConsoleCompletion {
    /// What the node knows that a line can name.
    public struct Words: Equatable, Sendable {
        /// Joined rooms and rooms seen on the network.
        public var rooms: [String]
        /// Nicks of the current room's members.
        public var nicks: [String]
        /// Calibration labels, pending ones first.
        public var labels: [String]

        public init(rooms: [String] = [], nicks: [String] = [], labels: [String] = []) {
            self.rooms = rooms
            self.nicks = nicks
            self.labels = labels
        }
    }

    /// The outcome of one Tab.
    public struct Result: Equatable, Sendable {
        /// How many characters before the cursor (the word being completed) to replace.
        public var replacing: Int
        /// What replaces them.
        public var with: String
        /// Every match when more than one remains, sorted; empty when the completion was unique or
        /// nothing matched.
        public var candidates: [String]

        public init(replacing: Int, with: String, candidates: [String]) {
            self.replacing = replacing
            self.with = with
            self.candidates = candidates
        }

        /// Nothing to complete.
        public static let none = Result(replacing: 0, with: "", candidates: [])
    }

    /// Completes `beforeCursor`, the line's text up to the cursor.
    public static func complete(_ beforeCursor: String, words: Words) -> Result {
        let line = beforeCursor.drop { $0.isWhitespace }
        if line.first == "/" {
            guard let space = line.firstIndex(where: \.isWhitespace) else {
                return match(String(line), among: ConsoleCommand.names, suffix: " ")
            }
            // A command's argument is the whole rest of the line: labels may hold spaces.
            let argument = String(line[space...].drop { $0.isWhitespace })
            switch line[..<space].lowercased() {
            case "/join": return match(argument, among: words.rooms, suffix: " ")
            case "/now", "/unmark", "/ignore", "/event": return match(argument, among: words.labels, suffix: "")
            default:
                // /msg NICK TEXT and the rest: the word being typed is a nick.
                let word = String(argument.reversed().prefix { !$0.isWhitespace }.reversed())
                return match(word, among: words.nicks, suffix: " ")
            }
        }
        // A nick, in a chat line: "bo" → "bob: " at the start of the line, "bob " later on.
        let word = String(line.reversed().prefix { !$0.isWhitespace }.reversed())
        let opensLine = word.count == line.count
        return match(word, among: words.nicks, suffix: opensLine ? ": " : " ")
    }

    /// Completes `prefix` (ignoring case) against `candidates`: a unique match and `suffix`, or the
    /// longest prefix all matches share and the matches themselves.
    static func match(_ prefix: String, among candidates: [String], suffix: String) -> Result {
        let typed = Array(prefix.lowercased())
        var seen: Set<String> = []
        let matches = candidates.filter { candidate in
            Array(candidate.lowercased()).starts(with: typed) && seen.insert(candidate).inserted
        }
        guard let first = matches.first else { return .none }
        let length = prefix.count
        if matches.count == 1 {
            return Result(replacing: length, with: first + suffix, candidates: [])
        }
        // The longest shared start, compared by Character so nothing is cut mid-grapheme.
        var shared = Array(first)
        for other in matches.dropFirst() {
            shared = Array(zip(shared, Array(other)).prefix { $0.lowercased() == $1.lowercased() }.map(\.0))
        }
        let grown = shared.count > length
        return Result(
            replacing: grown ? length : 0, with: grown ? String(shared) : "", candidates: matches.sorted())
    }
}
