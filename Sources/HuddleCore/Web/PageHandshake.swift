/// One WebSocket message from a page, as it came: text (said in the clear) or binary (sealed).
public enum PageFrame: Sendable, Equatable {
    case text([UInt8])
    case binary([UInt8])
}

/// One page's way from connecting to its open session (docs/WEB.md, "Pairing" and "A session"):
/// pairing first if it asks to (`pair`, `proof`), then `hello`, the node's `challenge`, and the
/// page's sealed `open`. Pure: the time, the node's ``WebPairing`` (shared by every connection)
/// and the randomness are passed in; the shell only moves bytes and does the ``Step``s.
///
/// - The page has ``deadline`` to pair or to open, or the connection closes; a pairing done
///   gives it the same time again to open (on a lossy link the two can take longer together).
/// - Whatever does not fit the phase closes the connection, said why where the page may hear it.
///
/// ```swift
/// var handshake = PageHandshake(from: "192.168.1.23", now: now)
/// let steps = handshake.receive(.text(bytes), pairing: &pairing, now: now, wall: wall, random: random)
/// // say each `.reply`; keep a `.paired` device; then close if `isClosed`, or serve `opened`
/// ```
public struct PageHandshake: Sendable {
    /// From connecting to the end of a pairing, and from then (or from connecting) to `open`.
    public static let timeAllowed = TimeSpan.seconds(10)

    /// Where the page is on its way to a session.
    public enum Phase: Sendable {
        /// Waiting for the page's first word: `pair` or `hello`.
        case greeting
        /// `pair` was answered with the node's share: waiting for the page's proof.
        case proving(Attempt)
        /// Paired: waiting for `hello`.
        case paired
        /// `challenge` was sent: waiting for the sealed `open`.
        case challenged(WebDevice, connectionKey: [UInt8])
        case open(Opened)
        case closed
    }

    /// A pairing under way: the code it runs with and CPace's keys for the page's share.
    public struct Attempt: Sendable {
        let kind: WebPairing.CodeKind
        let code: PairingCode
        let exchange: WebChannel.PairingExchange
        let pageShare: [UInt8]
        let name: String
    }

    /// A session opened: the device, the last line the page showed, and the connection's keys.
    public struct Opened: Sendable {
        public let device: WebDevice
        public let since: Int
        public let opener: WebChannel.Opener
        public let sealer: WebChannel.Sealer
    }

    /// Why a page was refused (worded by the shell: ``ToPage``'s `error`).
    public enum Refusal: Sendable, Equatable {
        case notAPairingRequest
        case wrongOrExpiredCode
        case tooManyAttempts(retryAfter: TimeSpan)
        /// ``WebPairing/maximumDevices`` are paired already.
        case devicesFull
    }

    /// What the node says to the page in the clear.
    public enum Reply: Sendable, Equatable {
        /// CPace's answer to `pair`: the node's share.
        case pair(share: [UInt8])
        case paired(device: String, name: String, tag: [UInt8])
        case refused(Refusal)
        /// `hello` named no paired device.
        case unpaired
        case challenge(nonce: [UInt8])
    }

    /// What the shell does after a message, in order.
    public enum Step: Sendable, Equatable {
        /// Say this to the page in the clear.
        case reply(Reply)
        /// A device was paired: keep it in the store, tell the viewer.
        case paired(WebDevice)
        /// The typed code was guessed at too often and no longer pairs: tell the viewer.
        case codeWornOut
    }

    public private(set) var phase: Phase = .greeting
    /// When the connection closes unless the page has opened its session.
    public private(set) var deadline: MonotonicTime
    /// Where the page connects from: its wrong guesses at the typed code count against it.
    let address: String

    public init(from address: String, now: MonotonicTime) {
        self.address = address
        deadline = now + Self.timeAllowed
    }

    /// The session, once the page opened it.
    public var opened: Opened? {
        if case .open(let opened) = phase { opened } else { nil }
    }

    public var isClosed: Bool {
        if case .closed = phase { true } else { false }
    }

    /// Closes the handshake if its deadline passed before the page opened a session; `true` if so.
    public mutating func expire(now: MonotonicTime) -> Bool {
        guard opened == nil, !isClosed, now >= deadline else { return false }
        phase = .closed
        return true
    }

    /// One message from the page at `now` (`wall` dates a device paired). `random(n)` gives `n`
    /// fresh random bytes: CPace's scalar, a device's id, the challenge's nonce.
    public mutating func receive(
        _ frame: PageFrame, pairing: inout WebPairing, now: MonotonicTime, wall: WallTime, random: (Int) -> [UInt8]
    ) -> [Step] {
        if expire(now: now) { return [] }
        switch phase {
        case .greeting:
            guard let said = Self.clear(frame) else { return close() }
            if case .pair(let code, let sid, let share, let name) = said {
                return begin(code: code, sid: sid, share: share, name: name ?? "phone", &pairing, now: now, wall: wall, random: random)
            }
            return hello(said, pairing, random: random)
        case .proving(let attempt):
            return prove(attempt, Self.clear(frame), &pairing, now: now, wall: wall, random: random)
        case .paired:
            guard let said = Self.clear(frame) else { return close() }
            return hello(said, pairing, random: random)
        case .challenged(let device, let key):
            // A device revoked since its `hello` opens nothing.
            var opener = WebChannel.Opener(key: key, direction: .toNode)
            guard case .binary(let sealed) = frame, let plain = opener.open(sealed), case .open(let since) = FromPage(json: plain),
                pairing.device(id: device.id)?.key == device.key
            else { return close() }
            let sealer = WebChannel.Sealer(key: key, direction: .toPage)
            phase = .open(Opened(device: device, since: since ?? 0, opener: opener, sealer: sealer))
            return []
        case .open, .closed:
            return []
        }
    }

    /// What a page says in the clear (`pair`, `proof`, `hello`): text, and short.
    static func clear(_ frame: PageFrame) -> FromPage? {
        guard case .text(let bytes) = frame, bytes.count <= FromPage.maximumClearBytes else { return nil }
        return FromPage(json: bytes)
    }

    private mutating func close(_ reply: Reply? = nil) -> [Step] {
        phase = .closed
        return reply.map { [.reply($0)] } ?? []
    }

    /// `pair`: CPace with the code the page names, the node answering as its responder.
    private mutating func begin(
        code kindName: String?, sid: String?, share: String?, name: String, _ pairing: inout WebPairing, now: MonotonicTime,
        wall: WallTime, random: (Int) -> [UInt8]
    ) -> [Step] {
        guard let kind = kindName.flatMap(WebPairing.CodeKind.init(rawValue:)),
            let sid = sid.flatMap(WebChannel.bytes(base64url:)), (16...64).contains(sid.count),
            let pageShare = share.flatMap(WebChannel.bytes(base64url:)), pageShare.count == 32
        else { return close(.refused(.notAPairingRequest)) }
        let code: PairingCode
        switch pairing.begin(kind, from: address, now: now) {
        case .code(let offered): code = offered
        case .noCode: return close(.refused(.wrongOrExpiredCode))
        case .tooMany(let retryAfter): return close(.refused(.tooManyAttempts(retryAfter: retryAfter)))
        }
        guard let exchange = WebChannel.PairingExchange(code: code, sid: sid, page: pageShare, scalar: random(32)) else {
            // A low-order share: the attempt was counted, and fails.
            _ = pairing.finish(kind, code: code, proven: false, name: name, key: [], id: [], from: address, at: wall, now: now)
            return close(.refused(.notAPairingRequest))
        }
        phase = .proving(Attempt(kind: kind, code: code, exchange: exchange, pageShare: pageShare, name: name))
        return [.reply(.pair(share: exchange.publicKey))]
    }

    /// `proof`: whether the page ran CPace with the same code; paired if it did.
    private mutating func prove(
        _ attempt: Attempt, _ said: FromPage?, _ pairing: inout WebPairing, now: MonotonicTime, wall: WallTime,
        random: (Int) -> [UInt8]
    ) -> [Step] {
        let exchange = attempt.exchange
        let expected = WebChannel.pairTag(exchange.confirm, page: attempt.pageShare, node: exchange.publicKey, code: "", by: .page)
        var tag: [UInt8]?
        if case .proof(let proof?) = said { tag = WebChannel.bytes(base64url: proof) }
        let verdict = pairing.finish(
            attempt.kind, code: attempt.code, proven: tag.map { WebChannel.tagMatches($0, expected) } ?? false,
            name: attempt.name, key: exchange.device, id: random(16), from: address, at: wall, now: now)
        // A proof that is not one is not answered: the page is not speaking the protocol.
        let answer: (Reply) -> Reply? = { tag == nil ? nil : $0 }
        switch verdict {
        case .paired(let device, _):
            phase = .paired
            deadline = now + Self.timeAllowed
            let mine = WebChannel.pairTag(exchange.confirm, page: attempt.pageShare, node: exchange.publicKey, code: "", by: .node)
            return [.reply(.paired(device: device.id, name: device.name, tag: mine)), .paired(device)]
        case .wrong, .noCode:
            return close(answer(.refused(.wrongOrExpiredCode)))
        case .wornOut:
            return close(answer(.refused(.wrongOrExpiredCode))) + [.codeWornOut]
        case .full:
            return close(answer(.refused(.devicesFull)))
        }
    }

    /// `hello`: the device's challenge, or `unpaired`.
    private mutating func hello(_ said: FromPage, _ pairing: WebPairing, random: (Int) -> [UInt8]) -> [Step] {
        guard case .hello(let id?) = said, let device = pairing.device(id: id) else { return close(.unpaired) }
        let nonce = random(12)
        let key = WebChannel.connectionKey(device.key, nonce: nonce)
        phase = .challenged(device, connectionKey: key)
        return [.reply(.challenge(nonce: nonce))]
    }
}
