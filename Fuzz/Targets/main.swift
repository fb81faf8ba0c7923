#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// libFuzzer's driver, called from our own `main`: it parses libFuzzer's flags and feeds each
/// input to the callback.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

var argumentCount = CommandLine.argc
var arguments = CommandLine.unsafeArgv
_ = fuzzTarget  // an unknown target is refused before libFuzzer starts
exit(runFuzzerDriver(&argumentCount, &arguments) { data, size in fuzzOneInput(data, size) })
