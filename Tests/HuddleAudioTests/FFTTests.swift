import HuddleAudio
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The FFT against the definition of the DFT.
@Suite struct FFTTests {
    @Test(arguments: [2, 8, 64, 512])
    func matchesTheDirectDFT(size: Int) {
        var random = TestRandom(seed: UInt64(size))
        let re = (0..<size).map { _ in random.uniform() }, im = (0..<size).map { _ in random.uniform() }
        var fr = re, fi = im
        FFT(size: size).forward(&fr, &fi)
        for k in 0..<size {
            var sr = 0.0, si = 0.0
            for n in 0..<size {
                let angle = -2 * Double.pi * Double(k * n) / Double(size)
                sr += re[n] * cos(angle) - im[n] * sin(angle)
                si += re[n] * sin(angle) + im[n] * cos(angle)
            }
            #expect(abs(fr[k] - sr) < 1e-9 * Double(size))
            #expect(abs(fi[k] - si) < 1e-9 * Double(size))
        }
    }

    @Test func inverseUndoesForward() {
        var random = TestRandom(seed: 9)
        let re = (0..<1024).map { _ in random.uniform() }
        var fr = re, fi = [Double](repeating: 0, count: 1024)
        let fft = FFT(size: 1024)
        fft.forward(&fr, &fi)
        fft.inverse(&fr, &fi)
        #expect(zip(fr, re).allSatisfy { abs($0 - $1) < 1e-12 })
        #expect(fi.allSatisfy { abs($0) < 1e-12 })
    }

    @Test func aToneLandsInItsBin() {
        var re = (0..<256).map { cos(2 * Double.pi * 10 * Double($0) / 256) }
        var im = [Double](repeating: 0, count: 256)
        FFT(size: 256).forward(&re, &im)
        #expect(abs(re[10] - 128) < 1e-9 && abs(re[246] - 128) < 1e-9)
        #expect((0..<256).filter { $0 != 10 && $0 != 246 }.allSatisfy { abs(re[$0]) < 1e-9 && abs(im[$0]) < 1e-9 })
    }
}
