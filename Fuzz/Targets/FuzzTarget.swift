#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The input libFuzzer hands over goes to the target `HUDDLE_FUZZ_TARGET` names: `wire` (the
/// default, ``wireDecoderFuzz(_:_:)``), `frames` (``frameSplitterFuzz(_:_:)``) or `control`
/// (``controlLinesFuzz(_:_:)``), chosen once. A global outside `main.swift`, so it is made on
/// first use whichever `main` runs.
let fuzzTarget: @Sendable (UnsafePointer<UInt8>, Int) -> CInt = {
    switch getenv("HUDDLE_FUZZ_TARGET").map({ String(cString: $0) }) ?? "wire" {
    case "wire": return wireDecoderFuzz
    case "frames": return frameSplitterFuzz
    case "control": return controlLinesFuzz
    case let other:
        print("huddle-fuzz: no target \"\(other)\" (wire, frames or control)")
        exit(2)
    }
}()

/// libFuzzer's entry point. A debug build renames this file's `main`, so libFuzzer's own `main`
/// is linked and calls this directly; a release build runs the code below, which hands libFuzzer
/// the same function.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    fuzzTarget(data, size)
}
