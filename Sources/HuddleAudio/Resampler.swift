/// Converts a stream of samples from one rate down to a lower (or the same) rate, a block at a
/// time, as a microphone delivers them: windowed-sinc interpolation at the exact fractional
/// position of every output sample, with a low-pass below the output's Nyquist frequency.
///
/// Output sample n is the input's value at time n / outputRate, whatever the input rate: so
/// sound heard at 44.1 kHz and at 48 kHz comes out on the same time grid, and a time on the
/// output counts from the same instant as the input's first sample.
///
/// ```swift
/// var resampler = Resampler(from: 44_100, to: 8_000)
/// let out = resampler.append(block)   // about block.count · 8000/44100 samples
/// ```
public struct Resampler: Sendable {
    public let inputRate: Int
    public let outputRate: Int
    /// Input samples per output sample.
    private let step: Double
    /// Half the kernel's length, in input samples.
    private let halfWidth: Int
    /// The kernel sampled every 1/`phases` of an input sample, from 0 to halfWidth (it is even).
    private let table: [Float]
    private static let phases = 64
    /// Input not yet consumed; buffer[0] is input sample `bufferStart`.
    private var buffer: [Float] = []
    private var bufferStart = 0
    /// The next output sample's index.
    private var produced = 0

    /// `cutoff` is the low-pass edge as a fraction of the output's Nyquist frequency.
    public init(from inputRate: Int, to outputRate: Int, cutoff: Double = 0.92, zeroCrossings: Int = 8) {
        precondition(inputRate >= outputRate && outputRate > 0, "Resampler only goes down")
        self.inputRate = inputRate
        self.outputRate = outputRate
        step = Double(inputRate) / Double(outputRate)
        // The low-pass's cutoff in cycles per input sample; its sinc crosses zero every 1/(2fc).
        let fc = cutoff * 0.5 * Double(outputRate) / Double(inputRate)
        let width = Double(zeroCrossings) / (2 * fc)
        halfWidth = inputRate == outputRate ? 0 : Int(width.rounded(.up))
        let count = halfWidth * Self.phases + 2
        table = (0..<count).map { index in
            let t = Double(index) / Double(Self.phases)
            guard t < width else { return 0 }
            let x = 2 * Double.pi * fc * t
            let sinc = t == 0 ? 1 : Math.sin(x) / x
            let window = 0.42 + 0.5 * Math.cos(Double.pi * t / width) + 0.08 * Math.cos(2 * Double.pi * t / width)  // Blackman
            return Float(2 * fc * sinc * window)
        }
    }

    /// Takes the next block of input; returns every output sample that can now be computed.
    /// The last halfWidth input samples wait for the next block (their future neighbours).
    public mutating func append(_ input: [Float]) -> [Float] {
        if inputRate == outputRate { return input }
        buffer += input
        let available = bufferStart + buffer.count  // input samples 0..<available exist
        var out: [Float] = []
        out.reserveCapacity(Int(Double(input.count) / step) + 2)
        buffer.withUnsafeBufferPointer { buffer in
            table.withUnsafeBufferPointer { table in
                while true {
                    let position = Double(produced) * step
                    let centre = Int(position)
                    guard centre + halfWidth + 1 < available else { break }
                    var sum: Float = 0
                    let first = max(centre - halfWidth + 1, bufferStart)
                    for i in first...(centre + halfWidth) {
                        let distance = abs(Double(i) - position) * Double(Self.phases)
                        let index = Int(distance)
                        guard index + 1 < table.count else { continue }
                        let weight = Float(distance - Double(index))
                        let kernel = table[index] + (table[index + 1] - table[index]) * weight
                        sum += kernel * buffer[i - bufferStart]
                    }
                    out.append(sum)
                    produced += 1
                }
            }
        }
        // Keep what the next output still needs.
        let keepFrom = max(bufferStart, Int(Double(produced) * step) - halfWidth - 1)
        if keepFrom - bufferStart > 4096 {
            buffer.removeFirst(keepFrom - bufferStart)
            bufferStart = keepFrom
        }
        return out
    }
}
