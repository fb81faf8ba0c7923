/// Who may use the node's page (docs/WEB.md, "Pairing"): the codes on offer and the devices
/// paired with them. Pure: the randomness and the time are passed in.
///
/// - Each ``offer(typed:secret:now:)`` makes a new typed code (40 bits) and a QR secret (128),
///   and withdraws the ones before it; both expire after ``codeLifetime``, and the first pairing
///   with either uses both up.
/// - A pairing runs CPace with one of them (``CPace``): ``begin(_:from:now:)`` gives the code,
///   the page's proof then says whether the page knew it (``finish(_:code:proven:name:key:id:from:at:now:)``).
///   Nobody can test codes offline against what a pairing sends: each guess is an attempt.
/// - Only guesses at the typed code are counted, and per address: ``wrongGuessesPerMinute``
///   from one address in a minute, then "wait". An attempt counts from its start and is given
///   back when it proves right, so a right answer spends nothing, and a stranger's guesses spend
///   nobody else's chance (one budget for everyone let one stranger keep every phone from
///   pairing, issue 45). The QR secret (128 bits) is never budgeted: nobody guesses it.
/// - A code takes at most ``wrongGuessesPerCode`` wrong guesses in all, from however many
///   addresses, then no longer pairs (the QR secret still does): a typed code's 2^40 hold against
///   any number of machines, and one stranger with 8 addresses (200 guesses in the code's 5
///   minutes) never wears it out.
///
/// ```swift
/// var pairing = WebPairing()
/// let offer = pairing.offer(typed: random(5), secret: random(16), now: now)  // shown in the terminal
/// guard case .code(let code) = pairing.begin(.typed, from: "192.168.1.23", now: now) else { refuse() }
/// // … CPace with code.letters, the page's proof checked …
/// let verdict = pairing.finish(.typed, code: code, proven: right, name: "phone", key: k, id: random(16),
///                              from: "192.168.1.23", at: wall, now: now)
/// ```
public struct WebPairing: Sendable {
    /// How long a code is good for.
    public static let codeLifetime = TimeSpan.seconds(300)
    /// Wrong guesses at the typed code from one address in a minute.
    public static let wrongGuessesPerMinute = 5
    /// Wrong guesses at one typed code in all, from everyone, before it no longer pairs.
    public static let wrongGuessesPerCode = 256
    /// Most devices paired at once (a viewer's phone and tablet, a friend's phone).
    public static let maximumDevices = 16

    /// The codes shown now, and until when they are good.
    public struct Offer: Sendable, Equatable {
        public var typed: PairingCode
        public var secret: PairingCode
        public var expires: MonotonicTime
    }

    /// Which code a pairing runs with: the one typed, or the QR's secret.
    public enum CodeKind: String, Sendable, Equatable {
        case typed
        case qr
    }

    /// What a pairing attempt may start with.
    public enum Begin: Sendable, Equatable {
        /// Run CPace with this code.
        case code(PairingCode)
        /// No code is on offer (none shown, expired, used, or a typed code worn out).
        case noCode
        /// This address guessed ``wrongGuessesPerMinute`` times in the last minute.
        case tooMany(retryAfter: TimeSpan)
    }

    /// What a pairing attempt came to (``finish(_:code:proven:name:key:id:from:at:now:)``).
    public enum Verdict: Sendable, Equatable {
        case paired(WebDevice, code: String)
        /// The page's proof was not the code's.
        case wrong
        /// No code is on offer (none shown, or it expired or was used).
        case noCode
        /// The code was right, but ``maximumDevices`` are paired already.
        case full
        /// Wrong, and the typed code has now been guessed at ``wrongGuessesPerCode`` times: it no
        /// longer pairs. Said once per code, for the viewer (the page hears "wrong").
        case wornOut
    }

    /// A pairing attempt from `address` with the code of `kind`: the code to run CPace with.
    /// An attempt at the typed code counts against the address and the code from now on; its
    /// ``finish(_:code:proven:name:key:id:from:at:now:)`` gives it back if it proves right.
    public mutating func begin(_ kind: CodeKind, from address: String, now: MonotonicTime) -> Begin {
        guard let offer, now < offer.expires else {
            self.offer = nil
            return .noCode
        }
        guard kind == .typed else { return .code(offer.secret) }
        wrongGuesses = wrongGuesses.compactMapValues { times in
            let recent = times.filter { now - $0 < .seconds(60) }
            return recent.isEmpty ? nil : recent
        }
        if let recent = wrongGuesses[address], recent.count >= Self.wrongGuessesPerMinute {
            return .tooMany(retryAfter: recent[0] + .seconds(60) - now)
        }
        guard wrongGuessesAtCode < Self.wrongGuessesPerCode else { return .noCode }
        wrongGuesses[address, default: []].append(now)
        wrongGuessesAtCode += 1
        return .code(offer.typed)
    }

    /// The end of an attempt ``begin(_:from:now:)`` started with `code`: `proven` when the page's
    /// proof was right for it. Right: the device is paired under `id` (16 random bytes) with
    /// `key`, the key the pairing gave, and the attempt is given back. Wrong: the guess stays
    /// counted.
    public mutating func finish(
        _ kind: CodeKind, code: PairingCode, proven: Bool, name: String, key: [UInt8], id: [UInt8], from address: String,
        at wall: WallTime, now: MonotonicTime
    ) -> Verdict {
        guard proven else {
            guard kind == .typed, wrongGuessesAtCode >= Self.wrongGuessesPerCode, !wornOutSaid, offer?.typed == code else {
                return .wrong
            }
            wornOutSaid = true
            return .wornOut
        }
        if kind == .typed, offer?.typed == code {
            wrongGuessesAtCode = max(0, wrongGuessesAtCode - 1)
            if var times = wrongGuesses[address], !times.isEmpty {
                times.removeLast()
                wrongGuesses[address] = times.isEmpty ? nil : times
            }
        }
        guard let device = paired(using: code.letters, name: name, key: key, id: id, at: wall, now: now) else {
            return devices.count >= Self.maximumDevices ? .full : .noCode
        }
        return .paired(device, code: code.letters)
    }

    public private(set) var offer: Offer?
    public private(set) var devices: [WebDevice]
    /// When each address guessed wrong in the last minute.
    private var wrongGuesses: [String: [MonotonicTime]] = [:]
    /// Wrong guesses at the typed code on offer, from everyone, and whether the viewer was told
    /// it wore out.
    private var wrongGuessesAtCode = 0
    private var wornOutSaid = false

    public init(devices: [WebDevice] = []) {
        self.devices = devices
    }

    /// New codes from `typed` (5 random bytes) and `secret` (16), replacing any on offer.
    @discardableResult
    public mutating func offer(typed: [UInt8], secret: [UInt8], now: MonotonicTime) -> Offer {
        precondition(typed.count >= 5 && secret.count >= 16, "a typed code needs 40 bits, a QR secret 128")
        let offer = Offer(typed: PairingCode(random: typed), secret: PairingCode(random: secret), expires: now + Self.codeLifetime)
        self.offer = offer
        wrongGuessesAtCode = 0
        wornOutSaid = false
        return offer
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
