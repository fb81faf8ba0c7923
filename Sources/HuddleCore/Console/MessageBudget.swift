/// How much of one message a console line uses: the one length limit a person sees.
///
/// A chat message carries at most ``limit`` bytes of text (``WireLimits/maxChatTextBytes``); a
/// line typed at the console is held to the same limit, counted on the message it sends: the whole
/// line for chat, the text after `/msg NICK ` for a direct message, the whole line for any other
/// command. The console shows the count once a line nears the limit (``counter(forMessageBytes:)``)
/// and refuses a key that would go past it.
///
/// ```swift
/// MessageBudget.commandPrefixBytes(Array("/msg bob hi"))   // 9: "/msg bob " is not the message
/// MessageBudget.commandPrefixBytes(Array("what a catch"))  // 0
/// MessageBudget.counter(forMessageBytes: 3_900)            // "3,900/4,096"
/// MessageBudget.counter(forMessageBytes: 120)              // nil: far from the limit
/// ```
public enum MessageBudget {
    /// Bytes of text one message holds.
    public static let limit = WireLimits.maxChatTextBytes

    /// The count shows from here on: three quarters of the limit.
    public static let counterFrom = limit * 3 / 4

    /// How far into a line ``commandPrefixBytes(_:)`` looks: `/msg`, a nick and the spaces.
    public static let prefixScan = 8 + WireLimits.maxNickBytes + 8

    /// Bytes at the start of `line` that are a command's and not its message: `/msg NICK ` (and
    /// any spaces around) for a direct message, 0 for anything else. Reads at most the first
    /// ``prefixScan`` characters, so it costs the same on a line of any length.
    public static func commandPrefixBytes(_ line: some Collection<Character>) -> Int {
        var bytes = 0
        var stage = 0  // 0 leading space, 1 "/msg", 2 spaces, 3 the nick, 4 spaces after it
        var command = ""
        for character in line.prefix(prefixScan) {
            let space = character.isWhitespace
            switch stage {
            case 0 where space: break
            case 0, 1:
                if space {
                    guard command.lowercased() == "/msg" else { return 0 }
                    stage = 2
                } else {
                    command.append(character)
                    guard command.count <= 4 else { return 0 }
                    stage = 1
                }
            case 2 where space: break
            case 2: stage = 3
            case 3 where space: stage = 4
            case 3: break
            case 4 where space: break
            default: return bytes
            }
            bytes += character.utf8.count
        }
        return stage >= 3 ? bytes : 0
    }

    /// Bytes of message in a line of `lineBytes` that starts with `prefixBytes` of command.
    public static func messageBytes(lineBytes: Int, prefixBytes: Int) -> Int {
        max(0, lineBytes - prefixBytes)
    }

    /// The most bytes a line may hold, given the command before its message.
    public static func lineLimit(prefixBytes: Int) -> Int {
        limit + prefixBytes
    }

    /// What the status line shows of a message this long, once it nears the limit
    /// (`3,900/4,096`); `nil` before.
    public static func counter(forMessageBytes bytes: Int) -> String? {
        guard bytes >= counterFrom else { return nil }
        return "\(grouped(bytes))/\(grouped(limit))"
    }

    /// `12345` as `12,345`.
    public static func grouped(_ number: Int) -> String {
        let digits = String(number.magnitude)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return (number < 0 ? "-" : "") + out
    }
}
