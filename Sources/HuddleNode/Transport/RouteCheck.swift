import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether the kernel would send a datagram to an address, asked before NIO is given it: NIO
/// closes a UDP channel on a send error it cannot recover from (it recovers from EHOSTUNREACH and
/// EMSGSIZE only), and then the node stops. An address with no route here (ENETUNREACH: a friend
/// announced from another network, this laptop's Wi-Fi gone) or a broadcast address (EACCES)
/// must not stop it: any device on the network can announce one.
///
/// The question is `connect(2)` on a datagram socket of its own, which routes the address and
/// sends nothing: one system call a datagram, under a lock (the node's actor and its goodbye on
/// SIGTERM both send). What it cannot see: a local firewall's rule on outgoing packets (EPERM
/// at the send itself), and a route lost between the question and the send.
///
/// ```swift
/// let routes = RouteCheck()
/// routes.refusal(to: try SocketAddress(ipAddress: "198.51.100.13", port: 7400))  // ENETUNREACH
/// ```
final class RouteCheck: Sendable {
    private let socket: Mutex<Int32>

    init() {
        #if canImport(Darwin)
        socket = Mutex(Darwin.socket(AF_INET, SOCK_DGRAM, 0))
        #else
        socket = Mutex(Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0))
        #endif
    }

    deinit {
        socket.withLock { fd in if fd >= 0 { _ = close(fd) } }
    }

    /// `nil` when the kernel routes `address` as a datagram would go; otherwise its errno. When no
    /// socket could be made to ask with, `nil`: the send goes ahead, as it did before.
    func refusal(to address: SocketAddress) -> Int32? {
        socket.withLock { fd -> Int32? in
            guard fd >= 0 else { return nil }
            let result = address.withSockAddr { pointer, size in connect(fd, pointer, socklen_t(size)) }
            return result == 0 ? nil : errno
        }
    }
}
