import Foundation

/// Runs the `huddle` executable that `swift build` placed beside this test bundle.
struct HuddleBinary {
    struct Result: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static var url: URL {
        // The test runner lives in the build products directory, next to the `huddle` executable.
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = runner.deletingLastPathComponent()
        while !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent("huddle").path),
            directory.path != "/"
        {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("huddle")
    }

    /// Runs `huddle` with `environment` added to this process's environment, waiting for it on a
    /// Dispatch thread (see ``OffThePool``).
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Result {
        try await OffThePool.run { try runBlocking(arguments, environment: environment) }
    }

    private static func runBlocking(_ arguments: [String], environment: [String: String]) throws -> Result {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }
}

/// Runs blocking work (a child process waited for) on a Dispatch thread, not on one of Swift
/// concurrency's cooperative threads: there are as many as cores (two here), and a test that
/// blocks one waiting for a process takes it from every other test of the run.
enum OffThePool {
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
        }
    }
}
