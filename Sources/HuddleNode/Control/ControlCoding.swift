import Foundation

/// The JSON the control socket speaks: one ``ControlRequest`` or ``ControlResponse`` per line,
/// with Swift's default `Codable` shapes, e.g.
///
/// ```text
/// → {"status":{}}
/// ← {"status":{"_0":{"node":{...},"peers":[...],"rooms":[...],"counters":{...}}}}
/// → {"send":{"room":"superbowl","text":"what a catch"}}
/// ← {"sent":{"id":"3f9a…#12"}}
/// ← {"error":{"_0":"you are not in room \"superbowl\""}}
/// ```
enum ControlCoding {
    /// The longest request line the node reads: 64 KiB. A longer one closes the connection.
    static let maximumRequestLength = 64 * 1024
    /// The longest response line a client reads (a status of a busy node is well under this).
    static let maximumResponseLength = 16 * 1024 * 1024

    static func encode(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var bytes = [UInt8](try encoder.encode(value))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    static func decode<T: Decodable>(_ type: T.Type, from bytes: some Sequence<UInt8>) throws -> T {
        try JSONDecoder().decode(type, from: Data(bytes))
    }
}
