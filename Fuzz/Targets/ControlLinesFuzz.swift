/// One fuzz input of the `control` target: the bytes as a stream on the control socket, cut into
/// chunks the first byte sizes, with a line limit the second byte sets (small, so that lines
/// over it are common). The splitter must give exactly the lines a plain reading of the whole
/// stream gives, whatever the chunks: each `\n`-terminated line without its `\r`, blank ones
/// skipped, the last one without a newline at the end, and nothing after a line over the limit.
func controlLinesFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let step = max(1, Int(bytes.first ?? 1))
    let limit = bytes.count > 1 ? Int(bytes[1]) : 16
    var splitter = ControlLineSplitter(maximumLength: limit)
    var pieces: [ControlLineSplitter.Piece] = []
    var start = 0
    while start < bytes.count {
        pieces += splitter.append(bytes[start..<min(start + step, bytes.count)])
        start += step
    }
    pieces += splitter.finish()
    precondition(pieces == lines(in: bytes, limit: limit), "the splitter's lines are not the stream's")
    precondition(pieces.firstIndex(of: .tooLong).map { $0 == pieces.count - 1 } ?? true, "a line after tooLong")
    return 0
}

/// The lines of the whole stream, read the plain way.
private func lines(in stream: [UInt8], limit: Int) -> [ControlLineSplitter.Piece] {
    var pieces: [ControlLineSplitter.Piece] = []
    let segments = stream.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    for segment in segments {
        guard segment.count <= limit else { return pieces + [.tooLong] }
        var line = Array(segment)
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        if line.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }) { pieces.append(.line(line)) }
    }
    return pieces
}
