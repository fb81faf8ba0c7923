/// Sound as the matcher takes it: mono samples in [-1, 1] at one sample rate.
///
/// A stereo file is mixed down to mono (the mean of its two channels). Parse a WAV file's bytes
/// with ``init(wav:)``; reading the file is the caller's business.
///
/// ```swift
/// let audio = try PCMAudio(wav: Array(try Data(contentsOf: url)))
/// audio.sampleRate      // 44100
/// audio.duration        // 62.5 (seconds)
/// ```
public struct PCMAudio: Sendable, Equatable {
    /// Samples a second: 8,000 to 48,000.
    public var sampleRate: Int
    /// Mono samples, full scale ±1.
    public var samples: [Float]

    public init(sampleRate: Int, samples: [Float]) {
        self.sampleRate = sampleRate
        self.samples = samples
    }

    /// Seconds of sound.
    public var duration: Double { Double(samples.count) / Double(sampleRate) }

    /// The rates a WAV file may have: what telephones to studios record.
    public static let supportedRates = 8_000...48_000
}

/// Why bytes are not a WAV file the matcher can read. The description is one sentence for a
/// person ("not a WAV file: it does not start with RIFF…WAVE").
public struct WAVError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String

    init(_ description: String) { self.description = description }
}

extension PCMAudio {
    /// Parses a RIFF/WAVE file: 16-bit PCM, mono or stereo, 8–48 kHz (WAVE_FORMAT_PCM, or
    /// WAVE_FORMAT_EXTENSIBLE whose subformat is PCM). Anything else is refused with a
    /// ``WAVError`` that says what the file is instead. Unknown chunks (LIST, fact, …) are
    /// skipped; a data chunk whose size says more than the file holds (a recorder that was
    /// stopped, or a stream's 0xFFFFFFFF) is read as far as it goes.
    ///
    /// ```
    ///  0  "RIFF" size:u32 "WAVE"
    /// 12  "fmt " 16+:u32  format:u16 channels:u16 rate:u32 byteRate:u32 align:u16 bits:u16 [ext]
    ///  …  "data" size:u32 samples (little-endian i16, channels interleaved)
    /// ```
    public init(wav bytes: [UInt8]) throws(WAVError) {
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        func tag(_ at: Int) -> String { String(decoding: bytes[at..<at + 4], as: UTF8.self) }

        guard bytes.count >= 12, tag(0) == "RIFF", tag(8) == "WAVE" else {
            throw WAVError("not a WAV file: it does not start with RIFF…WAVE")
        }
        var format: (code: Int, channels: Int, rate: Int, bits: Int, align: Int)?
        var data: Range<Int>?
        var at = 12
        while at + 8 <= bytes.count, data == nil {
            let id = tag(at)
            let size = u32(at + 4)
            let body = at + 8
            switch id {
            case "fmt ":
                guard size >= 16, body + 16 <= bytes.count else { throw WAVError("a WAV file with a truncated fmt chunk") }
                var code = u16(body)
                if code == 0xFFFE, size >= 40, body + 40 <= bytes.count {
                    code = u16(body + 24)  // WAVE_FORMAT_EXTENSIBLE: the subformat GUID starts with the code
                }
                format = (code, u16(body + 2), u32(body + 4), u16(body + 14), u16(body + 12))
            case "data":
                data = body..<min(bytes.count, body + size)
            default:
                break
            }
            at = body + size + (size & 1)  // chunks are padded to an even length
        }
        guard let format else { throw WAVError("a WAV file without a fmt chunk") }
        guard format.code == 1 else {
            let name = format.code == 3 ? "32-bit float" : format.code == 6 || format.code == 7 ? "a-law/µ-law" : "format \(format.code)"
            throw WAVError("a WAV file in \(name): only 16-bit PCM can be read (convert it: sox IN.wav -b 16 OUT.wav)")
        }
        guard format.bits == 16 else {
            throw WAVError("a WAV file of \(format.bits)-bit samples: only 16-bit PCM can be read (sox IN.wav -b 16 OUT.wav)")
        }
        guard format.channels == 1 || format.channels == 2 else {
            throw WAVError("a WAV file with \(format.channels) channels: only mono or stereo can be read")
        }
        guard Self.supportedRates.contains(format.rate) else {
            throw WAVError("a WAV file at \(format.rate) Hz: only 8,000 to 48,000 Hz can be read")
        }
        guard format.align == 2 * format.channels else {
            throw WAVError("a WAV file whose block align (\(format.align)) does not fit 16-bit samples")
        }
        guard let data else { throw WAVError("a WAV file without a data chunk") }
        let frames = data.count / format.align
        var samples = [Float](repeating: 0, count: frames)
        let scale: Float = 1.0 / 32768
        bytes.withUnsafeBufferPointer { raw in
            var at = data.lowerBound
            for i in 0..<frames {
                let left = Int16(bitPattern: UInt16(raw[at]) | UInt16(raw[at + 1]) << 8)
                if format.channels == 1 {
                    samples[i] = Float(left) * scale
                } else {
                    let right = Int16(bitPattern: UInt16(raw[at + 2]) | UInt16(raw[at + 3]) << 8)
                    samples[i] = (Float(left) + Float(right)) * (scale / 2)
                }
                at += format.align
            }
        }
        self.init(sampleRate: format.rate, samples: samples)
    }

    /// The bytes of a 16-bit mono PCM WAV file of these samples (clipped to ±1): for tests, and
    /// for writing a file another tool reads.
    public func wavBytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(44 + 2 * samples.count)
        func put32(_ value: Int) { for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: value >> shift)) } }
        func put16(_ value: Int) { out.append(UInt8(truncatingIfNeeded: value)); out.append(UInt8(truncatingIfNeeded: value >> 8)) }
        out += Array("RIFF".utf8); put32(36 + 2 * samples.count); out += Array("WAVE".utf8)
        out += Array("fmt ".utf8); put32(16); put16(1); put16(1); put32(sampleRate); put32(2 * sampleRate); put16(2); put16(16)
        out += Array("data".utf8); put32(2 * samples.count)
        for sample in samples {
            put16(Int((max(-1, min(1, sample)) * 32767).rounded()))
        }
        return out
    }
}
