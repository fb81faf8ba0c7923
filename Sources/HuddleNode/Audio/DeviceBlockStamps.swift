import HuddleCore

/// When the first sample of each block from a recording device was heard, on the node's wall
/// clock. A device hands over a block once it is full, so the first block was heard one
/// block's length and the device's latency before it arrived; later blocks follow by sample
/// count, which scheduling jitter does not move. A block that arrives more than 50 ms later than
/// its count says means the device stalled (a monitor of a sink nothing plays into delivers
/// nothing): it is stamped by its arrival again, and the ``Listener`` starts a new stretch there.
///
/// ```swift
/// var stamps = DeviceBlockStamps(sampleRate: 16_000)
/// let at = stamps.stamp(samples: 160, arrivedAt: clock.wall(), latency: .milliseconds(20))
/// ```
///
/// Shared by every device source (PulseAudio on Linux, Audio Queue Services on macOS).
struct DeviceBlockStamps: Sendable {
    let sampleRate: Int
    /// The wall-clock time the stretch's count starts from, and samples counted since.
    private var origin: WallTime?
    private var counted: Int64 = 0

    /// A block later than its count by more than this starts a new stretch.
    static let stallThreshold = TimeSpan.milliseconds(50)

    init(sampleRate: Int) {
        self.sampleRate = sampleRate
    }

    /// The stamp of a block of `samples` that arrived at `arrived` from a device that reports
    /// `latency` (zero when it cannot say, at most 1 s believed).
    mutating func stamp(samples: Int, arrivedAt arrived: WallTime, latency: TimeSpan) -> WallTime {
        let heard = arrived - duration(of: Int64(samples)) - min(max(latency, .zero), .seconds(1))
        // On time or early (jitter), the count says when; much later, the device stalled.
        let expected = origin.map { $0 + duration(of: counted) }
        if expected.map({ heard - $0 > Self.stallThreshold }) ?? true {
            origin = heard - duration(of: counted)
        }
        let at = origin! + duration(of: counted)
        counted += Int64(samples)
        return at
    }

    /// How long `samples` last, in whole µs (rounded down, as the count always was).
    private func duration(of samples: Int64) -> TimeSpan {
        .microseconds(samples * 1_000_000 / Int64(sampleRate))
    }
}
