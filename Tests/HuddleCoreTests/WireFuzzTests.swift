import Testing

@testable import HuddleCore

/// Random and mutated input: the decoder never traps, and whatever it accepts is canonical
/// (re-encodes to exactly the bytes it was decoded from).
@Suite("Wire codec: random and mutated input")
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
