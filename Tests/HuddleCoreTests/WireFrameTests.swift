import Testing

@testable import HuddleCore

@Suite("Wire framing: length prefix and the frame splitter", .offThePool)
struct WireFrameTests {
    static let messages = WireSamples.messages

    /// All sample messages as one TCP stream.
    static let stream: [UInt8] = messages.flatMap { WireFrame.encode($0) }

    @Test("a frame is the big-endian length of the message followed by the message", arguments: WireSamples.messages)
    func frameLayout(message: WireMessage) {
        let frame = WireFrame.encode(message)
        let body = message.encoded()
        let length = UInt32(body.count)
        #expect(
            Array(frame.prefix(4)) == [
                UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF),
            ])
        #expect(Array(frame.dropFirst(4)) == body)
    }

    /// Feeds `stream` to a fresh splitter in chunks of the given sizes (cycled) and decodes the payloads.
    static func split(_ stream: [UInt8], chunkSizes: (inout SplitMix64) -> Int, seed: UInt64 = 0) throws
        -> [WireMessage]
    {
        var rng = SplitMix64(seed: seed)
        var splitter = FrameSplitter()
        var messages: [WireMessage] = []
        var index = 0
        while index < stream.count {
            let end = min(stream.count, index + chunkSizes(&rng))
            for payload in try splitter.append(stream[index..<end]) {
                messages.append(try WireMessage(decoding: payload))
            }
            index = end
        }
        #expect(splitter.bufferedByteCount == 0)
        return messages
    }

    @Test("the whole stream at once")
    func allAtOnce() throws {
        #expect(try Self.split(Self.stream, chunkSizes: { _ in Int.max / 2 }) == Self.messages)
    }

    @Test("drip-fed one byte at a time")
    func dripFeed() throws {
        #expect(try Self.split(Self.stream, chunkSizes: { _ in 1 }) == Self.messages)
    }

    @Test("random chunk sizes", arguments: [UInt64(1), 2, 3, 4, 5])
    func randomChunks(seed: UInt64) throws {
        let small = try Self.split(Self.stream, chunkSizes: { Int.random(in: 1...16, using: &$0) }, seed: seed)
        #expect(small == Self.messages)
        let large = try Self.split(Self.stream, chunkSizes: { Int.random(in: 1...70_000, using: &$0) }, seed: seed)
        #expect(large == Self.messages)
    }

    @Test("a partial frame stays buffered until it completes")
    func partialFrame() throws {
        let frame = WireFrame.encode(.events([WireSamples.event()]))
        var splitter = FrameSplitter()
        #expect(try splitter.append(frame.prefix(3)).isEmpty)
        #expect(try splitter.append(frame[3..<frame.count - 1]).isEmpty)
        #expect(splitter.bufferedByteCount == frame.count - 1)
        let payloads = try splitter.append(frame.suffix(1) + frame + frame.prefix(5))
        #expect(payloads.count == 2)
        #expect(payloads.allSatisfy { $0 == Array(frame.dropFirst(4)) })
        #expect(splitter.bufferedByteCount == 5)
    }

    @Test("a 4 GB length is rejected at once, and the splitter stays failed")
    func hugeLength() {
        var splitter = FrameSplitter()
        let expected = WireError.frameTooLarge(length: .max, max: WireLimits.maxFrameBytes)
        #expect(throws: expected) { try splitter.append([0xFF, 0xFF, 0xFF, 0xFF, 0x48]) }
        #expect(splitter.bufferedByteCount == 0)
        #expect(throws: expected) { try splitter.append(WireFrame.encode(WireSamples.messages[0])) }
    }

    @Test("the frame length limit is exact")
    func lengthLimit() throws {
        var splitter = FrameSplitter(maxFrameBytes: 100)
        let payload = [UInt8](repeating: 7, count: 100)
        #expect(try splitter.append([0, 0, 0, 100] + payload) == [payload])
        #expect(throws: WireError.frameTooLarge(length: 101, max: 100)) { try splitter.append([0, 0, 0, 101]) }
        var defaultLimit = FrameSplitter()
        let over = UInt32(WireLimits.maxFrameBytes + 1)
        #expect(throws: WireError.frameTooLarge(length: over, max: WireLimits.maxFrameBytes)) {
            try defaultLimit.append([
                UInt8(over >> 24), UInt8(over >> 16 & 0xFF), UInt8(over >> 8 & 0xFF), UInt8(over & 0xFF),
            ])
        }
    }

    @Test("a zero-length frame yields an empty payload, which does not decode")
    func emptyFrame() throws {
        var splitter = FrameSplitter()
        let payloads = try splitter.append([0, 0, 0, 0, 0, 0, 0, 0])
        #expect(payloads == [[], []])
        #expect(wireError(payloads[0]) == .truncated(needed: 2, offset: 0, remaining: 0))
    }

    @Test("a long stream drip-fed in small chunks keeps its buffer small")
    func bufferStaysSmall() throws {
        let frame = WireFrame.encode(.events([WireSamples.event()]))
        var splitter = FrameSplitter()
        var count = 0
        var rng = SplitMix64(seed: 9)
        let stream = Array([[UInt8]](repeating: frame, count: 2_000).joined())
        var index = 0
        while index < stream.count {
            let end = min(stream.count, index + Int.random(in: 1...300, using: &rng))
            count += try splitter.append(stream[index..<end]).count
            #expect(splitter.bufferedByteCount < frame.count)
            index = end
        }
        #expect(count == 2_000)
    }
}
