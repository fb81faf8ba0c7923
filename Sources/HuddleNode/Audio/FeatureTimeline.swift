public import HuddleAudio

/// One node's recent sound as features on its own clock: frames every 10 ms from ``start``,
/// contiguous, at most ``capacity`` of them (the oldest go first). Windows arrive in pieces, out
/// of order or not at all (UDP): a gap is quiet frames, which are never compared; a window that
/// covers frames held writes over them; one older than everything held is dropped.
///
/// ```swift
/// var timeline = FeatureTimeline(seconds: 150)
/// timeline.add(window)                 // 2 s of a peer's sound
/// timeline.last(seconds: 120)          // what a match compares
/// ```
public struct FeatureTimeline: Sendable, Equatable {
    /// The node-clock time (ms) of the first frame held.
    public private(set) var start: Int64 = 0
    private(set) var bits: [UInt32] = []
    private(set) var loud: [Bool] = []
    /// The most frames held.
    public let capacity: Int

    public init(seconds: Int) {
        capacity = seconds * AudioFeatures.framesPerSecond
    }

    /// Frames held.
    public var count: Int { bits.count }
    /// The time just after the last frame held (ms).
    public var end: Int64 { start + Int64(count) * AudioFeatures.hopMilliseconds }

    /// Takes `features` in, at their time (rounded to the 10 ms grid of what is held).
    public mutating func add(_ features: AudioFeatures) {
        guard features.count > 0 else { return }
        guard count > 0 else {
            (start, bits, loud) = (features.start, features.bits, features.loud)
            trim()
            return
        }
        let hop = AudioFeatures.hopMilliseconds
        let difference = features.start - start
        let index = Int((difference + (difference >= 0 ? hop / 2 : -hop / 2)) / hop)
        if index > count + capacity || index + features.count <= 0 {
            // Far ahead (a long silence on the air, a restart): start over from it. Entirely
            // before what is held: too late to matter.
            if index > 0 { (start, bits, loud) = (features.start, features.bits, features.loud) }
            trim()
            return
        }
        if index > count {
            let gap = index - count
            bits += repeatElement(0, count: gap)
            loud += repeatElement(false, count: gap)
        }
        for (offset, (word, isLoud)) in zip(features.bits, features.loud).enumerated() where index + offset >= 0 {
            let at = index + offset
            if at < count {
                bits[at] = word
                loud[at] = isLoud
            } else {
                bits.append(word)
                loud.append(isLoud)
            }
        }
        trim()
    }

    /// Everything held, as features.
    public var features: AudioFeatures { AudioFeatures(start: start, bits: bits, loud: loud) }

    /// The last `seconds` held (all of it when less is held).
    public func last(seconds: Double) -> AudioFeatures {
        let frames = min(count, Int(seconds * Double(AudioFeatures.framesPerSecond)))
        let first = count - frames
        return AudioFeatures(
            start: start + Int64(first) * AudioFeatures.hopMilliseconds, bits: Array(bits[first...]),
            loud: Array(loud[first...]))
    }

    private mutating func trim() {
        guard count > capacity else { return }
        let drop = count - capacity
        bits.removeFirst(drop)
        loud.removeFirst(drop)
        start += Int64(drop) * AudioFeatures.hopMilliseconds
    }
}
