import NIOCore
import Testing

@testable import HuddleNode

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The kernel's word on an address before NIO is given a datagram for it: one NIO cannot send to
/// would close the node's UDP socket (issue 47: a friend announced from another network).
@Suite struct RouteCheckTests {
    @Test func aRoutedAddressPassesAndABroadcastOneIsRefused() throws {
        let routes = RouteCheck()
        #expect(routes.refusal(to: try SocketAddress(ipAddress: "127.0.0.1", port: 7400)) == nil)
        #expect(routes.refusal(to: try SocketAddress(ipAddress: "255.255.255.255", port: 7400)) == EACCES)
        // Asked again after a refusal, a routed address still passes: the socket is not spoiled.
        #expect(routes.refusal(to: try SocketAddress(ipAddress: "127.0.0.1", port: 7401)) == nil)
    }
}
