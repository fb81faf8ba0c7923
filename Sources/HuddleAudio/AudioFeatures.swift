/// What a node keeps, and may share, of the sound it heard: one 32-bit sub-fingerprint every
/// 10 ms and one bit saying whether the frame was loud enough to count, timestamped on the
/// node's own clock. No samples, no levels, no spectrum; but enough of how the spectrum moves to
/// tell spoken words apart: docs/AUDIO.md measures what it reveals.
///
/// Bit m of a sub-fingerprint is the sign of how the log-energy step between mel bands m and
/// m+1 changed since the previous frame (Haitsma–Kalker's bits, on log energies so that a fixed
/// EQ, a gain or a speaker's band cancels out). Frame i stands for the sound around
/// `start + 10·i` ms.
///
/// ```swift
/// let features = AudioFeatureExtractor.features(of: audio, start: 0)
/// features.encoded().count      // 4·frames + frames/8 + 16: about 413 bytes a second
/// ```
public struct AudioFeatures: Sendable, Equatable {
    /// Milliseconds between frames.
    public static let hopMilliseconds: Int64 = 10
    /// Frames a second.
    public static let framesPerSecond = 100
    /// Bytes a second of sound on the wire (``encoded()``): 4 per frame and a bit of loudness.
    public static let bytesPerSecond = 4 * framesPerSecond + framesPerSecond / 8

    /// The node-clock time (ms) of frame 0.
    public var start: Int64
    /// One sub-fingerprint per frame.
    public var bits: [UInt32]
    /// Whether each frame (and the one before it) was louder than the floor; quiet frames are
    /// not compared.
    public var loud: [Bool]

    public init(start: Int64, bits: [UInt32], loud: [Bool]) {
        precondition(bits.count == loud.count, "one loudness flag per frame")
        self.start = start
        self.bits = bits
        self.loud = loud
    }

    public var count: Int { bits.count }
    /// Seconds covered.
    public var duration: Double { Double(bits.count) / Double(Self.framesPerSecond) }
    /// Seconds of loud frames.
    public var loudDuration: Double { Double(loud.lazy.filter { $0 }.count) / Double(Self.framesPerSecond) }

    /// The frames from `from` seconds after the start, `length` seconds of them (as far as
    /// there are), with their start time moved to match.
    public func slice(from: Double, length: Double) -> AudioFeatures {
        let first = max(0, min(count, Int((from * Double(Self.framesPerSecond)).rounded())))
        let last = max(first, min(count, first + Int((length * Double(Self.framesPerSecond)).rounded())))
        return AudioFeatures(start: start + Int64(first) * Self.hopMilliseconds, bits: Array(bits[first..<last]),
                             loud: Array(loud[first..<last]))
    }

    /// The wire form: start (i64 LE), frame count (u32 LE), the sub-fingerprints (u32 LE each),
    /// then the loudness bits packed eight a byte, first frame in the lowest bit.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(12 + 4 * count + (count + 7) / 8)
        for shift in stride(from: 0, to: 64, by: 8) { out.append(UInt8(truncatingIfNeeded: start >> shift)) }
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: count >> shift)) }
        for value in bits {
            for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: value >> shift)) }
        }
        var byte: UInt8 = 0
        for (index, isLoud) in loud.enumerated() {
            if isLoud { byte |= 1 << UInt8(index % 8) }
            if index % 8 == 7 {
                out.append(byte)
                byte = 0
            }
        }
        if count % 8 != 0 { out.append(byte) }
        return out
    }

    /// Reads ``encoded()``'s form back; nil if the bytes are not exactly that.
    public init?(encoded bytes: [UInt8]) {
        guard bytes.count >= 12 else { return nil }
        var start: Int64 = 0
        for i in 0..<8 { start |= Int64(bytes[i]) << (8 * i) }
        var count = 0
        for i in 0..<4 { count |= Int(bytes[8 + i]) << (8 * i) }
        guard bytes.count == 12 + 4 * count + (count + 7) / 8 else { return nil }
        var bits = [UInt32](repeating: 0, count: count)
        for frame in 0..<count {
            let at = 12 + 4 * frame
            bits[frame] = UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16
                | UInt32(bytes[at + 3]) << 24
        }
        let flags = 12 + 4 * count
        let loud = (0..<count).map { bytes[flags + $0 / 8] & (1 << UInt8($0 % 8)) != 0 }
        self.init(start: start, bits: bits, loud: loud)
    }
}
