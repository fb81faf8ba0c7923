#if os(Linux)
import HuddleCore
import Synchronization

/// The default input device (or a named source, such as a null sink's monitor), recorded through
/// PulseAudio's simple API, which PipeWire's pulse server answers too: what `--listen` uses on
/// Linux. The client library is loaded when the first source opens (``PulseSimpleLibrary``). It
/// asks the server for 16 kHz mono floats in 10 ms fragments (the server mixes and resamples),
/// and stamps blocks by their arrival, less their length and the latency the server reports
/// (``DeviceBlockStamps``).
///
/// No client library, no server, no device, no permission: the initializer throws one line saying
/// which, and the node runs on without listening.
///
/// ```swift
/// let source = try PulseAudioSource()                                  // the default input
/// let monitor = try PulseAudioSource(server: "unix:/tmp/pa/native", device: "sink.monitor")
/// ```
public final class PulseAudioSource: AudioSource, @unchecked Sendable {
    // @unchecked: the stream is read by one thread (the listener's); `close` only sets a flag the
    // reader checks, and the stream is freed once, by whichever of the two comes last.
    public let kind = AudioSourceKind.device
    public let sampleRate: Int
    /// The server and source asked for, for messages ("the default input" when nil).
    public let server: String?
    public let device: String?
    private let clock: any ListeningClock
    private let pulse: PulseSimpleLibrary
    private let stream: OpaquePointer
    private let state: Mutex<(closed: Bool, reading: Bool, freed: Bool, stamps: DeviceBlockStamps)>

    /// Connects to `server` (nil: the default, `PULSE_SERVER` or the user's) and starts recording
    /// `device` (nil: the default input).
    public init(
        server: String? = nil, device: String? = nil, sampleRate: Int = 16_000,
        clock: any ListeningClock = SystemListeningClock()
    ) throws(AudioSourceError) {
        self.server = server
        self.device = device
        self.sampleRate = sampleRate
        self.clock = clock
        self.state = Mutex((closed: false, reading: false, freed: false, stamps: DeviceBlockStamps(sampleRate: sampleRate)))
        let pulse = try PulseSimpleLibrary.shared()
        self.pulse = pulse
        let spec = PulseSimpleLibrary.sampleSpec(
            format: PulseSimpleLibrary.sampleFloat32LE, rate: UInt32(sampleRate), channels: 1)
        let attributes = PulseSimpleLibrary.bufferAttributes(
            fragmentSize: UInt32(sampleRate / 100 * MemoryLayout<Float>.size))
        var error: Int32 = 0
        let opened = spec.withUnsafeBytes { spec in
            attributes.withUnsafeBytes { attributes in
                pulse.new(
                    server, "huddle", PulseSimpleLibrary.streamRecord, device, "listening for offsets",
                    spec.baseAddress, nil, attributes.baseAddress, &error)
            }
        }
        guard let stream = opened else {
            throw Self.failure(error, server: server, device: device, pulse: pulse)
        }
        self.stream = stream
    }

    deinit {
        freeStream()
    }

    public func nextBlock() throws(AudioSourceError) -> AudioBlock? {
        let go = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.reading = true
            return true
        }
        guard go else { return nil }
        let count = sampleRate / 100
        var samples = [Float](repeating: 0, count: count)
        var error: Int32 = 0
        let status = samples.withUnsafeMutableBytes { pulse.read(stream, $0.baseAddress, $0.count, &error) }
        let arrived = clock.wall()
        var latency: UInt64 = 0
        if status >= 0 { latency = pulse.latency(stream, &error) }
        let (closed, at) = state.withLock { state -> (Bool, WallTime) in
            state.reading = false
            // PulseAudio says its latency in µs.
            let at = state.stamps.stamp(
                samples: count, arrivedAt: arrived, latency: .microseconds(min(latency, 1_000_000)))
            return (state.closed, at)
        }
        if closed {
            freeStream()
            return nil
        }
        guard status >= 0 else {
            throw AudioSourceError("recording stopped: \(pulse.describe(error))")
        }
        return AudioBlock(samples: samples, at: at)
    }

    public func close() {
        let idle = state.withLock { state -> Bool in
            state.closed = true
            return !state.reading
        }
        if idle { freeStream() }
    }

    private func freeStream() {
        let free = state.withLock { state -> Bool in
            guard !state.freed, !state.reading else { return false }
            state.freed = true
            return true
        }
        if free { pulse.free(stream) }
    }

    /// The one line for a stream that could not start.
    static func failure(_ code: Int32, server: String?, device: String?, pulse: PulseSimpleLibrary) -> AudioSourceError {
        let reason = pulse.describe(code)
        let where_ = server.map { " at \($0)" } ?? ""
        switch PulseSimpleLibrary.ErrorCode(rawValue: code) {
        case .connectionRefused, .invalidServer, .access, .authKey:
            return AudioSourceError(
                "no sound server answers\(where_) (PulseAudio or PipeWire: \(reason)); start one",
                consoleHint: "or use --audio-file")
        case .noEntity:
            return AudioSourceError(
                "no input device \(device.map { "\"\($0)\"" } ?? "by default")\(where_) (\(reason))")
        case nil:
            return AudioSourceError("cannot record\(where_): \(reason)")
        }
    }
}
#endif
