#if os(Linux)
import Glibc

/// PulseAudio's simple API (`libpulse-simple.so.0`), loaded when a node starts listening and not
/// before, as media players load their sound backends: a node that never listens needs no sound
/// library to build, to start or to run, and does not map libpulse and the codecs and X11 client
/// libraries it pulls in (13 of the 50 libraries a chatting node mapped when it was linked in).
///
/// Only the five functions a record stream uses are looked up. Their types and the constants below
/// are PulseAudio's stable client ABI (`pulse/simple.h`, `pulse/def.h`, `pulse/sample.h`, version
/// 0.9 on); the two structs are laid out by hand, byte by byte, as C lays them out.
///
/// ```swift
/// let pulse = try PulseSimpleLibrary.shared()   // throws one line naming the package to install
/// ```
struct PulseSimpleLibrary: @unchecked Sendable {
    // @unchecked: function pointers into a library that stays loaded for the life of the process.
    typealias New = @convention(c) (
        UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
        UnsafeRawPointer?, UnsafeRawPointer?, UnsafeRawPointer?, UnsafeMutablePointer<Int32>?
    ) -> OpaquePointer?
    typealias Read = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int, UnsafeMutablePointer<Int32>?) -> Int32
    typealias Latency = @convention(c) (OpaquePointer?, UnsafeMutablePointer<Int32>?) -> UInt64
    typealias Free = @convention(c) (OpaquePointer?) -> Void
    typealias ErrorText = @convention(c) (Int32) -> UnsafePointer<CChar>?

    /// The sonames tried, in order: the runtime library every PulseAudio or PipeWire desktop has
    /// (Debian's `libpulse0`), then the development link.
    static let names = ["libpulse-simple.so.0", "libpulse-simple.so"]

    // pa_stream_direction_t's PA_STREAM_RECORD; pa_sample_format_t's PA_SAMPLE_FLOAT32LE.
    static let streamRecord: Int32 = 2
    static let sampleFloat32LE: Int32 = 5

    /// The `pa_error_code_t` values a failed connection is told apart by.
    enum ErrorCode: Int32 {
        case access = 1, noEntity = 5, connectionRefused = 6, authKey = 9, invalidServer = 13
    }

    let new: New
    let read: Read
    let latency: Latency
    let free: Free
    let errorText: ErrorText

    /// The library, loaded once per process; the same one line for every caller when it is missing.
    static func shared() throws(AudioSourceError) -> PulseSimpleLibrary {
        try loaded.get()
    }

    private static let loaded = Result<PulseSimpleLibrary, AudioSourceError>(catching: load)

    private static func load() throws(AudioSourceError) -> PulseSimpleLibrary {
        guard let handle = names.lazy.compactMap({ dlopen($0, RTLD_NOW | RTLD_LOCAL) }).first else {
            throw AudioSourceError(
                "listening needs PulseAudio's client library, libpulse-simple.so.0, which this machine lacks "
                    + "(Debian: sudo apt-get install libpulse0; PipeWire serves it too)",
                consoleHint: "or use --audio-file")
        }
        func symbol<Function>(_ name: String, as _: Function.Type) throws(AudioSourceError) -> Function {
            guard let address = dlsym(handle, name) else {
                throw AudioSourceError("listening: \(names[0]) has no \(name); is it PulseAudio's?")
            }
            return unsafeBitCast(address, to: Function.self)
        }
        return PulseSimpleLibrary(
            new: try symbol("pa_simple_new", as: New.self),
            read: try symbol("pa_simple_read", as: Read.self),
            latency: try symbol("pa_simple_get_latency", as: Latency.self),
            free: try symbol("pa_simple_free", as: Free.self),
            // In libpulse.so.0, which libpulse-simple depends on: dlsym searches a handle's
            // dependencies too.
            errorText: try symbol("pa_strerror", as: ErrorText.self))
    }

    /// `pa_strerror(code)`.
    func describe(_ code: Int32) -> String {
        errorText(code).map { String(cString: $0) } ?? "error \(code)"
    }

    /// `pa_sample_spec { int32 format; uint32 rate; uint8 channels; }`: 12 bytes with C's padding.
    static func sampleSpec(format: Int32, rate: UInt32, channels: UInt8) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 12)
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: format, toByteOffset: 0, as: Int32.self)
            raw.storeBytes(of: rate, toByteOffset: 4, as: UInt32.self)
            raw.storeBytes(of: channels, toByteOffset: 8, as: UInt8.self)
        }
        return bytes
    }

    /// `pa_buffer_attr { uint32 maxlength, tlength, prebuf, minreq, fragsize; }`: -1 leaves a field to
    /// the server.
    static func bufferAttributes(fragmentSize: UInt32) -> [UInt32] {
        [UInt32.max, UInt32.max, UInt32.max, UInt32.max, fragmentSize]
    }
}
#endif
