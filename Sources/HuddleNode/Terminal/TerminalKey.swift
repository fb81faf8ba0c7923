/// One key (or a paste) read from a terminal in raw mode, as ``KeyDecoder`` decodes it.
enum TerminalKey: Equatable, Sendable {
    /// Printable text typed (one or more characters; never a control character).
    case text(String)
    /// Text pasted in bracketed-paste mode: line breaks as `\n`, tabs as spaces, no other
    /// control characters.
    case paste(String)
    /// A bracketed paste longer than ``KeyDecoder/maximumPasteBytes``, of this many bytes: none
    /// of it is kept, and the console says so.
    case pasteTooLong(bytes: Int)
    case enter
    case tab
    case backspace
    case delete
    case left, right, up, down
    case home, end
    /// Ctrl-Left, Alt-B: one word left. Ctrl-Right, Alt-F: one word right.
    case wordLeft, wordRight
    /// Ctrl and a letter (lowercase), for the control bytes with no key of their own.
    case control(Character)
    /// Alt (Meta) and a character not bound to a word move.
    case alt(Character)
    /// Alt-Backspace.
    case altBackspace
    /// A lone Escape, after no sequence followed it.
    case escape
    /// A sequence this console does not use (F-keys, Insert, Page Up...).
    case ignored
}

/// Turns the bytes a terminal sends in raw mode into ``TerminalKey``s.
///
/// Pure and incremental: feed it whatever `read(2)` returned; a sequence split across reads (a
/// UTF-8 character, an escape sequence) waits for the rest. A lone Escape cannot be told from the
/// start of a sequence until time passes, so the caller calls ``flush()`` when no byte followed
/// for a moment (the console waits 50 ms).
///
/// ```swift
/// var decoder = KeyDecoder()
/// decoder.feed(Array("hi\u{1b}[D".utf8))   // [.text("hi"), .left]
/// decoder.feed([0xf0, 0x9f])                // []: half an emoji
/// decoder.feed([0x8f, 0x88])                // [.text("🏈")]
/// ```
struct KeyDecoder: Sendable {
    private var pending: [UInt8] = []
    /// Inside a bracketed paste: the pasted bytes so far.
    private var paste: [UInt8]?
    /// Bytes of the paste beyond ``maximumPasteBytes``, not kept.
    private var pasteOverflow = 0

    /// Longest paste taken: 16 messages. A longer one is refused whole
    /// (``TerminalKey/pasteTooLong(bytes:)``), never cut short without a word.
    static let maximumPasteBytes = 64 * 1024

    private static let pasteStart: [UInt8] = Array("\u{1b}[200~".utf8)
    private static let pasteEnd: [UInt8] = Array("\u{1b}[201~".utf8)

    init() {}

    /// Whether bytes are waiting for the rest of a sequence.
    var isWaiting: Bool { !pending.isEmpty && paste == nil }

    /// Decodes `bytes` (and anything left over from before).
    mutating func feed(_ bytes: some Sequence<UInt8>) -> [TerminalKey] {
        pending.append(contentsOf: bytes)
        var keys: [TerminalKey] = []
        var index = 0
        var text: [UInt8] = []
        func flushText() {
            if !text.isEmpty { keys.append(.text(String(decoding: text, as: UTF8.self))) }
            text.removeAll()
        }
        decoding: while index < pending.count {
            if paste != nil {
                switch consumePaste(from: index, into: &keys) {
                case .next(let next): index = next
                case .wait(let at):
                    index = at
                    break decoding
                }
                continue
            }
            let byte = pending[index]
            switch byte {
            case 0x1b:
                guard let (decoded, length) = Self.escapeSequence(pending[index...]) else { break decoding }
                flushText()
                index += length
                switch decoded {
                case .key(let key): keys.append(key)
                case .pasteStart: paste = []
                }
            case 0x00..<0x20, 0x7f:
                flushText()
                keys.append(Self.controlKey(byte))
                index += 1
            default:
                let length = Self.utf8Length(leading: byte)
                guard length > 0 else {
                    index += 1  // a stray continuation byte: dropped
                    continue
                }
                guard index + length <= pending.count else { break decoding }
                text.append(contentsOf: pending[index..<(index + length)])
                index += length
            }
        }
        flushText()
        pending.removeFirst(index)
        return keys
    }

    /// What is left when no more bytes came: a lone Escape (or Alt and a half sequence) becomes
    /// ``TerminalKey/escape``; half a UTF-8 character is dropped.
    mutating func flush() -> [TerminalKey] {
        guard paste == nil, !pending.isEmpty else { return [] }
        let escape = pending.first == 0x1b
        pending.removeAll()
        return escape ? [.escape] : []
    }

    // MARK: Pieces

    /// What an escape sequence stands for.
    private enum Decoded {
        case key(TerminalKey)
        /// `ESC [ 200 ~`: a bracketed paste starts.
        case pasteStart
    }

    private enum PasteProgress {
        /// Go on decoding at this index (after the end marker, or the end of the bytes).
        case next(Int)
        /// The bytes end in what may be half the end marker, from this index: wait for the rest.
        case wait(at: Int)
    }

    /// Takes pasted bytes from `start` up to and including the paste's end marker.
    private mutating func consumePaste(from start: Int, into keys: inout [TerminalKey]) -> PasteProgress {
        var index = start
        while index < pending.count {
            if pending[index] == 0x1b {
                let rest = pending[index...]
                if rest.starts(with: Self.pasteEnd) {
                    let pasted = paste ?? []
                    keys.append(
                        pasteOverflow > 0
                            ? .pasteTooLong(bytes: pasted.count + pasteOverflow) : .paste(Self.pasteText(pasted)))
                    paste = nil
                    pasteOverflow = 0
                    return .next(index + Self.pasteEnd.count)
                }
                if Self.pasteEnd.starts(with: rest) { return .wait(at: index) }
            }
            if (paste?.count ?? 0) < Self.maximumPasteBytes {
                paste?.append(pending[index])
            } else {
                pasteOverflow += 1
            }
            index += 1
        }
        return .next(index)
    }

    /// Pasted bytes as text: each line break (CR LF, CR or LF) one `\n`, tabs spaces, other
    /// control bytes gone. One pass over the bytes.
    private static func pasteText(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        var scalars = String.UnicodeScalarView()
        var afterCR = false
        for scalar in text.unicodeScalars {
            defer { afterCR = scalar.value == 0x0d }
            switch scalar.value {
            case 0x0a where afterCR: continue
            case 0x0a, 0x0d: scalars.append("\n")
            case 0x09: scalars.append(" ")
            case 0x00..<0x20, 0x7f..<0xa0: continue
            default: scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    private static func controlKey(_ byte: UInt8) -> TerminalKey {
        switch byte {
        case 0x0d, 0x0a: .enter
        case 0x09: .tab
        case 0x7f, 0x08: .backspace
        case 0x00: .control(" ")
        default: .control(Character(Unicode.Scalar(byte + 0x60)))
        }
    }

    /// Bytes in the UTF-8 sequence a leading byte starts, or 0 for a byte that cannot lead one.
    private static func utf8Length(leading byte: UInt8) -> Int {
        switch byte {
        case 0x20..<0x80: 1
        case 0xc2..<0xe0: 2
        case 0xe0..<0xf0: 3
        case 0xf0..<0xf5: 4
        default: 0
        }
    }

    /// What an escape sequence at the start of `bytes` (which begins with ESC) stands for and its
    /// length, or `nil` if more bytes are needed.
    private static func escapeSequence(_ bytes: ArraySlice<UInt8>) -> (Decoded, Int)? {
        if bytes.starts(with: pasteStart) { return (.pasteStart, pasteStart.count) }
        guard let (key, length) = escapeKey(bytes) else { return nil }
        return (.key(key), length)
    }

    private static func escapeKey(_ bytes: ArraySlice<UInt8>) -> (TerminalKey, Int)? {
        let start = bytes.startIndex
        guard bytes.count >= 2 else { return nil }
        let second = bytes[start + 1]
        switch second {
        case UInt8(ascii: "["):
            // CSI: parameters 0x30–0x3F, intermediates 0x20–0x2F, a final byte 0x40–0x7E.
            var index = start + 2
            while index < bytes.endIndex, (0x20...0x3f).contains(bytes[index]) { index += 1 }
            guard index < bytes.endIndex else {
                return bytes.count > 32 ? (.ignored, bytes.count) : nil
            }
            let final = bytes[index]
            let parameters = String(decoding: bytes[(start + 2)..<index], as: UTF8.self)
            return (csiKey(parameters: parameters, final: final), index - start + 1)
        case UInt8(ascii: "O"):
            guard bytes.count >= 3 else { return nil }
            let key: TerminalKey =
                switch bytes[start + 2] {
                case UInt8(ascii: "A"): .up
                case UInt8(ascii: "B"): .down
                case UInt8(ascii: "C"): .right
                case UInt8(ascii: "D"): .left
                case UInt8(ascii: "H"): .home
                case UInt8(ascii: "F"): .end
                default: .ignored
                }
            return (key, 3)
        case 0x7f, 0x08:
            return (.altBackspace, 2)
        case 0x1b:
            return (.escape, 1)  // Escape, then whatever the second one starts
        default:
            let length = utf8Length(leading: second)
            guard length > 0 else { return (.escape, 1) }
            guard bytes.count >= 1 + length else { return nil }
            let character = String(decoding: bytes[(start + 1)..<(start + 1 + length)], as: UTF8.self)
            switch character {
            case "b", "B": return (.wordLeft, 2)
            case "f", "F": return (.wordRight, 2)
            default: return (.alt(character.first ?? " "), 1 + length)
            }
        }
    }

    private static func csiKey(parameters: String, final: UInt8) -> TerminalKey {
        let fields = parameters.split(separator: ";", omittingEmptySubsequences: false)
        // xterm modifiers: 1 + (Shift 1, Alt 2, Ctrl 4); Ctrl or Alt with an arrow moves by a word.
        let modifier = fields.count > 1 ? (Int(fields[1]) ?? 1) - 1 : 0
        let byWord = modifier & 0b110 != 0
        switch final {
        case UInt8(ascii: "A"): return .up
        case UInt8(ascii: "B"): return .down
        case UInt8(ascii: "C"): return byWord ? .wordRight : .right
        case UInt8(ascii: "D"): return byWord ? .wordLeft : .left
        case UInt8(ascii: "H"): return .home
        case UInt8(ascii: "F"): return .end
        case UInt8(ascii: "~"):
            switch fields.first.flatMap({ Int($0) }) {
            case 1, 7: return .home
            case 4, 8: return .end
            case 3: return .delete
            default: return .ignored
            }
        default: return .ignored
        }
    }
}
