/// The rule every string on the wire follows: well-formed UTF-8 (RFC 3629: no overlong forms,
/// no surrogates, nothing above U+10FFFF) with no C0 control character (U+0000…U+001F) and no
/// DEL (U+007F). Checked by hand in one pass over the bytes, reporting the offset of the first
/// fault, which `String(validating:as:)` does not.
enum WireText {
    /// The outcome of ``check(_:)``; positions are offsets into the checked bytes.
    enum Verdict: Equatable {
        case valid
        case invalidUTF8(at: Int)
        case controlCharacter(UInt8, at: Int)
    }

    /// Checks UTF-8 bytes against the wire's string rule.
    static func check(_ utf8: ArraySlice<UInt8>) -> Verdict {
        let start = utf8.startIndex
        let end = utf8.endIndex
        var index = start
        while index < end {
            let lead = utf8[index]
            if lead < 0x80 {
                if lead < 0x20 || lead == 0x7F { return .controlCharacter(lead, at: index - start) }
                index += 1
                continue
            }
            // Continuation count, and the allowed range of the first continuation byte
            // (narrowed for E0, ED, F0, F4 to exclude overlongs, surrogates and > U+10FFFF).
            let continuations: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: continuations = 1
            case 0xE0:
                continuations = 2
                low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: continuations = 2
            case 0xED:
                continuations = 2
                high = 0x9F
            case 0xF0:
                continuations = 3
                low = 0x90
            case 0xF1...0xF3: continuations = 3
            case 0xF4:
                continuations = 3
                high = 0x8F
            default: return .invalidUTF8(at: index - start)
            }
            guard end - index > continuations else { return .invalidUTF8(at: index - start) }
            let first = utf8[index + 1]
            guard first >= low, first <= high else { return .invalidUTF8(at: index - start) }
            var next = index + 2
            while next <= index + continuations {
                guard utf8[next] & 0xC0 == 0x80 else { return .invalidUTF8(at: index - start) }
                next += 1
            }
            index = next
        }
        return .valid
    }
}
