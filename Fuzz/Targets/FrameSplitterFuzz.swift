/// One fuzz input of the `frames` target: the bytes as a TCP stream of the sync port, cut into
/// chunks the first byte sizes. The splitter gives the frames the stream holds, read straight
/// off its length prefixes (all of them, or those before the one whose length is over the
/// limit), whatever the chunks, and what decodes of them is canonical.
func frameSplitterFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var splitter = FrameSplitter()
    let step = max(1, Int(bytes.first ?? 1))
    var split: [[UInt8]] = []
    var failed = false
    var start = 0
    while start < bytes.count {
        do throws(WireError) {
            split += try splitter.append(bytes[start..<min(start + step, bytes.count)])
        } catch {
            failed = true
            break
        }
        start += step
    }
    let held = frames(in: bytes)
    precondition(failed == held.tooLarge, "the splitter failed on a stream with no frame too large, or did not fail")
    precondition(
        failed ? held.frames.starts(with: split) : split == held.frames, "the splitter's frames are not the stream's")
    for frame in split {
        if let message = try? WireMessage(decoding: frame) {
            precondition(message.encoded() == frame, "a frame decoded to a message it does not re-encode to")
        }
    }
    return 0
}

/// The frames `stream` holds, read straight off its length prefixes, and whether a length over
/// ``WireLimits/maxFrameBytes`` ends them.
private func frames(in stream: [UInt8]) -> (frames: [[UInt8]], tooLarge: Bool) {
    var frames: [[UInt8]] = []
    var at = 0
    while stream.count - at >= 4 {
        let length = Int(stream[at..<at + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        guard length <= WireLimits.maxFrameBytes else { return (frames, true) }
        guard at + 4 + length <= stream.count else { break }
        frames.append(Array(stream[at + 4..<at + 4 + length]))
        at += 4 + length
    }
    return (frames, false)
}
