/// One line typed into a node's console, parsed.
///
/// Plain text is a chat message to the current room; a line starting with `/` is a command.
/// Parsing never changes anything: a bad line gives a ``ConsoleCommandError`` whose text is
/// what the user should read.
///
/// ```swift
/// try ConsoleCommand(parsing: "/delay -0.5")   // .delay(.milliseconds(-500))
/// try ConsoleCommand(parsing: "what a catch")  // .say("what a catch")
/// try ConsoleCommand(parsing: "/dance")        // throws: unknown command "/dance" (try /help)
/// ```
public enum ConsoleCommand: Hashable, Sendable {
    /// A chat message to the current room.
    case say(String)
    case join(room: String)
    /// Join a private room: the passphrase is asked for next, never on the command line.
    case joinPrivate(room: String)
    /// A direct message to one peer, by nick (or `nick#id-prefix` when two share a nick).
    case direct(to: String, text: String)
    /// The score on the reader's stream now, home first (`/score 14-7`).
    case score(home: UInt16, guest: UInt16)
    /// Names the two sides (`/teams Chiefs Eagles`).
    case teams(home: String, guest: String)
    /// Where this viewer stands, in one line: the status line's words.
    case status
    /// The reader's stream is paused: show nothing new until `/resume`.
    case pause
    /// The stream plays again: the paused span is added to the reader's offset.
    case resume
    case leave
    case rooms
    case who
    /// Create a calibration event other viewers are prompted to mark.
    case event(label: String)
    /// Mark a calibration event now (creating it first if it is new); without a label, the moment
    /// the console offers (``PendingMarks/offer(now:)``).
    case now(label: String?)
    /// Stop being prompted for this calibration event.
    case ignore(label: String)
    /// Take back one's own mark of a calibration event (a stray key).
    case unmark(label: String)
    /// Nudge one's own offset: positive means "my stream is later than the marks say".
    case delay(TimeSpan)
    /// Show the last `count` messages of the room, ordered by game time.
    case history(count: Int)
    /// Hear the screen through the default input to find offsets without a tap (`/listen`),
    /// or stop (`/listen off`).
    case listen(Bool)
    /// The shield for writers the reader is not placed with (``HoldBackSchedule/shield``):
    /// `/shield` says how it stands, `/shield off`, `/shield on` (as it was before off, or the
    /// default), `/shield 60` (seconds).
    case shield(ShieldCommand)
    /// `/help`: the commands a viewer needs most, a screen's worth; `/help all`: every command
    /// and key.
    case help(all: Bool)
    case quit
    /// `/web`: serve the phone's page and show how to pair one; `/web devices`; `/web revoke NAME`.
    case web(WebCommand)
    /// `/photo PATH [caption]`: a JPEG, PNG or WebP file to the current room, held back like a line.
    /// A path with spaces is quoted: `/photo "my pics/replay.jpg" look`.
    case photo(path: String, caption: String)
    /// `/open N`: the Nth picture shown at this console, in the desktop's viewer.
    case open(Int)
    /// `/doctor`: why friends may not be found, checked on this machine and its network.
    case doctor

    /// Every command's name, as typed, for completion.
    public static let names = [
        "/join", "/private", "/msg", "/score", "/teams", "/pause", "/resume", "/status", "/leave", "/rooms", "/who", "/event", "/now", "/unmark", "/ignore", "/delay", "/history", "/listen", "/shield", "/web", "/photo", "/clip", "/open", "/doctor", "/help", "/quit",
    ]

    /// Default number of messages `/history` shows.
    public static let defaultHistoryCount = 20

    /// The longest `/delay` accepted, in seconds either way.
    public static let maximumDelaySeconds = 600.0

    /// The longest shield accepted: ten minutes, far past any stream's lag.
    public static let maximumShieldSeconds = 600

    /// What `/web` asks for.
    public enum WebCommand: Hashable, Sendable {
        /// Serve the page (if it is not served yet) and show a fresh pairing code.
        case pair
        case devices
        case revoke(name: String)
        /// Serve the page on another port (the default is taken, or the viewer wants its own).
        case port(Int)
    }

    /// What `/shield` asks for.
    public enum ShieldCommand: Hashable, Sendable {
        case show, on, off
        case seconds(Int)
    }

    /// Parses one console line (without its newline).
    public init(parsing line: String) throws(ConsoleCommandError) {
        var trimmed = line.trimmingWhitespace()
        guard trimmed.first == "/" else {
            guard !trimmed.isEmpty else { throw .emptyLine }
            self = .say(LongLine.flattened(trimmed))
            return
        }
        // A command's words are on one line; only a direct message keeps its text's line breaks.
        if !trimmed.lowercased().hasPrefix("/msg") || trimmed.prefix(5).contains(where: \.isNewline) {
            trimmed = LongLine.flattened(trimmed, keepingLineBreaks: false)
        }
        let name: Substring
        let argument: String
        if let space = trimmed.firstIndex(where: \.isWhitespace) {
            name = trimmed[..<space]
            argument = trimmed[space...].trimmingWhitespace()
        } else {
            name = trimmed[...]
            argument = ""
        }
        func required(_ what: String) throws(ConsoleCommandError) -> String {
            guard !argument.isEmpty else { throw .missingArgument(command: String(name), expected: what) }
            return argument
        }
        func none() throws(ConsoleCommandError) {
            guard argument.isEmpty else { throw .unexpectedArgument(command: String(name)) }
        }
        switch name.lowercased() {
        case "/join": self = .join(room: try required("a room name"))
        case "/private": self = .joinPrivate(room: try required("a room name (the passphrase is asked for next)"))
        case "/msg":
            let words = try required("a nick and a message, e.g. /msg bob psst").split(
                separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard words.count == 2, !words[1].trimmingWhitespace().isEmpty else {
                throw .missingArgument(command: "/msg", expected: "a nick and a message, e.g. /msg bob psst")
            }
            self = .direct(to: String(words[0]), text: LongLine.flattened(words[1].trimmingWhitespace()))
        case "/leave": try none(); self = .leave
        case "/score":
            let text = try required("the score, home first, e.g. /score 14-7")
            let sides = text.split(separator: "-", omittingEmptySubsequences: false).map { $0.trimmingWhitespace() }
            guard sides.count == 2, let home = UInt16(sides[0]), let guest = UInt16(sides[1]) else {
                throw .invalidArgument(command: "/score", argument: text, expected: "HOME-GUEST, e.g. 14-7")
            }
            self = .score(home: home, guest: guest)
        case "/teams":
            let names = try required("the two sides, home first, e.g. /teams Chiefs Eagles").split(
                separator: " ", omittingEmptySubsequences: true)
            guard names.count == 2 else {
                throw .invalidArgument(
                    command: "/teams", argument: argument, expected: "two names without spaces, home first")
            }
            self = .teams(home: String(names[0]), guest: String(names[1]))
        case "/status": try none(); self = .status
        case "/pause": try none(); self = .pause
        case "/resume": try none(); self = .resume
        case "/rooms": try none(); self = .rooms
        case "/who": try none(); self = .who
        case "/event": self = .event(label: try required("a label, e.g. /event kickoff"))
        case "/now": self = .now(label: argument.isEmpty ? nil : argument)
        case "/ignore": self = .ignore(label: try required("a label"))
        case "/unmark": self = .unmark(label: try required("a label"))
        case "/delay": self = .delay(try Self.parseDelay(required("S, +S or -S seconds, e.g. /delay +1")))
        case "/history":
            if argument.isEmpty {
                self = .history(count: Self.defaultHistoryCount)
            } else if let count = Int(argument), count > 0 {
                self = .history(count: count)
            } else {
                throw .invalidArgument(command: "/history", argument: argument, expected: "a positive count")
            }
        case "/listen":
            switch argument {
            case "": self = .listen(true)
            case "off": self = .listen(false)
            default: throw .invalidArgument(command: "/listen", argument: argument, expected: "\"off\" (/listen alone starts listening)")
            }
        case "/shield":
            switch argument.lowercased() {
            case "": self = .shield(.show)
            case "off": self = .shield(.off)
            case "on": self = .shield(.on)
            default:
                guard let seconds = Int(argument), (1...Self.maximumShieldSeconds).contains(seconds) else {
                    throw .invalidArgument(
                        command: "/shield", argument: argument,
                        expected: "on, off or whole seconds from 1 to \(Self.maximumShieldSeconds)")
                }
                self = .shield(.seconds(seconds))
            }
        case "/help":
            switch argument.lowercased() {
            case "": self = .help(all: false)
            case "all": self = .help(all: true)
            default: throw .invalidArgument(command: "/help", argument: argument, expected: "\"all\" (/help alone is the short list)")
            }
        case "/quit", "/exit": try none(); self = .quit
        case "/doctor": try none(); self = .doctor
        case "/open":
            let text = try required("a photo's number, e.g. /open 1 (each photo's line says its number)")
            guard let number = Int(text), number > 0 else {
                throw .invalidArgument(command: "/open", argument: text, expected: "a photo's number, e.g. /open 1")
            }
            self = .open(number)
        case "/photo", "/clip":
            // One command for stills and clips: the file says which it is.
            let (path, caption) = try Self.parsePhoto(required("a picture or clip file, e.g. \(name.lowercased()) ~/replay.jpg what a catch"))
            self = .photo(path: path, caption: caption)
        case "/web":
            let words = argument.split(whereSeparator: \.isWhitespace)
            switch (words.first?.lowercased(), words.count) {
            case (nil, _): self = .web(.pair)
            case ("devices", 1): self = .web(.devices)
            case ("revoke", 2): self = .web(.revoke(name: String(words[1])))
            case ("revoke", _):
                throw .invalidArgument(command: "/web revoke", argument: argument, expected: "one device's name (/web devices lists them)")
            case ("port", 2):
                guard let port = Int(words[1]), (1...65_535).contains(port) else {
                    throw .invalidArgument(command: "/web port", argument: String(words[1]), expected: "a port from 1 to 65535")
                }
                self = .web(.port(port))
            case ("port", _):
                throw .invalidArgument(command: "/web port", argument: argument, expected: "one port, such as /web port 7781")
            default:
                throw .invalidArgument(command: "/web", argument: argument, expected: "\"devices\", \"revoke NAME\" or \"port N\" (or nothing: a code to pair a phone)")
            }
        default: throw .unknownCommand(String(name))
        }
    }

    /// `+1`, `-0.5`, `+2.25`, `2` (later, as `+2`): a number of seconds, to whole milliseconds
    /// (a nudge's unit on the wire).
    /// `PATH [caption]` or `"PATH WITH SPACES" [caption]`.
    private static func parsePhoto(_ text: String) throws(ConsoleCommandError) -> (path: String, caption: String) {
        if text.hasPrefix("\""), let close = text.dropFirst().firstIndex(of: "\"") {
            let path = String(text[text.index(after: text.startIndex)..<close])
            guard !path.isEmpty else {
                throw .invalidArgument(command: "/photo", argument: text, expected: "a file's path")
            }
            return (path, text[text.index(after: close)...].trimmingWhitespace())
        }
        let parts = text.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        return (String(parts[0]), parts.count > 1 ? parts[1].trimmingWhitespace() : "")
    }

    private static func parseDelay(_ text: String) throws(ConsoleCommandError) -> TimeSpan {
        let invalid = ConsoleCommandError.invalidArgument(
            command: "/delay", argument: text, expected: "S, +S or -S seconds, e.g. 1, +1 or -0.5")
        let sign = text.first == "-" ? "-" : "+"
        let digits = text.first == "+" || text.first == "-" ? text.dropFirst() : Substring(text)
        guard let seconds = Double(digits), seconds.isFinite, seconds >= 0,
            digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") })
        else { throw invalid }
        guard seconds <= maximumDelaySeconds else {
            throw .invalidArgument(
                command: "/delay", argument: text, expected: "at most \(Int(maximumDelaySeconds)) seconds either way")
        }
        let milliseconds = Int64((seconds * 1000).rounded())
        guard milliseconds != 0 else { throw invalid }
        return .milliseconds(sign == "-" ? -milliseconds : milliseconds)
    }

}

/// Why a console line was not understood. The description is the message to show.
public enum ConsoleCommandError: Error, Hashable, Sendable, CustomStringConvertible {
    case emptyLine
    case unknownCommand(String)
    case missingArgument(command: String, expected: String)
    case unexpectedArgument(command: String)
    case invalidArgument(command: String, argument: String, expected: String)

    public var description: String {
        switch self {
        case .emptyLine: "nothing to send"
        case .unknownCommand(let name): "unknown command \"\(name)\" (try /help)"
        case .missingArgument(let command, let expected): "\(command) needs \(expected)"
        case .unexpectedArgument(let command): "\(command) takes no argument"
        case .invalidArgument(let command, let argument, let expected):
            "\(command): \"\(argument)\" is not \(expected)"
        }
    }
}
