/// DNS-SD TXT record data (RFC 6763 §6): a sequence of strings, each a length byte followed by
/// that many bytes, read as `key=value` (or a bare `key`).
///
/// ```
/// +-----+-------------------+-----+-------------------+
/// | len | key=value (len B) | len | key=value (len B) |  ...
/// +-----+-------------------+-----+-------------------+
/// ```
///
/// Decoding is strict and never traps, whatever the bytes:
/// - a length byte that runs past the end is ``TXTRecordError/truncated(offset:)``;
/// - more than ``maxDecodedBytes`` is ``TXTRecordError/tooLarge(byteCount:)``, checked first;
/// - a key must be printable ASCII (0x20…0x7E) and is compared case-insensitively (RFC 6763
///   §6.4), so keys come out lowercased;
/// - a key seen twice is ``TXTRecordError/duplicateKey(_:)``. RFC 6763 says to keep the first
///   occurrence, but Avahi's compat library hands TXT strings to a resolver in *reverse* wire
///   order, so "first" is not the same on Linux and macOS; refusing the record is the only
///   answer that is the same everywhere;
/// - empty strings (Avahi encodes an empty TXT record as one zero byte) and strings that start
///   with `=` are skipped, as RFC 6763 §6.4 asks.
enum TXTRecord {
    /// One `key=value` string. `value` is `nil` for a bare key (no `=`), and may be empty.
    struct Entry: Hashable, Sendable {
        var key: String
        var value: [UInt8]?
    }

    /// Most bytes ``decode(_:)`` looks at. A Huddle node sends at most
    /// ``ServiceAdvertisement/maxTXTBytes``; this leaves room for keys added later.
    static let maxDecodedBytes = 512

    /// Encodes `key=value` strings in the order given.
    /// - Precondition: each `key=value` is at most 255 bytes of UTF-8.
    static func encode(_ entries: [(key: String, value: String)]) -> [UInt8] {
        var bytes = [UInt8]()
        for (key, value) in entries {
            let string = Array(key.utf8) + [UInt8(ascii: "=")] + Array(value.utf8)
            precondition(string.count <= 255, "a TXT string has at most 255 bytes")
            bytes.append(UInt8(string.count))
            bytes += string
        }
        return bytes
    }

    /// Number of bytes `key=value` takes in an encoded record, length byte included.
    static func encodedByteCount(key: String, value: String) -> Int {
        1 + key.utf8.count + 1 + value.utf8.count
    }

    /// Splits a record into its strings, in wire order, keys lowercased.
    static func decode(_ bytes: [UInt8]) throws(TXTRecordError) -> [Entry] {
        guard bytes.count <= maxDecodedBytes else { throw .tooLarge(byteCount: bytes.count) }
        var entries = [Entry]()
        var seen = Set<String>()
        var index = 0
        while index < bytes.count {
            let length = Int(bytes[index])
            let start = index + 1
            let end = start + length
            guard end <= bytes.count else { throw .truncated(offset: index) }
            index = end
            let string = bytes[start..<end]
            guard let first = string.first, first != UInt8(ascii: "=") else { continue }
            let equals = string.firstIndex(of: UInt8(ascii: "="))
            let keyBytes = string[start..<(equals ?? end)]
            guard keyBytes.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                throw .invalidKey(offset: start - 1)
            }
            let key = String(decoding: keyBytes, as: UTF8.self).lowercased()
            guard seen.insert(key).inserted else { throw .duplicateKey(key) }
            let value = equals.map { Array(string[($0 + 1)..<end]) }
            entries.append(Entry(key: key, value: value))
        }
        return entries
    }
}

/// Why a TXT record was not accepted as a Huddle node's advertisement. The peer is ignored (and
/// the reason logged at debug); a hostile or broken record never stops discovery.
public enum TXTRecordError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The record is longer than a Huddle node ever sends.
    case tooLarge(byteCount: Int)
    /// The length byte at `offset` announces more bytes than there are.
    case truncated(offset: Int)
    /// The string whose length byte is at `offset` has a key that is not printable ASCII.
    case invalidKey(offset: Int)
    /// The key occurs more than once.
    case duplicateKey(String)
    /// A key every Huddle advertisement carries is missing.
    case missingKey(String)
    /// The key's value is malformed (an id that is not 64 hex digits, a nick over 64 bytes, ...).
    case invalidValue(key: String)
    /// `txtvers` is not one this node understands.
    case unsupportedVersion(String)

    /// The reason in words, for logs.
    public var description: String {
        switch self {
        case .tooLarge(let count): "TXT record of \(count) bytes is too large"
        case .truncated(let offset): "TXT string at byte \(offset) runs past the end"
        case .invalidKey(let offset): "TXT string at byte \(offset) has a key that is not printable ASCII"
        case .duplicateKey(let key): "TXT key \"\(key)\" occurs more than once"
        case .missingKey(let key): "TXT key \"\(key)\" is missing"
        case .invalidValue(let key): "TXT key \"\(key)\" has a malformed value"
        case .unsupportedVersion(let version): "TXT version \"\(version)\" is not supported"
        }
    }
}
