#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// libFuzzer's driver, called from our own `main` (SwiftPM gives every executable one, so
/// libFuzzer's cannot be used): it parses libFuzzer's flags and feeds each input to the target
/// `HUDDLE_FUZZ_TARGET` names: `wire` (the default, ``wireDecoderFuzz(_:_:)``), `frames`
/// (``frameSplitterFuzz(_:_:)``) or `control` (``controlLinesFuzz(_:_:)``).
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

var argumentCount = CommandLine.argc
var arguments = CommandLine.unsafeArgv
switch getenv("HUDDLE_FUZZ_TARGET").map({ String(cString: $0) }) ?? "wire" {
case "wire": exit(runFuzzerDriver(&argumentCount, &arguments) { data, size in wireDecoderFuzz(data, size) })
case "frames": exit(runFuzzerDriver(&argumentCount, &arguments) { data, size in frameSplitterFuzz(data, size) })
case "control": exit(runFuzzerDriver(&argumentCount, &arguments) { data, size in controlLinesFuzz(data, size) })
case let other:
    print("huddle-fuzz: no target \"\(other)\" (wire, frames or control)")
    exit(2)
}
