/// Who may use the node's page (docs/WEB.md, "Pairing"): the codes on offer and the devices
/// paired with them. Pure: the randomness and the time are passed in.
///
/// - Each ``offer(typed:secret:now:)`` makes a new typed code (40 bits) and a QR secret (128),
///   and withdraws the ones before it; both expire after ``codeLifetime``, and the first pairing
///   with either uses both up.
/// - Attempts are counted together, whoever makes them: ``attemptsPerMinute`` a minute. A flood
///   of guesses gets nowhere (5 a minute for 5 minutes is 25 guesses of 2^40) and leaves the
///   node's other work alone.
///
/// ```swift
/// var pairing = WebPairing()
/// let offer = pairing.offer(typed: random(5), secret: random(16), now: now)  // shown in the terminal
/// guard case .allowed(let codes) = pairing.attempt(now: now) else { … }     // try each code's tag
/// let device = pairing.paired(using: code, name: "phone", key: k, id: random(16), at: wall, now: now)
/// ```
public struct WebPairing: Sendable {
    /// How long a code is good for.
    public static let codeLifetime = TimeSpan.seconds(300)
    /// Attempts, right or wrong, from anyone, in a minute.
    public static let attemptsPerMinute = 5
    /// Most devices paired at once (a viewer's phone and tablet, a friend's phone).
    public static let maximumDevices = 16

    /// The codes shown now, and until when they are good.
    public struct Offer: Sendable, Equatable {
        public var typed: PairingCode
        public var secret: PairingCode
        public var expires: MonotonicTime
    }

    /// What a pairing attempt came to (``pair(proof:page:node:confirm:deviceKey:name:id:at:now:)``).
    public enum Verdict: Sendable, Equatable {
        case paired(WebDevice, code: String)
        /// The proof matches no code on offer.
        case wrong
        /// No code is on offer (none shown, or it expired or was used).
        case noCode
        /// The code was right, but ``maximumDevices`` are paired already.
        case full
        case tooMany(retryAfter: TimeSpan)
    }

    /// A page's proof (docs/WEB.md, pairing step 4), checked against the codes on offer within
    /// the attempts' budget: if it proves one, the device is paired under `id` (16 random bytes)
    /// with `deviceKey`, the key the pairing's exchange gave.
    public mutating func pair(
        proof: [UInt8], page: [UInt8], node: [UInt8], confirm: [UInt8], deviceKey: [UInt8], name: String, id: [UInt8],
        at wall: WallTime, now: MonotonicTime
    ) -> Verdict {
        switch attempt(now: now) {
        case .tooMany(let retryAfter): return .tooMany(retryAfter: retryAfter)
        case .noCode: return .noCode
        case .allowed(let codes):
            let proven = codes.first { code in
                WebChannel.tagMatches(proof, WebChannel.pairTag(confirm, page: page, node: node, code: code, by: .page))
            }
            guard let code = proven else { return .wrong }
            guard let device = paired(using: code, name: name, key: deviceKey, id: id, at: wall, now: now) else {
                return devices.count >= Self.maximumDevices ? .full : .noCode
            }
            return .paired(device, code: code)
        }
    }

    /// What an attempt may do.
    public enum Attempt: Sendable, Equatable {
        /// Check the page's tag against each of these codes' letters.
        case allowed([String])
        /// No code is on offer (none shown, or it expired or was used).
        case noCode
        /// Too many attempts: try again after this long.
        case tooMany(retryAfter: TimeSpan)
    }

    public private(set) var offer: Offer?
    public private(set) var devices: [WebDevice]
    private var attempts: [MonotonicTime] = []

    public init(devices: [WebDevice] = []) {
        self.devices = devices
    }

    /// New codes from `typed` (5 random bytes) and `secret` (16), replacing any on offer.
    @discardableResult
    public mutating func offer(typed: [UInt8], secret: [UInt8], now: MonotonicTime) -> Offer {
        precondition(typed.count >= 5 && secret.count >= 16, "a typed code needs 40 bits, a QR secret 128")
        let offer = Offer(typed: PairingCode(random: typed), secret: PairingCode(random: secret), expires: now + Self.codeLifetime)
        self.offer = offer
        return offer
    }

    /// Takes one attempt from the budget, and says which codes it may be checked against.
    public mutating func attempt(now: MonotonicTime) -> Attempt {
        attempts.removeAll { now - $0 >= .seconds(60) }
        if attempts.count >= Self.attemptsPerMinute {
            return .tooMany(retryAfter: attempts[0] + .seconds(60) - now)
        }
        attempts.append(now)
        guard let offer, now < offer.expires else {
            offer = nil
            return .noCode
        }
        return .allowed([offer.typed.letters, offer.secret.letters])
    }

    /// A page proved it knows the code on offer: the codes are used up and the device is kept
    /// under `name` (or `name-2`, `name-3`… when taken). `nil` if the code is not on offer any
    /// more (used or expired meanwhile) or ``maximumDevices`` are paired.
    public mutating func paired(
        using code: String, name: String, key: [UInt8], id: [UInt8], at: WallTime, now: MonotonicTime
    ) -> WebDevice? {
        guard let offer, now < offer.expires, code == offer.typed.letters || code == offer.secret.letters,
            devices.count < Self.maximumDevices
        else { return nil }
        self.offer = nil
        let device = WebDevice(id: WebDevice.idText(id), name: freeName(WebDevice.cleanName(name)), key: key, pairedAt: at)
        devices.append(device)
        return device
    }

    /// The device with this id, if paired.
    public func device(id: String) -> WebDevice? {
        devices.first { $0.id == id }
    }

    /// Forgets the device called `name`; returns it, or `nil` if none is.
    public mutating func revoke(name: String) -> WebDevice? {
        guard let index = devices.firstIndex(where: { $0.name == name }) else { return nil }
        return devices.remove(at: index)
    }

    private func freeName(_ name: String) -> String {
        let taken = Set(devices.map(\.name))
        guard taken.contains(name) else { return name }
        var number = 2
        while taken.contains("\(name)-\(number)") { number += 1 }
        return "\(name)-\(number)"
    }
}

/// A phone or tablet paired with the node: it opens sessions with ``key``, which never crosses
/// the network after pairing.
public struct WebDevice: Sendable, Equatable {
    /// 32 hex digits, random: what the page says it is in `hello`.
    public var id: String
    /// What `/web devices` lists and `/web revoke` takes.
    public var name: String
    public var key: [UInt8]
    public var pairedAt: WallTime

    public init(id: String, name: String, key: [UInt8], pairedAt: WallTime) {
        self.id = id
        self.name = name
        self.key = key
        self.pairedAt = pairedAt
    }

    static func idText(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined()
    }

    /// A name a page asked for, as kept: letters, digits, `-` and `_` (others become `-`), at most
    /// 24, `phone` if nothing is left. One word, so `/web revoke NAME` takes it.
    public static func cleanName(_ asked: String) -> String {
        var name = ""
        for character in asked.prefix(24) {
            name.append(character.isLetter || character.isNumber || character == "_" ? character : "-")
        }
        name = String(name.drop { $0 == "-" }.reversed().drop { $0 == "-" }.reversed())
        return name.isEmpty ? "phone" : name
    }
}
