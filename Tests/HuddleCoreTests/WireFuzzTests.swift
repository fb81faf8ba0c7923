import Testing

@testable import HuddleCore

/// Random and mutated input: the decoder never traps, and whatever it accepts is canonical
/// (re-encodes to exactly the bytes it was decoded from).
@Suite("Wire codec: random and mutated input", .offThePool)
struct WireFuzzTests {
    /// Decodes `bytes`; if that works, checks the result re-encodes to the same bytes.
    /// Returns whether it decoded, and records the first few non-canonical inputs in `failures`.
    @discardableResult
    static func checkCanonical(_ bytes: [UInt8], _ failures: inout [[UInt8]]) -> Bool {
        guard let message = try? WireMessage(decoding: bytes) else { return false }
        if message.encoded() != bytes, failures.count < 5 { failures.append(bytes) }
        return true
    }

    @Test("random messages round-trip, and their sizes are exact", arguments: [UInt64(1), 2, 3, 4])
    func randomRoundTrips(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        for _ in 0..<500 {
            let message = WireSamples.randomMessage(using: &rng)
            let bytes = message.encoded()
            #expect(bytes.count == message.encodedByteCount)
            let decoded = try WireMessage(decoding: bytes)
            #expect(decoded == message)
            #expect(decoded.encoded() == bytes)
        }
    }

    @Test("every proper prefix of random messages throws", arguments: [UInt64(11), 12])
    func randomTruncations(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var accepted = 0
        for _ in 0..<100 {
            let bytes = WireSamples.randomMessage(using: &rng).encoded()
            for length in 0..<bytes.count where wireError(bytes[..<length]) == nil {
                accepted += 1
            }
        }
        #expect(accepted == 0)
    }

    @Test("random garbage never traps", arguments: [UInt64(21), 22, 23])
    func garbage(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var failures: [[UInt8]] = []
        for _ in 0..<5_000 {
            let count = Int.random(in: 0...300, using: &rng)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            Self.checkCanonical(bytes, &failures)
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test("garbage behind a valid envelope never traps", arguments: WireMessage.Kind.allCases)
    func garbagePayload(kind: WireMessage.Kind) {
        var rng = SplitMix64(seed: 0x6A7B + UInt64(kind.rawValue))
        var failures: [[UInt8]] = []
        for _ in 0..<5_000 {
            let count = Int.random(in: 0...200, using: &rng)
            // Small values make short counts and lengths, so the decoder gets further.
            let payload = (0..<count).map { _ in
                Bool.random(using: &rng)
                    ? UInt8.random(in: 0...3, using: &rng) : UInt8.random(in: 0...255, using: &rng)
            }
            Self.checkCanonical([0x48, 0x44, WireProtocol.version, kind.rawValue] + payload, &failures)
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    /// Applies one to three random mutations: flip a bit, replace a byte, insert or delete a byte.
    static func mutate(_ bytes: [UInt8], using rng: inout SplitMix64) -> [UInt8] {
        var mutated = bytes
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            guard !mutated.isEmpty else { break }
            let index = Int.random(in: 0..<mutated.count, using: &rng)
            switch Int.random(in: 0..<8, using: &rng) {
            case 0..<4: mutated[index] ^= 1 << UInt8.random(in: 0...7, using: &rng)
            case 4, 5: mutated[index] = UInt8.random(in: 0...255, using: &rng)
            case 6: mutated.insert(UInt8.random(in: 0...255, using: &rng), at: index)
            default: mutated.remove(at: index)
            }
        }
        return mutated
    }

    @Test("mutated valid messages either throw or re-encode to the mutated bytes", arguments: [UInt64(31), 32])
    func mutations(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var failures: [[UInt8]] = []
        var decoded = 0
        var total = 0
        let samples =
            WireSamples.smallMessages.map { $0.encoded() }
            + (0..<100).map { _ in WireSamples.randomMessage(using: &rng).encoded() }
        for bytes in samples {
            for _ in 0..<200 {
                let mutated = Self.mutate(bytes, using: &rng)
                total += 1
                if Self.checkCanonical(mutated, &failures) { decoded += 1 }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        // Sanity: some mutations (in free-form fields like seq numbers and signatures) decode.
        #expect(decoded > 0 && decoded < total)
    }

    /// The frames `stream` holds, read straight off its length prefixes: the reference the
    /// splitter is checked against. `error` is set if a length over `maxFrameBytes` ends it;
    /// `consumed` is the bytes the frames take, prefixes included.
    static func frames(in stream: [UInt8], maxFrameBytes: Int = WireLimits.maxFrameBytes)
        -> (frames: [[UInt8]], error: WireError?, consumed: Int)
    {
        var frames: [[UInt8]] = []
        var at = 0
        while stream.count - at >= 4 {
            let length = stream[at..<at + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard length <= maxFrameBytes else {
                return (frames, .frameTooLarge(length: length, max: maxFrameBytes), at)
            }
            guard at + 4 + Int(length) <= stream.count else { break }
            frames.append(Array(stream[at + 4..<at + 4 + Int(length)]))
            at += 4 + Int(length)
        }
        return (frames, nil, at)
    }

    @Test("a mutated TCP stream, cut into random chunks, splits into the frames it holds; each is checked",
          arguments: [UInt64(41), 42, 43])
    func mutatedStreams(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var failures: [[UInt8]] = []
        var decoded = 0, failed = 0
        for _ in 0..<300 {
            let messages = (0..<Int.random(in: 1...4, using: &rng)).map { _ in WireSamples.randomMessage(using: &rng) }
            let stream = Self.mutate(messages.flatMap { WireFrame.encode($0) }, using: &rng)
            let expected = Self.frames(in: stream)
            var splitter = FrameSplitter()
            var frames: [[UInt8]] = []
            var thrown: WireError?
            var index = 0
            while index < stream.count {
                let end = min(stream.count, index + Int.random(in: 1...64, using: &rng))
                do throws(WireError) {
                    frames += try splitter.append(stream[index..<end])
                } catch {
                    thrown = error
                    break
                }
                index = end
            }
            #expect(thrown == expected.error)
            if thrown == nil {
                // Every frame, in order, and what is left is the incomplete last one.
                #expect(frames == expected.frames, "\(stream)")
                #expect(splitter.bufferedByteCount == stream.count - expected.consumed)
            } else {
                // The stream cannot be resynchronised: frames of the chunk with the bad length go
                // with the connection, the ones before it were right.
                failed += 1
                #expect(expected.frames.starts(with: frames), "\(stream)")
            }
            // What decodes of them re-encodes to exactly the frame (checkCanonical).
            for frame in frames where Self.checkCanonical(frame, &failures) { decoded += 1 }
        }
        #expect(failures.isEmpty, "\(failures)")
        // Sanity: the mutations leave many frames that decode, and break some streams for good.
        #expect(decoded > 300 && failed > 0)
    }

    @Test("every single-bit flip of a sample either throws or re-encodes to the mutated bytes")
    func allBitFlips() {
        var failures: [[UInt8]] = []
        for message in WireSamples.smallMessages where message.encodedByteCount <= 1_500 {
            let bytes = message.encoded()
            for index in bytes.indices {
                for bit in 0..<8 {
                    var mutated = bytes
                    mutated[index] ^= 1 << UInt8(bit)
                    Self.checkCanonical(mutated, &failures)
                }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}
