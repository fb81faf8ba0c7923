/// A code that pairs a phone with the node (docs/WEB.md, "Pairing"): random bytes written in
/// Crockford's base32 (no I, L, O or U, so nothing reads as another letter), good once.
///
/// ```swift
/// let typed = PairingCode(random: fiveBytes)       // "7K3M-Q9TX": 40 bits, typed by hand
/// let secret = PairingCode(random: sixteenBytes)   // 26 letters: 128 bits, in the QR code's link
/// PairingCode.normalized(" 7k3m q9tx ")           // "7K3MQ9TX": as the page and the node compare it
/// ```
public struct PairingCode: Sendable, Hashable {
    /// The letters without separators: what both sides run CPace with.
    public let letters: String

    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    /// The code `random` spells, 5 bits a letter (40 bits: 8 letters; 128: 26).
    public init(random: [UInt8]) {
        letters = Base32.encode(random, alphabet: Self.alphabet)
    }

    /// A code as it is spelled: for tests against fixed vectors.
    init(letters: String) {
        self.letters = letters
    }

    /// How bits of randomness it holds.
    public var bits: Int { letters.utf8.count * 5 }

    /// Groups of four, for a person to read and type: `7K3M-Q9TX`.
    public var grouped: String {
        var groups: [Substring] = []
        var rest = Substring(letters)
        while !rest.isEmpty {
            groups.append(rest.prefix(4))
            rest = rest.dropFirst(4)
        }
        return groups.joined(separator: "-")
    }

    /// What a person typed, as the code is compared: upper case, without spaces and dashes, and
    /// the letters Crockford's alphabet reads as digits (O as 0, I and L as 1).
    public static func normalized(_ typed: String) -> String {
        var out = ""
        for character in typed.uppercased() where character != "-" && !character.isWhitespace {
            switch character {
            case "O": out.append("0")
            case "I", "L": out.append("1")
            default: out.append(character)
            }
        }
        return out
    }
}
