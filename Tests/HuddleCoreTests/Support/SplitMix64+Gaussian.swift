import Foundation
import HuddleCore

extension SplitMix64 {
    /// A standard normal sample (Box–Muller), for simulated human reaction noise.
    mutating func nextGaussian() -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
        let u2 = Double.random(in: 0..<1, using: &self)
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}
