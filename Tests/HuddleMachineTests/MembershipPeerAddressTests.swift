import Testing

@testable import HuddleCore

@Suite(.offThePool) struct MembershipPeerAddressTests {
    @Test(arguments: [
        ("192.0.2.1:7000", "192.0.2.1", 7000 as UInt16),
        ("localhost:7000", "localhost", 7000),
        ("[::1]:7000", "::1", 7000),
        ("[fe80::1%eth0]:65535", "fe80::1%eth0", 65535),
        ("h1.local:1", "h1.local", 1),
    ])
    func parsesHostAndPort(text: String, host: String, port: UInt16) {
        let address = PeerAddress(parsing: text)
        #expect(address == PeerAddress(host: host, port: port))
        #expect(address?.description == text)
    }

    @Test(arguments: [
        "", "localhost", "localhost:", ":7000", "localhost:0", "localhost:65536", "localhost:70000",
        "localhost:+7000", "localhost:7000 ", "local host:7000", "::1:7000", "[::1]", "[::1]7000",
        "[]:7000", "[localhost]:7000", "[::1:7000", "a/b:7000",
        "localhost:00000007000",
    ])
    func rejectsMalformed(text: String) {
        #expect(PeerAddress(parsing: text) == nil)
    }

    @Test func rejectsOverlongHost() {
        let host = String(repeating: "h", count: WireLimits.maxHostBytes)
        #expect(PeerAddress(parsing: "\(host):7000")?.host == host)
        #expect(PeerAddress(parsing: "\(host)h:7000") == nil)
    }

    @Test func printsIPv6InBrackets() {
        #expect(PeerAddress(host: "192.0.2.1", port: 7000).description == "192.0.2.1:7000")
        #expect(PeerAddress(host: "::1", port: 7000).description == "[::1]:7000")
    }

    @Test func ordersByHostThenPort() {
        let sorted = ["b:1", "a:2", "a:1"].compactMap { PeerAddress(parsing: $0) }.sorted()
        #expect(sorted.map(\.description) == ["a:1", "a:2", "b:1"])
    }
}
