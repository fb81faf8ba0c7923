import Dispatch
import Foundation
import Synchronization

/// Writes to a file descriptor (stdout, a terminal) on a thread of its own, so whoever writes
/// never waits for the reader: a script that stops reading `huddle run --json` for a while must
/// not stall the node until its peers think it is gone.
///
/// Writes are queued whole and written in order. The queue is bounded (``limit`` bytes): while it
/// is full, further writes are dropped and counted, and once the reader catches up the
/// ``droppedNotice`` (if any) is written before anything else, saying how many. A reader that went
/// away (EPIPE) makes writes fail; they are counted in ``failedWrites`` and otherwise ignored.
///
/// ```swift
/// let writer = AsyncFileWriter(fileDescriptor: STDOUT_FILENO)
/// writer.enqueue(Array("hello\n".utf8))   // returns at once
/// writer.flush(timeout: .seconds(5))      // before the process exits
/// ```
final class AsyncFileWriter: Sendable {
    /// Most bytes waiting at once (default 16 MiB, some 50,000 JSON lines).
    let limit: Int
    let fileDescriptor: Int32
    private let droppedNotice: (@Sendable (Int) -> [UInt8])?
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    private struct State {
        var queue: [[UInt8]] = []
        var queuedBytes = 0
        /// Writes dropped since the last notice.
        var dropped = 0
        var droppedTotal = 0
        var failures = 0
        /// The writer thread holds writes it took from the queue.
        var writing = false
        var started = false
    }

    /// A writer to `fileDescriptor`, which it does not close. `droppedNotice` makes the bytes
    /// written after writes were dropped, given how many.
    init(fileDescriptor: Int32, limit: Int = 16 * 1024 * 1024, droppedNotice: (@Sendable (Int) -> [UInt8])? = nil) {
        self.fileDescriptor = fileDescriptor
        self.limit = limit
        self.droppedNotice = droppedNotice
    }

    /// Queues `bytes` to be written after everything queued before; never blocks.
    func enqueue(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        let startThread = state.withLock { state -> Bool in
            guard state.queuedBytes + bytes.count <= limit || state.queuedBytes == 0 else {
                state.dropped += 1
                state.droppedTotal += 1
                return false
            }
            state.queue.append(bytes)
            state.queuedBytes += bytes.count
            defer { state.started = true }
            return !state.started
        }
        if startThread {
            let thread = Thread { [self] in run() }
            thread.name = "huddle-output"
            thread.start()
        }
        wake.signal()
    }

    /// Waits until everything queued is written, or `timeout` passes; returns whether it all was.
    @discardableResult
    func flush(timeout: Duration = .seconds(5)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if isIdle { return true }
            usleep(1000)
        }
        return false
    }

    /// Whether everything queued has been written (or has failed).
    var isIdle: Bool { state.withLock { $0.queue.isEmpty && !$0.writing && $0.dropped == 0 } }

    /// Writes that failed because the reader went away.
    var failedWrites: Int { state.withLock { $0.failures } }

    /// Writes dropped because the queue was full.
    var droppedWrites: Int { state.withLock { $0.droppedTotal } }

    /// The writer thread: takes whatever is queued and writes it, in order, blocking as long as
    /// the reader makes it.
    private func run() {
        while true {
            wake.wait()
            while true {
                let (batch, dropped) = state.withLock { state -> ([[UInt8]], Int) in
                    let batch = state.queue
                    let dropped = state.dropped
                    state.queue.removeAll(keepingCapacity: true)
                    state.queuedBytes = 0
                    state.dropped = 0
                    state.writing = !batch.isEmpty || dropped > 0
                    return (batch, dropped)
                }
                guard !batch.isEmpty || dropped > 0 else { break }
                var failures = 0
                if dropped > 0, let notice = droppedNotice?(dropped), !writeAll(notice, to: fileDescriptor) {
                    failures += 1
                }
                for bytes in batch where !writeAll(bytes, to: fileDescriptor) { failures += 1 }
                state.withLock { state in
                    state.failures += failures
                    state.writing = false
                }
            }
        }
    }
}
