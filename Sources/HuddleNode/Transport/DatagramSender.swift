import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Sends datagrams from the node's UDP socket with `sendto(2)`, on the caller's thread.
///
/// Handing a datagram to the NIO channel from the node's actor wakes the channel's event loop to
/// send it: one more hand-over between threads on every line's way, and on this 2-core VM waking
/// a thread on the other core costs 100–200 µs (BENCHMARKS part 3, "A line kept by a journal").
/// `sendto` on the same socket sends it at once. It keeps a descriptor of its own (a `dup` of the
/// one NIO reads from), so it never sends on a number NIO closed and the system gave to another
/// file. A send the socket's buffer cannot take now (`EAGAIN`, `ENOBUFS`) is left to the channel,
/// which queues it until the socket can take it.
///
/// ```swift
/// let sender = try DatagramSender(duplicating: fd)
/// sender.send(bytes, to: try SocketAddress(ipAddress: "127.0.0.1", port: 7400))  // .sent
/// ```
final class DatagramSender: Sendable {
    private let descriptor: Int32

    /// A sender on the socket `descriptor` refers to; `descriptor` stays the caller's.
    init(duplicating descriptor: Int32) throws(DatagramSenderError) {
        let own = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard own >= 0 else { throw DatagramSenderError(errno: errno) }
        self.descriptor = own
    }

    deinit { close(descriptor) }

    /// What became of one datagram.
    enum Outcome: Equatable {
        case sent
        /// The socket's buffer is full now: the channel should queue it.
        case busy
        /// The kernel will not send it there (`ENETUNREACH`, `EACCES`, `EPERM`, `EMSGSIZE`, …).
        case refused(errno: Int32)
    }

    /// Sends `bytes` to `address` in one datagram, without blocking.
    func send(_ bytes: [UInt8], to address: SocketAddress) -> Outcome {
        while true {
            let result = bytes.withUnsafeBytes { buffer in
                address.withSockAddr { pointer, size in
                    sendto(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT), pointer, socklen_t(size))
                }
            }
            if result >= 0 { return .sent }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK, ENOBUFS: return .busy
            case let error: return .refused(errno: error)
            }
        }
    }
}

/// A datagram sender could not be made.
struct DatagramSenderError: Error, CustomStringConvertible {
    let errno: Int32
    var description: String { "\(String(cString: strerror(errno))) (errno: \(errno))" }
}

extension DatagramSender {
    /// A UDP socket bound to `host`:`port` (0: any free port), made here rather than by NIO so
    /// that the node can send from it (``DatagramSender``) while NIO reads from it
    /// (`DatagramBootstrap.withBoundSocket`). `SO_REUSEADDR` as NIO's bootstrap set it.
    static func boundSocket(host: String, port: Int) throws -> Int32 {
        let address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        #if canImport(Darwin)
        let descriptor = socket(address.protocol.rawValue, SOCK_DGRAM, 0)
        #else
        let descriptor = socket(address.protocol.rawValue, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #endif
        guard descriptor >= 0 else { throw DatagramSenderError(errno: errno) }
        var one: Int32 = 1
        let bound =
            setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) == 0
            && address.withSockAddr { pointer, size in bind(descriptor, pointer, socklen_t(size)) } == 0
        guard bound else {
            let error = DatagramSenderError(errno: errno)
            close(descriptor)
            throw error
        }
        return descriptor
    }
}
