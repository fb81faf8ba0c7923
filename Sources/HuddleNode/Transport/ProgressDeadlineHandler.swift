import NIOCore

/// Closes a connection that makes no progress in time, progress being a whole message (it sits
/// after the frame decoder, so trickling a byte now and then does not count). Two rules:
///
/// - ``Rule/betweenReads(_:)``: each message read arms it again. A source that accepts a picture
///   fetch and then goes quiet is left for the next within seconds, however long the whole fetch
///   may take.
/// - ``Rule/requestAfterResponse(_:)``: from the moment the connection is up, and again from each
///   response written, the next request must arrive in time; reading one stops the clock. A sync
///   peer that takes too long is cut off, and told why (``SyncError/tooSlow(deadline:)``).
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandler(ProgressDeadlineHandler(.betweenReads(.seconds(5))))
/// ```
final class ProgressDeadlineHandler: ChannelDuplexHandler {
    typealias InboundIn = NIOAny
    typealias InboundOut = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    enum Rule {
        case betweenReads(TimeAmount)
        case requestAfterResponse(TimeAmount)
    }

    let rule: Rule
    private var timer: Scheduled<Void>?

    init(_ rule: Rule) {
        self.rule = rule
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
        switch rule {
        case .betweenReads:
            arm(context)
        case .requestAfterResponse:
            timer?.cancel()
            timer = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
        if case .requestAfterResponse = rule { arm(context) }
    }

    private func arm(_ context: ChannelHandlerContext) {
        timer?.cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        switch rule {
        case .betweenReads(let idle):
            timer = context.eventLoop.scheduleTask(in: idle) { loopBound.value.close(promise: nil) }
        case .requestAfterResponse(let deadline):
            timer = context.eventLoop.scheduleTask(in: deadline) {
                let context = loopBound.value
                context.fireErrorCaught(SyncError.tooSlow(deadline: deadline))
                context.close(promise: nil)
            }
        }
    }
}
