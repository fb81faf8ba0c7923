import NIOCore

/// Closes a connection that reads nothing for `idle`: a source that accepts a picture fetch and
/// then goes quiet is left for the next within seconds, however long the whole fetch may take.
/// Sits after the frame decoder: each whole message re-arms it.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandler(ReadIdleHandler(idle: .seconds(5)))
/// ```
final class ReadIdleHandler: ChannelInboundHandler {
    typealias InboundIn = NIOAny
    typealias InboundOut = NIOAny

    let idle: TimeAmount
    private var timer: Scheduled<Void>?

    init(idle: TimeAmount) {
        self.idle = idle
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
        arm(context)
        context.fireChannelRead(data)
    }

    private func arm(_ context: ChannelHandlerContext) {
        timer?.cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: idle) { loopBound.value.close(promise: nil) }
    }
}
