#if canImport(AudioToolbox)
import AudioToolbox
import Dispatch
import Foundation
import HuddleCore

/// The default input device recorded through Audio Queue Services: what `--listen` uses on macOS,
/// as ``PulseAudioSource`` is on Linux. It asks for 16 kHz mono floats in 10 ms buffers (Core
/// Audio converts from the device's own format), and stamps blocks by their arrival, less their
/// length (``DeviceBlockStamps``; the queue reports no latency, so none is subtracted).
///
/// The queue's callbacks run on a dispatch queue of their own and hand full buffers to an
/// ``Inbox``; ``nextBlock()`` waits on it, on the listener's thread.
///
/// Not compiled or run on the machine Huddle is built and tested on (Linux); written against the
/// Audio Queue Services reference. macOS asks the user for microphone access the first time;
/// refused, the queue records silence, which never matches anything.
public final class AudioQueueSource: AudioSource, @unchecked Sendable {
    // @unchecked: `queue` is set once in init; everything that changes is in the inbox, under
    // its condition's lock.
    public let kind = AudioSourceKind.device
    public let sampleRate: Int
    private let inbox: Inbox
    private let callbacks = DispatchQueue(label: "huddle.listening.audio-queue")
    private var queue: AudioQueueRef?

    public init(sampleRate: Int = 16_000, clock: any ListeningClock = SystemListeningClock()) throws(AudioSourceError) {
        self.sampleRate = sampleRate
        let inbox = Inbox(stamps: DeviceBlockStamps(sampleRate: sampleRate))
        self.inbox = inbox
        var format = AudioStreamBasicDescription(
            mSampleRate: Float64(sampleRate), mFormatID: kAudioFormatLinearPCM,
            mFormatFlags: kLinearPCMFormatFlagIsFloat | kLinearPCMFormatFlagIsPacked,
            mBytesPerPacket: 4, mFramesPerPacket: 1, mBytesPerFrame: 4, mChannelsPerFrame: 1,
            mBitsPerChannel: 32, mReserved: 0)
        var created: AudioQueueRef?
        let status = AudioQueueNewInputWithDispatchQueue(&created, &format, 0, callbacks) { queue, buffer, _, _, _ in
            let count = Int(buffer.pointee.mAudioDataByteSize) / MemoryLayout<Float>.size
            let samples = Array(UnsafeBufferPointer(
                start: buffer.pointee.mAudioData.assumingMemoryBound(to: Float.self), count: count))
            if inbox.put(samples, arrivedAt: clock.wall()) {
                AudioQueueEnqueueBuffer(queue, buffer, 0, nil)
            }
        }
        guard status == noErr, let created else { throw Self.failure("no input device by default", status) }
        queue = created
        let bytes = UInt32(sampleRate / 100 * MemoryLayout<Float>.size)
        for _ in 0..<4 {
            var buffer: AudioQueueBufferRef?
            let allocated = AudioQueueAllocateBuffer(created, bytes, &buffer)
            guard allocated == noErr, let buffer else {
                AudioQueueDispose(created, true)
                throw Self.failure("cannot record", allocated)
            }
            AudioQueueEnqueueBuffer(created, buffer, 0, nil)
        }
        let started = AudioQueueStart(created, nil)
        guard started == noErr else {
            AudioQueueDispose(created, true)
            throw Self.failure("cannot record from the default input", started)
        }
    }

    deinit {
        close()
        if let queue { AudioQueueDispose(queue, true) }
    }

    public func nextBlock() throws(AudioSourceError) -> AudioBlock? {
        inbox.next()
    }

    public func close() {
        guard inbox.close(), let queue else { return }
        AudioQueueStop(queue, true)
    }

    static func failure(_ what: String, _ status: OSStatus) -> AudioSourceError {
        AudioSourceError("\(what) (Audio Queue Services error \(status))", consoleHint: "use --audio-file")
    }

    /// Full buffers waiting for the listener's thread, at most a second of them (a listener that
    /// falls behind loses the oldest, as a device would).
    final class Inbox: @unchecked Sendable {
        // @unchecked: every field is read and written under `ready`'s lock.
        private let ready = NSCondition()
        private var blocks: [AudioBlock] = []
        private var stamps: DeviceBlockStamps
        private var closed = false

        init(stamps: DeviceBlockStamps) {
            self.stamps = stamps
        }

        /// Keeps a buffer's samples; `false` once closed (the buffer is not enqueued again).
        func put(_ samples: [Float], arrivedAt arrived: WallTime) -> Bool {
            ready.lock()
            defer { ready.unlock() }
            guard !closed else { return false }
            let at = stamps.stamp(samples: samples.count, arrivedAt: arrived, latency: .zero)
            blocks.append(AudioBlock(samples: samples, at: at))
            if blocks.count > 100 { blocks.removeFirst(blocks.count - 100) }
            ready.signal()
            return true
        }

        /// The oldest block, waiting for one; `nil` once closed.
        func next() -> AudioBlock? {
            ready.lock()
            defer { ready.unlock() }
            while blocks.isEmpty && !closed { ready.wait() }
            return closed ? nil : blocks.removeFirst()
        }

        /// Closes the inbox and wakes a waiting reader; `true` the first time.
        func close() -> Bool {
            ready.lock()
            defer { ready.unlock() }
            guard !closed else { return false }
            closed = true
            ready.broadcast()
            return true
        }
    }
}
#endif
