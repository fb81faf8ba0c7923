import Foundation

/// Lines of standard input as an async sequence, for pipes and for a terminal used line by line
/// (`--plain`). A dedicated thread blocks in `read(2)`, so the rest of the node never waits on
/// input; the stream ends at end of input. The lines one read brings come together
/// (``ConsoleInput/lines(_:at:)``), with the wall-clock time of that read: a person's line is a
/// read of its own, a pipe's burst is many. A line longer than ``maximumLineBytes`` is skipped up
/// to its newline and reported, so input without newlines (a pipe from /dev/zero) cannot make
/// the node buffer without bound.
enum StandardInputLines {
    /// Far beyond any chat message (the wire allows 4,096 bytes of text).
    static let maximumLineBytes = 64 * 1024

    static func stream(fileDescriptor: Int32 = STDIN_FILENO) -> AsyncStream<ConsoleInput> {
        let (stream, continuation) = AsyncStream.makeStream(of: ConsoleInput.self)
        let clock = SystemClock()
        let reader = Thread {
            var line: [UInt8] = []
            var skipping = 0  // bytes dropped of an over-long line, 0 when not skipping
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fileDescriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                let readAt = clock.wall()
                var lines: [String] = []
                for byte in buffer[..<count] {
                    if byte == UInt8(ascii: "\n") {
                        if skipping > 0 {
                            if !lines.isEmpty { continuation.yield(.lines(lines, at: readAt)) }
                            lines = []
                            continuation.yield(.tooLong(bytes: skipping))
                        } else {
                            lines.append(String(decoding: line, as: UTF8.self))
                        }
                        line.removeAll(keepingCapacity: true)
                        skipping = 0
                    } else if skipping > 0 {
                        skipping += 1
                    } else if line.count >= maximumLineBytes {
                        skipping = line.count + 1
                        line.removeAll()
                    } else {
                        line.append(byte)
                    }
                }
                if !lines.isEmpty { continuation.yield(.lines(lines, at: readAt)) }
            }
            if skipping > 0 {
                continuation.yield(.tooLong(bytes: skipping))
            } else if !line.isEmpty {
                continuation.yield(.line(String(decoding: line, as: UTF8.self), at: clock.wall()))
            }
            continuation.finish()
        }
        reader.name = "huddle-stdin"
        reader.start()
        return stream
    }
}
