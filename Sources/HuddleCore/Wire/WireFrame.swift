/// TCP framing: each message is preceded by its length, so a byte stream can be cut back into
/// messages.
///
///     +------------------+------+------+---------+------+=====================+
///     | length: UInt32BE | 0x48 | 0x44 | version | kind | payload             |
///     +------------------+------+------+---------+------+=====================+
///                        |<--------------------- length bytes --------------->|
///
/// `length` counts the envelope and payload, not itself, and is at most
/// ``WireLimits/maxFrameBytes``. A stream of frames is cut back into payloads by ``FrameSplitter``.
///
/// ```swift
/// try await outbound.write(WireFrame.encode(.syncRequest(request)))
/// ```
public enum WireFrame {
    /// Size of the length prefix.
    public static let headerByteCount = 4

    /// The message's envelope and payload, preceded by their length as a big-endian `UInt32`.
    ///
    /// A message over ``WireLimits/maxFrameBytes`` is still encoded, and every receiver rejects it:
    /// keep sync responses under the limit with ``WireMessage/encodedByteCount``.
    public static func encode(_ message: WireMessage) -> [UInt8] {
        var writer = ByteWriter(capacity: headerByteCount + message.encodedByteCount)
        writer.write(UInt32(0))
        message.encode(into: &writer)
        writer.patch(UInt32(clamping: writer.count - headerByteCount), at: 0)
        return writer.bytes
    }
}

/// Cuts a TCP byte stream into frame payloads (see ``WireFrame``), whatever chunks it arrives in.
///
/// Feed it every chunk read from the connection; it returns the payloads completed so far, each
/// ready for ``WireMessage/init(decoding:)``. A frame header announcing more than the maximum
/// throws ``WireError/frameTooLarge(length:max:)`` before anything is buffered for it, and every
/// later call throws the same error: the stream cannot be resynchronised, so close it. The
/// splitter buffers at most one incomplete frame plus the last chunk.
///
/// ```swift
/// var splitter = FrameSplitter()
/// for try await chunk in inbound {
///     for payload in try splitter.append(chunk) {
///         handle(try WireMessage(decoding: payload))
///     }
/// }
/// if splitter.bufferedByteCount > 0 { /* the peer closed mid-frame */ }
/// ```
public struct FrameSplitter: Sendable {
    /// The largest frame length accepted.
    public let maxFrameBytes: Int

    private var buffer: [UInt8] = []
    /// Index in `buffer` of the first byte not yet returned.
    private var start = 0
    private var failure: WireError?

    /// A splitter accepting frames of at most `maxFrameBytes` (envelope + payload).
    public init(maxFrameBytes: Int = WireLimits.maxFrameBytes) {
        self.maxFrameBytes = maxFrameBytes
    }

    /// Number of bytes received but not yet returned as part of a complete frame.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Adds a chunk of the stream and returns the payloads of every frame it completes, in order.
    public mutating func append(_ chunk: some Collection<UInt8>) throws(WireError) -> [[UInt8]] {
        if let failure { throw failure }
        buffer.append(contentsOf: chunk)
        var payloads: [[UInt8]] = []
        while buffer.count - start >= WireFrame.headerByteCount {
            var length: UInt32 = 0
            for byte in buffer[start..<start + WireFrame.headerByteCount] {
                length = length << 8 | UInt32(byte)
            }
            guard length <= maxFrameBytes else {
                let error = WireError.frameTooLarge(length: length, max: maxFrameBytes)
                failure = error
                buffer = []
                start = 0
                throw error
            }
            let payloadStart = start + WireFrame.headerByteCount
            let payloadEnd = payloadStart + Int(length)
            guard payloadEnd <= buffer.count else { break }
            payloads.append(Array(buffer[payloadStart..<payloadEnd]))
            start = payloadEnd
        }
        compact()
        return payloads
    }

    /// Drops returned bytes once they make up more than half the buffer (amortised O(1) per byte).
    private mutating func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
            start = 0
        } else if start > 4096, start * 2 > buffer.count {
            buffer.removeSubrange(0..<start)
            start = 0
        }
    }
}
