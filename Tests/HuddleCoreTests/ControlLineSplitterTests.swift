import Testing

@testable import HuddleCore

@Suite(.offThePool) struct ControlLineSplitterTests {
    typealias Piece = ControlLineSplitter.Piece

    func line(_ text: String) -> Piece { .line(Array(text.utf8)) }

    @Test func linesComeWholeWhateverTheChunks() {
        let stream = Array("{\"status\":{}}\n\n  \t\r\n{\"send\":{}}\r\n{\"history\":{}}".utf8)
        for step in [1, 2, 3, 7, stream.count] {
            var splitter = ControlLineSplitter(maximumLength: 64)
            var pieces: [Piece] = []
            for start in stride(from: 0, to: stream.count, by: step) {
                pieces += splitter.append(stream[start..<min(start + step, stream.count)])
            }
            #expect(pieces == [line("{\"status\":{}}"), line("{\"send\":{}}")], "step \(step)")
            #expect(splitter.finish() == [line("{\"history\":{}}")], "step \(step)")
        }
    }

    @Test func aLineOverTheLimitEndsTheStreamAtOnce() {
        var splitter = ControlLineSplitter(maximumLength: 4)
        #expect(splitter.append(Array("abcd\nabcd".utf8)) == [line("abcd")])
        // The fifth byte without a newline is one too many: said before the line ends.
        #expect(splitter.append(Array("e".utf8)) == [.tooLong])
        #expect(splitter.append(Array("\nok\n".utf8)) == [])
        #expect(splitter.finish() == [])
    }
}
