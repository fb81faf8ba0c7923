public import HuddleCore

/// Where a listening node's sound comes from: the default input device, or a WAV file played as
/// if a microphone heard it. A source delivers mono blocks of about 10 ms, each stamped with the
/// node-clock time its first sample counts as heard; the ``Listener`` reads it on a thread of its
/// own, so ``nextBlock()`` may block.
///
/// ```swift
/// let source = try WAVFileSource(path: "alice.wav", start: clock.wallMicros())
/// while let block = try source.nextBlock() { extractor.append(block.samples) }
/// ```
public protocol AudioSource: AnyObject, Sendable {
    /// What the node says it listens to ("file", "device"), as in `{"type":"listening"}`.
    var kind: AudioSourceKind { get }
    /// Samples a second of every block.
    var sampleRate: Int { get }
    /// The next block, waiting until it has been heard; `nil` at the end (a file played out).
    /// Throws ``AudioSourceError`` when the device fails while recording.
    func nextBlock() throws(AudioSourceError) -> AudioBlock?
    /// Stops recording; a blocked ``nextBlock()`` returns soon after. Safe to call twice.
    func close()
}

/// The kinds of source, as the node names them in its output.
public enum AudioSourceKind: String, Sendable {
    case file
    case device
}

/// One block of mono sound.
public struct AudioBlock: Sendable, Equatable {
    /// Samples in −1 … 1.
    public var samples: [Float]
    /// When, on the node's wall clock (the clock of events' `createdAt`, to the µs here), the
    /// first sample counts as heard.
    public var at: WallTime

    public init(samples: [Float], at: WallTime) {
        self.samples = samples
        self.at = at
    }
}

/// Why a node cannot listen, in one line a person can act on.
public struct AudioSourceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Why, in words any face can show (the console, a phone's page).
    public let reason: String
    /// What the viewer at the terminal can do instead (a flag of `huddle run`), if anything.
    public let consoleHint: String?

    /// The reason with the hint: "…; start one, or use --audio-file", "…; use --audio-file".
    public var description: String {
        consoleHint.map { reason + ($0.hasPrefix("or ") ? ", " : "; ") + $0 } ?? reason
    }

    public init(_ reason: String, consoleHint: String? = nil) {
        self.reason = reason
        self.consoleHint = consoleHint
    }
}

/// The platform's default input device, what `--listen` records: PulseAudio's simple API on
/// Linux (PipeWire's pulse server answers it too), Audio Queue Services on macOS. Throws one line
/// saying why not (no sound server, no device, no way to record on this platform).
func openDefaultInput() throws(AudioSourceError) -> any AudioSource {
    #if os(Linux)
    return try PulseAudioSource()
    #elseif canImport(AudioToolbox)
    return try AudioQueueSource()
    #else
    throw AudioSourceError("this platform has no input device Huddle can record", consoleHint: "use --audio-file")
    #endif
}
