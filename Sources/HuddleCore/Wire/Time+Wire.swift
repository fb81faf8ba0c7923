/// The wire form of times, the one place that knows their units there: a probe's send time is
/// the sender's monotonic clock in µs (so a loopback round trip of ~50 µs is measurable), an
/// event's moment is the wall clock in ms since the epoch, as docs/PROTOCOL.md has them.
extension ByteWriter {
    /// A monotonic moment, as `i64` µs.
    mutating func write(_ moment: MonotonicTime) {
        write(moment.microseconds)
    }
}

extension ByteReader {
    /// A monotonic moment, from `i64` µs (every value is one).
    mutating func readMonotonicTime() throws(WireError) -> MonotonicTime {
        MonotonicTime(microseconds: try readInt64())
    }
}
