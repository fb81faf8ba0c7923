#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// libFuzzer's driver, called from our own `main` (SwiftPM gives every executable one, so
/// libFuzzer's cannot be used): it parses libFuzzer's flags and feeds each input to
/// ``wireDecoderFuzz(_:_:)``.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

var argumentCount = CommandLine.argc
var arguments = CommandLine.unsafeArgv
exit(runFuzzerDriver(&argumentCount, &arguments) { data, size in wireDecoderFuzz(data, size) })
