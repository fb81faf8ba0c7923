/// A radix-2 fast Fourier transform of one power-of-two size, in place on split real and
/// imaginary arrays. Twiddles and the bit-reversal permutation are worked out once, at init.
///
/// The forward transform is X[k] = Σ x[n]·e^(−2πikn/N); ``inverse(_:_:)`` divides by N, so
/// inverse(forward(x)) == x.
///
/// ```swift
/// let fft = FFT(size: 512)
/// var re = window, im = [Double](repeating: 0, count: 512)
/// fft.forward(&re, &im)      // re[k], im[k]: bin k, k·rate/512 Hz
/// ```
public struct FFT: Sendable {
    public let size: Int
    private let cosines: [Double]
    private let sines: [Double]
    private let reversed: [Int]

    /// `size` must be a power of two, at least 2.
    public init(size: Int) {
        precondition(size >= 2 && size & (size - 1) == 0, "FFT size must be a power of two")
        self.size = size
        let half = size / 2
        cosines = (0..<half).map { Math.cos(-2 * Double.pi * Double($0) / Double(size)) }
        sines = (0..<half).map { Math.sin(-2 * Double.pi * Double($0) / Double(size)) }
        let bits = size.trailingZeroBitCount
        reversed = (0..<size).map { index in
            var value = 0
            for bit in 0..<bits where index & (1 << bit) != 0 { value |= 1 << (bits - 1 - bit) }
            return value
        }
    }

    /// The smallest power of two at least `count`.
    public static func size(atLeast count: Int) -> Int {
        var size = 2
        while size < count { size <<= 1 }
        return size
    }

    public func forward(_ re: inout [Double], _ im: inout [Double]) {
        transform(&re, &im, conjugate: false)
    }

    public func inverse(_ re: inout [Double], _ im: inout [Double]) {
        transform(&re, &im, conjugate: true)
        let scale = 1 / Double(size)
        for i in 0..<size {
            re[i] *= scale
            im[i] *= scale
        }
    }

    private func transform(_ re: inout [Double], _ im: inout [Double], conjugate: Bool) {
        precondition(re.count == size && im.count == size, "FFT input must have \(size) values")
        let n = size
        let sign: Double = conjugate ? -1 : 1
        re.withUnsafeMutableBufferPointer { re in
            im.withUnsafeMutableBufferPointer { im in
                cosines.withUnsafeBufferPointer { cosines in
                    sines.withUnsafeBufferPointer { sines in
                        reversed.withUnsafeBufferPointer { reversed in
                            for i in 0..<n {
                                let j = reversed[i]
                                if j > i {
                                    re.swapAt(i, j)
                                    im.swapAt(i, j)
                                }
                            }
                            var span = 1
                            while span < n {
                                let stride = n / (2 * span)
                                var start = 0
                                while start < n {
                                    var twiddle = 0
                                    for k in start..<start + span {
                                        let wr = cosines[twiddle]
                                        let wi = sign * sines[twiddle]
                                        let m = k + span
                                        let tr = re[m] * wr - im[m] * wi
                                        let ti = re[m] * wi + im[m] * wr
                                        re[m] = re[k] - tr
                                        im[m] = im[k] - ti
                                        re[k] += tr
                                        im[k] += ti
                                        twiddle += stride
                                    }
                                    start += 2 * span
                                }
                                span *= 2
                            }
                        }
                    }
                }
            }
        }
    }
}
