import Foundation
import HuddleCore
import NIOCore
import Synchronization

/// One WebSocket from a page (docs/WEB.md): pairing, or a session sealed with the device's key.
///
/// The page has ``handshakeDeadline`` to pair or to open a session, or the connection closes; it
/// then talks only in sealed frames, and the first frame that does not open ends it.
struct WebConnection {
    /// From connecting to the end of a pairing, and from then (or from connecting) to `open`.
    static let handshakeDeadline = Duration.seconds(10)
    /// Largest frame read; a bigger one closes the connection.
    static let maximumFrame = 16 * 1024
    /// How often the node pings an open page, to time its link.
    static let pingEvery = Duration.seconds(2)
    /// Bytes of a photo in one part a page sends (base64 in a sealed frame under ``maximumFrame``).
    static let photoPartBytes = 8 * 1024
    /// Largest photo or clip a page may send: a photo goes scaled to 1,600 px (a few hundred KiB),
    /// a clip as it is, up to what any node takes.
    static let maximumPhotoBytes = Picture.maxBytes

    let hub: WebHub
    let clock: any NodeClock
    let channel: any Channel
    /// Where the connection's seat is kept: a session needs one of its own.
    let admission: WebAdmission

    /// Closes the connection after ``handshakeDeadline`` unless cancelled first.
    private func deadline() -> Task<Void, Never> {
        Task { [channel] in
            try? await Task.sleep(for: Self.handshakeDeadline)
            if !Task.isCancelled { channel.close(promise: nil) }
        }
    }

    func serve(_ messages: WebSocketMessages, _ outbound: WebSocketWriter) async {
        var deadline = deadline()
        defer { deadline.cancel() }
        var messages = messages
        do {
            // A pairing done, the page has the same time again to open its session: on a lossy
            // link the two can take longer together than one deadline allows.
            let paired = { [self] in
                deadline.cancel()
                deadline = self.deadline()
            }
            guard let (device, since, opener, sealer) = try await handshake(&messages, outbound, paired: paired) else {
                try? await outbound.close(.policyViolation, reason: nil)
                return
            }
            guard admission.open(channel) else {
                try? await outbound.close(.policyViolation, reason: "too many pages open")
                return
            }
            deadline.cancel()
            try await session(device: device, since: since, opener: opener, sealer: sealer, &messages, outbound)
        } catch {
            // The page went away, or sent what is not a message: nothing to answer.
        }
        channel.close(promise: nil)
    }

    // MARK: Before the session

    /// What a page says in the clear (`pair`, `proof`, `hello`): text, and short.
    private static func clear(_ message: WebSocketMessage?) -> FromPage? {
        guard case .text(let text) = message, text.utf8.count <= FromPage.maximumClearBytes else { return nil }
        return FromPage(json: Array(text.utf8))
    }

    private static func say(_ message: ToPage, _ outbound: WebSocketWriter) async throws {
        try await outbound.write(.text(message.json))
    }

    /// Pairs the page if it asks to, then opens its session: the device, the line it last showed,
    /// and the connection's keys. `nil`: refused (said why to the page).
    private func handshake(
        _ messages: inout WebSocketMessages, _ outbound: WebSocketWriter,
        paired: () -> Void
    ) async throws -> (WebDevice, Int, WebChannel.Opener, WebChannel.Sealer)? {
        guard var first = Self.clear(try await messages.next()) else { return nil }
        if case .pair(let code, let sid, let pub, let name) = first {
            guard try await pair(code: code, sid: sid, pub: pub, name: name ?? "phone", &messages, outbound) else { return nil }
            paired()
            guard let next = Self.clear(try await messages.next()) else { return nil }
            first = next
        }
        guard case .hello(let id?) = first, let device = hub.device(id: id) else {
            try await Self.say(.unpaired, outbound)
            return nil
        }
        let nonce = WebHub.randomBytes(12)
        try await Self.say(.challenge(nonce: nonce), outbound)
        let key = WebChannel.connectionKey(device.key, nonce: nonce)
        var opener = WebChannel.Opener(key: key, direction: .toNode)
        guard case .binary(let frame) = try await messages.next(), let plain = opener.open(Array(buffer: frame)),
            case .open(let since) = FromPage(json: plain)
        else { return nil }
        return (device, since ?? 0, opener, WebChannel.Sealer(key: key, direction: .toPage))
    }

    /// A pairing attempt (`pair`, then `proof`): CPace with the code the page names, the node
    /// answering as its responder; `true` once the device is paired.
    private func pair(
        code kindName: String?, sid: String?, pub: String?, name: String, _ messages: inout WebSocketMessages,
        _ outbound: WebSocketWriter
    ) async throws -> Bool {
        let address = channel.remoteAddress?.ipAddress ?? "?"
        guard let kind = kindName.flatMap(WebPairing.CodeKind.init(rawValue:)),
            let sid = sid.flatMap(WebChannel.bytes(base64url:)), (16...64).contains(sid.count),
            let pagePublic = pub.flatMap(WebChannel.bytes(base64url:)), pagePublic.count == 32
        else {
            try await Self.say(.error("that is not a pairing request"), outbound)
            return false
        }
        let code: PairingCode
        switch hub.beginPairing(kind, from: address, now: clock.monotonic()) {
        case .code(let offered): code = offered
        case .noCode:
            try await Self.say(.error("wrong or expired code"), outbound)
            return false
        case .tooMany(let retryAfter):
            try await Self.say(.error("too many attempts: wait \(max(1, retryAfter.milliseconds / 1000)) s"), outbound)
            return false
        }
        guard let exchange = WebChannel.PairingExchange(code: code, sid: sid, page: pagePublic, scalar: WebHub.randomBytes(32))
        else {
            _ = finish(kind, code, proven: false, deviceKey: [], name, address)
            try await Self.say(.error("that is not a pairing request"), outbound)
            return false
        }
        try await Self.say(.pair(pub: exchange.publicKey), outbound)
        guard case .proof(let proof?) = Self.clear(try await messages.next()), let tag = WebChannel.bytes(base64url: proof)
        else {
            _ = finish(kind, code, proven: false, deviceKey: [], name, address)
            return false
        }
        let expected = WebChannel.pairTag(exchange.confirm, page: pagePublic, node: exchange.publicKey, code: "", by: .page)
        let verdict = finish(kind, code, proven: WebChannel.tagMatches(tag, expected), deviceKey: exchange.device, name, address)
        switch verdict {
        case .paired(let device, _):
            let mine = WebChannel.pairTag(exchange.confirm, page: pagePublic, node: exchange.publicKey, code: "", by: .node)
            try await Self.say(.paired(device: device.id, name: device.name, tag: mine), outbound)
            await hub.inputs(.paired(name: device.name))
            return true
        case .wrong, .noCode:
            try await Self.say(.error("wrong or expired code"), outbound)
        case .wornOut:
            try await Self.say(.error("wrong or expired code"), outbound)
            await hub.inputs(.codeWornOut)
        case .full:
            try await Self.say(
                .error("this node has \(WebPairing.maximumDevices) devices paired: unpair one first (/web revoke NAME)"), outbound)
        }
        return false
    }

    /// Ends a pairing attempt with the hub (``WebHub/finishPairing(_:code:proven:deviceKey:name:from:at:now:)``).
    private func finish(
        _ kind: WebPairing.CodeKind, _ code: PairingCode, proven: Bool, deviceKey: [UInt8], _ name: String, _ address: String
    ) -> WebPairing.Verdict {
        hub.finishPairing(
            kind, code: code, proven: proven, deviceKey: deviceKey, name: name, from: address, at: clock.wall(),
            now: clock.monotonic())
    }

    // MARK: The session

    /// A photo a page is sending, part by part (``WebConnection/photoPartBytes`` each).
    struct PhotoUpload {
        var bytes: [UInt8] = []
        var parts = 0
        var failed: String?

        mutating func add(part n: Int?, base64: String?) {
            guard failed == nil else { return }
            guard n == parts, let base64, let data = Data(base64Encoded: base64), data.count <= WebConnection.photoPartBytes else {
                failed = "a photo's part arrived out of order or broken: send it again"
                return
            }
            guard bytes.count + data.count <= WebConnection.maximumPhotoBytes else {
                failed = "a photo from a phone is at most \(WebConnection.maximumPhotoBytes / 1_048_576) MiB: the page scales it down first"
                return
            }
            bytes += data
            parts += 1
        }
    }

    /// The link's delay, shared by the pinging task and the reader (``LinkDelay``).
    private final class LinkTiming: Sendable {
        let state = Mutex(LinkDelay())
    }

    private func session(
        device: WebDevice, since: Int, opener: WebChannel.Opener, sealer: WebChannel.Sealer,
        _ messages: inout WebSocketMessages, _ outbound: WebSocketWriter
    ) async throws {
        guard let (session, outbox) = hub.open(device: device.id, since: since) else { return }
        defer { hub.close(session: session) }
        await hub.inputs(.opened)
        let link = LinkTiming()
        var opener = opener
        var upload = PhotoUpload()
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Out: the outbox, sealed in order; a `bye` ends it.
            group.addTask { [channel] in
                var sealer = sealer
                for await item in outbox {
                    switch item {
                    case .json(let json):
                        try await outbound.write(.binary(ByteBuffer(bytes: sealer.seal(Array(json.utf8)))))
                    case .bytes(let bytes):
                        try await outbound.write(.binary(ByteBuffer(bytes: sealer.seal(bytes))))
                    case .bye(let reason):
                        let bye = ToPage.bye(reason: reason).json
                        try await outbound.write(.binary(ByteBuffer(bytes: sealer.seal(Array(bye.utf8)))))
                        try? await outbound.close(.normalClosure, reason: reason)
                        channel.close(promise: nil)
                        return
                    }
                }
                channel.close(promise: nil)  // dropped for falling behind, or closed
            }
            // Pings: five quickly, then every two seconds.
            group.addTask { [hub, clock] in
                for round in 0... {
                    let id = link.state.withLock { $0.ping(now: clock.monotonic()) }
                    hub.send(ToPage.ping(id: id).json, to: session)
                    try await Task.sleep(for: round < 5 ? .milliseconds(200) : Self.pingEvery)
                }
            }
            // In: each frame opened and acted on.
            while let message = try await messages.next() {
                let arrived = clock.wall()
                guard case .binary(let frame) = message, let plain = opener.open(Array(buffer: frame)),
                    let said = FromPage(json: plain)
                else { break }
                switch said {
                case .ping(let id):
                    hub.send(ToPage.pong(id: id ?? 0).json, to: session)
                case .pong(let id):
                    if let id { link.state.withLock { $0.pong(id, now: clock.monotonic()) } }
                case .line(let text):
                    if let text { await hub.inputs(.line(text, at: arrived)) }
                case .now(let label):
                    let oneWay = link.state.withLock { $0.oneWay }
                    await hub.inputs(.mark(label: label, at: arrived, linkDelay: oneWay))
                case .pause: await hub.inputs(.pause(at: arrived))
                case .resume: await hub.inputs(.resume(at: arrived))
                case .listen(let on): await hub.inputs(.listen(on ?? true, at: arrived))
                case .passphrase(let text): await hub.inputs(.passphrase(text))
                case .photoPart(let n, let data): upload.add(part: n, base64: data)
                case .photo(let parts, let caption):
                    let done = upload
                    upload = PhotoUpload()
                    if let failed = done.failed ?? (done.parts == parts && done.parts > 0 ? nil : "a photo arrived incomplete: send it again") {
                        await hub.inputs(.photoRefused(failed, session: session))
                    } else {
                        await hub.inputs(.photo(done.bytes, caption: caption ?? ""))
                    }
                case .getPicture(let root):
                    if let root { await hub.inputs(.picture(root: root, session: session)) }
                // Before the session, or a newer page's message: ignored.
                case .pair, .proof, .hello, .open, .unknown: break
                }
            }
            group.cancelAll()
        }
    }
}
