import Foundation

/// Lines of standard input as an async sequence. A dedicated thread blocks in `readLine`, so
/// the rest of the node never waits on the terminal; the stream ends at end of input.
enum StandardInputLines {
    static func stream() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let reader = Thread {
            while let line = readLine(strippingNewline: true) {
                continuation.yield(line)
            }
            continuation.finish()
        }
        reader.name = "huddle-stdin"
        reader.start()
        return stream
    }
}
