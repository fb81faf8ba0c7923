import Foundation
import Testing

/// Runs a suite's tests on threads of their own, not on Swift concurrency's cooperative pool.
///
/// The pool has as many threads as cores (two here), and every test of a run is queued on it at
/// once. A test that computes for seconds without suspending (a simulation, thousands of random
/// frames, a property over many arrival orders) holds a pool thread all that time; two of them
/// hold the whole pool, and a test elsewhere that waits on a socket cannot take its next step
/// until they are done: measured with a probe that sleeps 50 ms again and again during
/// `swift test`, the pool answered up to 20 s late, and CI saw a control-socket test time out
/// after 10 s on a quiet machine. The core's tests only compute, so they run on threads the
/// kernel shares fairly with the pool's (Dispatch's threads would not do: on Linux they come out
/// of the same budget of one per core as the pool's).
///
/// ```swift
/// @Suite(.offThePool) struct WireFuzzTests { ... }
/// ```
struct OffThePool: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(ThreadsExecutor.shared) { try await function() }
    }
}

extension Trait where Self == OffThePool {
    /// Runs the suite's tests off the cooperative pool (``OffThePool``).
    static var offThePool: Self { OffThePool() }
}

/// A task executor on threads of its own, one per core, taking jobs in the order they come.
final class ThreadsExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = ThreadsExecutor(threads: ProcessInfo.processInfo.activeProcessorCount)

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []  // guarded by `condition`
    private static let current = ThreadLocalFlag()

    init(threads: Int) {
        for index in 0..<max(1, threads) {
            let thread = Thread { [self] in work() }
            thread.name = "huddle-tests-\(index)"
            thread.start()
        }
    }

    /// Whether the caller runs on one of this executor's threads.
    static var isCurrent: Bool { current.isSet }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        Self.current.set()
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// A flag each thread sets for itself.
private final class ThreadLocalFlag: @unchecked Sendable {
    private let key = "huddle.tests.off-the-pool"
    var isSet: Bool { Thread.current.threadDictionary[key] != nil }
    func set() { Thread.current.threadDictionary[key] = true }
}
