import Foundation
import HuddleCore
import NIOCore
import NIOPosix
import Testing

@testable import HuddleNode

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The node's datagrams leave from its own socket with `sendto(2)` on the caller's thread: a
/// peer gets them from the node's port, an address the kernel will not send to is refused with
/// its errno (and nothing is closed), and the socket NIO reads still reads.
@Suite struct DatagramSenderTests {
    /// A socket of the test's own on loopback, and its port.
    func listener() throws -> (Int32, Int) {
        let descriptor = try DatagramSender.boundSocket(host: "127.0.0.1", port: 0)
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// One datagram in, and the port it came from.
    func receive(_ descriptor: Int32) -> ([UInt8], Int)? {
        var buffer = [UInt8](repeating: 0, count: 2048)
        var from = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let count = withUnsafeMutablePointer(to: &from) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                recvfrom(descriptor, &buffer, buffer.count, 0, $0, &length)
            }
        }
        guard count >= 0 else { return nil }
        return (Array(buffer[..<count]), Int(UInt16(bigEndian: from.sin_port)))
    }

    @Test func aDatagramLeavesFromTheNodesPortAndTheNodeStillReads() async throws {
        let (peer, peerPort) = try listener()
        defer { close(peer) }
        let (udp, tcp, endpoint) = try await Node.bind(host: "127.0.0.1", port: 0, on: MultiThreadedEventLoopGroup.singleton)
        defer { Task { try? await tcp.channel.close() } }
        let nodePort = try #require(udp.channel.localAddress?.port)
        #expect(endpoint.sender != nil)

        let skipped = endpoint.send(Array("hello".utf8), to: [PeerAddress(host: "127.0.0.1", port: UInt16(peerPort))])
        #expect(skipped.isEmpty)
        let got = try #require(receive(peer))
        #expect(got.0 == Array("hello".utf8))
        #expect(got.1 == nodePort)

        // The same socket still reads what comes to it, through NIO.
        try await udp.executeThenClose { inbound, _ in
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(nodePort).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let reply = Array("back".utf8)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(peer, reply, reply.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            for try await envelope in inbound {
                #expect(Array(envelope.data.readableBytesView) == reply)
                #expect(envelope.remoteAddress.port == peerPort)
                break
            }
        }
    }

    @Test func anAddressTheKernelRefusesIsSaidAndSpoilsNothing() throws {
        let (peer, peerPort) = try listener()
        defer { close(peer) }
        let sending = try DatagramSender.boundSocket(host: "127.0.0.1", port: 0)
        defer { close(sending) }
        let sender = try DatagramSender(duplicating: sending)
        // A broadcast address without SO_BROADCAST: EACCES (what a stranger could announce).
        #expect(sender.send([1, 2, 3], to: try SocketAddress(ipAddress: "255.255.255.255", port: 7400)) == .refused(errno: EACCES))
        // The socket is not spoiled: the next datagram goes.
        #expect(sender.send([4, 5, 6], to: try SocketAddress(ipAddress: "127.0.0.1", port: peerPort)) == .sent)
        #expect(receive(peer)?.0 == [4, 5, 6])
    }

    @Test func aPortInUseIsSaidAsSuch() throws {
        // Another program's socket, bound without SO_REUSEADDR: the port is its own.
        let taken = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(taken) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                try #require(bind(taken, $0, length) == 0)
                try #require(getsockname(taken, $0, &length) == 0)
            }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        #expect(throws: DatagramSenderError.self) { try DatagramSender.boundSocket(host: "127.0.0.1", port: port) }
        do {
            _ = try DatagramSender.boundSocket(host: "127.0.0.1", port: port)
        } catch let error as DatagramSenderError {
            #expect(error.description.contains("Address already in use"))
        }
    }
}
