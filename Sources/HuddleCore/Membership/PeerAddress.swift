/// Where a node listens: a host (an address literal or a DNS name) and a port, UDP and TCP alike.
///
/// Printed as `host:port`, with IPv6 literals in brackets; parsed from the same form, as given to
/// `--peer HOST:PORT`.
///
/// ```swift
/// PeerAddress(parsing: "192.0.2.11:7400")   // host "192.0.2.11", port 7400
/// PeerAddress(parsing: "localhost:7400")    // host "localhost", port 7400
/// PeerAddress(parsing: "[::1]:7400")        // host "::1", port 7400; prints "[::1]:7400"
/// PeerAddress(parsing: "::1:7400")          // nil: an IPv6 literal needs brackets
/// PeerAddress(parsing: "bob")               // nil: no port
/// ```
public struct PeerAddress: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// An address literal ("192.0.2.11", "::1", "fe80::1%eth0") or a DNS name, without brackets.
    public var host: String
    /// The port (UDP and TCP).
    public var port: UInt16

    /// An address as it is; nothing is checked.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`, `[IPV6]:PORT`: a non-empty host of at most ``WireLimits/maxHostBytes``
    /// bytes without spaces or control characters, and a port from 1 to 65535 in decimal digits.
    /// `nil` for anything else.
    public init?(parsing text: some StringProtocol) {
        let text = String(text)
        guard let colon = text.lastIndex(of: ":") else { return nil }
        let hostPart = text[..<colon]
        let portPart = text[text.index(after: colon)...]
        guard let port = Self.port(parsing: portPart) else { return nil }

        let host: Substring
        if hostPart.hasPrefix("[") {
            guard hostPart.hasSuffix("]"), hostPart.count > 2 else { return nil }
            host = hostPart.dropFirst().dropLast()
            guard host.contains(":") else { return nil }  // brackets are for IPv6 literals only
        } else {
            guard !hostPart.contains(":") else { return nil }  // a bare IPv6 literal is ambiguous
            host = hostPart
        }
        guard !host.isEmpty, host.utf8.count <= WireLimits.maxHostBytes else { return nil }
        guard !host.contains(where: { $0.isWhitespace || $0 == "[" || $0 == "]" || $0 == "/" }),
            WireText.check(ArraySlice(host.utf8)) == .valid
        else { return nil }
        self.init(host: String(host), port: port)
    }

    /// `host:port`, or `[host]:port` when the host is an IPv6 literal (contains a colon).
    public var description: String {
        // (Bytes, not `contains(":")`: that is Foundation's string search, ~10 µs a datagram.)
        host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// By host (as text), then port: a deterministic order for seeds and output.
    public static func < (lhs: PeerAddress, rhs: PeerAddress) -> Bool {
        (lhs.host, lhs.port) < (rhs.host, rhs.port)
    }

    private static func port(parsing digits: Substring) -> UInt16? {
        guard (1...5).contains(digits.utf8.count),
            digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let value = Int(digits), (1...Int(UInt16.max)).contains(value)
        else { return nil }
        return UInt16(value)
    }
}
