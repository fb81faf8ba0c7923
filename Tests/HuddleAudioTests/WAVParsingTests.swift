import HuddleAudio
import Testing

/// WAV bytes to samples: what is read, and what is refused in words.
@Suite struct WAVParsingTests {
    /// A RIFF/WAVE file with one fmt chunk and one data chunk, and `extra` chunks between.
    static func wav(format: UInt16 = 1, channels: UInt16 = 1, rate: UInt32 = 16_000, bits: UInt16 = 16,
                    samples: [Int16] = [0, 1000, -1000, 32767, -32768], extra: [UInt8] = []) -> [UInt8] {
        func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        func le16(_ value: UInt16) -> [UInt8] { [UInt8(truncatingIfNeeded: value), UInt8(value >> 8)] }
        let align = channels * bits / 8
        let data = samples.flatMap { le16(UInt16(bitPattern: $0)) }
        var body = Array("WAVE".utf8)
        body += Array("fmt ".utf8) + le32(16) + le16(format) + le16(channels) + le32(rate)
            + le32(rate * UInt32(align)) + le16(align) + le16(bits)
        body += extra
        body += Array("data".utf8) + le32(UInt32(data.count)) + data
        return Array("RIFF".utf8) + le32(UInt32(body.count)) + body
    }

    @Test func readsMonoSixteenBit() throws {
        let audio = try PCMAudio(wav: Self.wav())
        #expect(audio.sampleRate == 16_000)
        let expected: [Float] = [0, 1000, -1000, 32767, -32768].map { $0 / 32768 }
        #expect(audio.samples == expected)
    }

    @Test func mixesStereoToMono() throws {
        let audio = try PCMAudio(wav: Self.wav(channels: 2, samples: [1000, 3000, -2000, 2000]))
        let expected: [Float] = [2000.0 / 32768, 0]
        #expect(audio.samples == expected)
    }

    @Test func skipsUnknownChunksIncludingAnOddOne() throws {
        let list = Array("LIST".utf8) + [3, 0, 0, 0] + [1, 2, 3] + [0]  // odd size, padded
        let audio = try PCMAudio(wav: Self.wav(samples: [16384], extra: list))
        #expect(audio.samples == [0.5])
    }

    @Test func readsADataChunkThatClaimsMoreThanThereIs() throws {
        var bytes = Self.wav(samples: [100, 200, 300])
        bytes.replaceSubrange(bytes.count - 10..<bytes.count - 6, with: [0xFF, 0xFF, 0xFF, 0xFF])  // a stream's size
        #expect(try PCMAudio(wav: bytes).samples.count == 3)
    }

    @Test func roundTripsItsOwnBytes() throws {
        let audio = PCMAudio(sampleRate: 8_000, samples: [0, 0.25, -0.5])
        let back = try PCMAudio(wav: audio.wavBytes())
        #expect(back.sampleRate == 8_000)
        #expect(zip(back.samples, audio.samples).allSatisfy { abs($0 - $1) < 1e-4 })
    }

    static let refusals: [(bytes: [UInt8], says: String)] = [
        ([], "not a WAV file"),
        (Array("RIFF\u{0}\u{0}\u{0}\u{0}AVI LIST".utf8), "not a WAV file"),
        (Array("ID3\u{3}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}".utf8), "not a WAV file"),
        (Array(wav().prefix(30)), "truncated fmt chunk"),
        (Array(wav().prefix(36)), "without a data chunk"),
        (wav(format: 3, bits: 32), "32-bit float"),
        (wav(format: 7, bits: 8), "a-law/µ-law"),
        (wav(bits: 24), "24-bit samples"),
        (wav(channels: 6), "6 channels"),
        (wav(rate: 96_000), "96000 Hz"),
        (wav(rate: 4_000), "4000 Hz"),
    ]

    @Test(arguments: 0..<refusals.count)
    func refusesWhatItCannotRead(_ index: Int) {
        let (bytes, says) = Self.refusals[index]
        #expect {
            _ = try PCMAudio(wav: bytes)
        } throws: { error in
            (error as? WAVError)?.description.contains(says) == true
        }
    }

    @Test func refusesEveryTruncationWithoutTrapping() {
        let bytes = Self.wav()
        for length in 0..<44 {
            #expect(throws: WAVError.self) { try PCMAudio(wav: Array(bytes.prefix(length))) }
        }
    }
}
