import Dispatch
import Foundation
import Synchronization

/// Writes to a file descriptor (stdout, a terminal) on a thread of its own, so whoever writes
/// never waits for the reader: a script that stops reading `huddle run --json` for a while must
/// not stall the node until its peers think it is gone.
///
/// Writes are queued whole and written in order, what queued up meanwhile in one `write(2)`. A
/// write may be queued as a closure that makes its bytes, called on the writer's thread in its
/// place (the node's lines, rendered beside its work). The queue is bounded (``limit`` bytes, a
/// closure counted as ``madeEstimate``): while it is full, further writes are dropped and
/// counted, and once the reader catches up the ``droppedNotice`` (if any) is written before
/// anything else, saying how many. A reader that went away (EPIPE) makes writes fail; they are
/// counted in ``failedWrites``, each as if written alone, and otherwise ignored.
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

    /// What a closure's bytes are counted as while queued: about a JSON line of a message.
    static let madeEstimate = 512
    /// Most bytes the writer thread gathers into one `write(2)`.
    static let gatherLimit = 64 * 1024

    /// A write queued: its bytes, or what makes them.
    private enum Item {
        case bytes([UInt8])
        case made(@Sendable () -> [UInt8])

        var queuedSize: Int {
            switch self {
            case .bytes(let bytes): bytes.count
            case .made: AsyncFileWriter.madeEstimate
            }
        }
    }

    private struct State {
        var queue: [Item] = []
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
        enqueue(item: .bytes(bytes))
    }

    /// Queues the bytes `make` will make (none: nothing), to be written after everything queued
    /// before; never blocks. `make` is called on the writer's thread.
    func enqueue(_ make: @escaping @Sendable () -> [UInt8]) {
        enqueue(item: .made(make))
    }

    private func enqueue(item: Item) {
        let size = item.queuedSize
        let startThread = state.withLock { state -> Bool in
            guard state.queuedBytes + size <= limit || state.queuedBytes == 0 else {
                state.dropped += 1
                state.droppedTotal += 1
                return false
            }
            state.queue.append(item)
            state.queuedBytes += size
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

    /// The writer thread: takes whatever is queued and writes it, in order, gathered into few
    /// writes, blocking as long as the reader makes it.
    private func run() {
        var gathered: [UInt8] = []
        gathered.reserveCapacity(Self.gatherLimit)
        while true {
            wake.wait()
            while true {
                let (batch, dropped) = state.withLock { state -> ([Item], Int) in
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
                // Each write that could not be written counts, as if written alone.
                var writes = 0
                func writeGathered() {
                    if !gathered.isEmpty, !writeAll(gathered, to: fileDescriptor) { failures += writes }
                    gathered.removeAll(keepingCapacity: true)
                    writes = 0
                }
                for item in batch {
                    switch item {
                    case .bytes(let bytes): gathered += bytes
                    case .made(let make): gathered += make()
                    }
                    writes += 1
                    if gathered.count >= Self.gatherLimit { writeGathered() }
                }
                writeGathered()
                state.withLock { state in
                    state.failures += failures
                    state.writing = false
                }
            }
        }
    }
}
