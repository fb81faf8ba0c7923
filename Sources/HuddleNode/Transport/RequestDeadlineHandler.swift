import HuddleCore
import NIOCore

/// Closes a sync connection whose peer takes too long to send a whole request: from the moment
/// the connection is up, and again from each response written, the next request must arrive
/// within `deadline`. Trickling a byte now and then does not count as progress; only a whole
/// decoded message does. Sits after the frame decoder, so it sees messages, not bytes.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandler(RequestDeadlineHandler(deadline: .seconds(5)))
/// ```
final class RequestDeadlineHandler: ChannelDuplexHandler {
    typealias InboundIn = WireMessage
    typealias InboundOut = WireMessage
    typealias OutboundIn = WireMessage
    typealias OutboundOut = WireMessage

    let deadline: TimeAmount
    private var timer: Scheduled<Void>?

    init(deadline: TimeAmount) {
        self.deadline = deadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        timer?.cancel()
        timer = nil
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
        arm(context)
    }

    private func arm(_ context: ChannelHandlerContext) {
        timer?.cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let deadline = deadline
        timer = context.eventLoop.scheduleTask(in: deadline) {
            let context = loopBound.value
            context.fireErrorCaught(SyncError.tooSlow(deadline: deadline))
            context.close(promise: nil)
        }
    }
}
