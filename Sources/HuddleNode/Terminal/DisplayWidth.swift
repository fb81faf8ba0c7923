/// How many terminal columns text takes: 2 for East Asian wide and fullwidth characters and for
/// emoji shown as pictures, 1 for the rest, 0 for nothing. Counted per `Character` (grapheme
/// cluster), which is also the unit the cursor moves by, so combining marks, skin tones and ZWJ
/// sequences never split.
///
/// A table of our own rather than `wcwidth(3)`: that depends on the process locale (a node started
/// under `LANG=C` would count every emoji as -1) and on the libc's Unicode version.
///
/// ```swift
/// DisplayWidth.of("abc")      // 3
/// DisplayWidth.of("日本")      // 4
/// DisplayWidth.of("🏈!")       // 3
/// ```
enum DisplayWidth {
    /// Columns `text` takes on one terminal line.
    static func of(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// Columns one character takes.
    static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.value < 0x20 || (0x7f..<0xa0).contains(first.value) { return 0 }
        if isWide(first) { return 2 }
        // Text-style symbols become pictures with VS16 (U+FE0F); a keycap or a flag is a picture too.
        if scalars.count > 1, first.properties.isEmoji,
            scalars.contains(where: { $0.value == 0xfe0f || $0.value == 0x20e3 || $0.properties.isEmojiPresentation })
        {
            return 2
        }
        return 1
    }

    /// East Asian Wide or Fullwidth (Unicode's EastAsianWidth.txt, W and F), or an emoji shown as
    /// a picture by default.
    static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isEmojiPresentation { return true }
        let value = scalar.value
        var low = 0
        var high = wideRanges.count - 1
        while low <= high {
            let middle = (low + high) / 2
            let range = wideRanges[middle]
            if value < range.lowerBound {
                high = middle - 1
            } else if value > range.upperBound {
                low = middle + 1
            } else {
                return true
            }
        }
        return false
    }

    /// Wide and fullwidth blocks, sorted.
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F,  // Hangul Jamo initials
        0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0...0x23F0, 0x23F3...0x23F3,
        0x2E80...0x303E,  // CJK radicals, Kangxi, ideographic description, CJK symbols
        0x3041...0x33FF,  // Hiragana, Katakana, Bopomofo, Hangul compatibility, Kanbun, CJK compat
        0x3400...0x4DBF,  // CJK extension A
        0x4E00...0x9FFF,  // CJK unified ideographs
        0xA000...0xA4CF,  // Yi
        0xA960...0xA97F,  // Hangul Jamo extended A
        0xAC00...0xD7A3,  // Hangul syllables
        0xF900...0xFAFF,  // CJK compatibility ideographs
        0xFE10...0xFE19,  // vertical forms
        0xFE30...0xFE6F,  // CJK compatibility forms, small form variants
        0xFF00...0xFF60,  // fullwidth forms
        0xFFE0...0xFFE6,
        0x16FE0...0x16FE4, 0x17000...0x18CFF,  // Tangut
        0x1B000...0x1B2FF,  // Kana supplement and extensions, Nushu
        0x1F200...0x1F2FF,  // enclosed ideographic supplement
        0x20000...0x2FFFD,  // CJK extensions B to F
        0x30000...0x3FFFD,  // CJK extension G and beyond
    ]
}
