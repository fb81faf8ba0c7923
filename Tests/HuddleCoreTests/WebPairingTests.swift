import Testing

@testable import HuddleCore

@Suite(.offThePool) struct WebPairingTests {
    let start = MonotonicTime.start + .seconds(1_000)
    let typed: [UInt8] = [0x3a, 0x91, 0x0c, 0xff, 0x42]
    let secret = [UInt8](repeating: 0xa5, count: 16)

    /// What an attempt came to, from its begin to its finish.
    enum Attempt: Equatable {
        case paired, wrong, noCode, full, wornOut
        case tooMany(retryAfter: TimeSpan)
    }

    /// A pairing attempt from `address` with `code` as the page knows it: begun with the kind of
    /// code it is (longer than 8 letters: the QR's secret), and proven right when it is the code
    /// on offer (what CPace's tags show; CPaceTests check those).
    func guess(_ code: String, _ pairing: inout WebPairing, from address: String = "192.168.1.23", at now: MonotonicTime)
        -> Attempt
    {
        let kind: WebPairing.CodeKind = code.count > 8 ? .qr : .typed
        switch pairing.begin(kind, from: address, now: now) {
        case .noCode: return .noCode
        case .tooMany(let retryAfter): return .tooMany(retryAfter: retryAfter)
        case .code(let offered):
            switch pairing.finish(
                kind, code: offered, proven: offered.letters == code, name: "phone", key: [9], id: [1], from: address,
                at: .epoch, now: now)
            {
            case .paired: return .paired
            case .wrong: return .wrong
            case .noCode: return .noCode
            case .full: return .full
            case .wornOut: return .wornOut
            }
        }
    }

    @Test func codesHoldTheirBitsAndReadAsPeopleTypeThem() {
        let code = PairingCode(random: typed)
        #expect(code.letters.count == 8)
        #expect(code.bits == 40)
        #expect(code.grouped == String(code.letters.prefix(4)) + "-" + String(code.letters.suffix(4)))
        #expect(PairingCode(random: secret).bits >= 128)
        #expect(PairingCode(random: [0, 0, 0, 0, 0]).letters == "00000000")
        #expect(PairingCode(random: [0xff, 0xff, 0xff, 0xff, 0xff]).letters == "ZZZZZZZZ")
        #expect(PairingCode.normalized(" 7k3m-q9tx ") == "7K3MQ9TX")
        #expect(PairingCode.normalized("oil") == "011")
    }

    @Test func aCodePairsOnceAndIsUsedUp() throws {
        var pairing = WebPairing()
        let offer = pairing.offer(typed: typed, secret: secret, now: start)
        let paired = pairing.paired(using: offer.typed.letters, name: "phone", key: [1], id: [0xab, 0x01], at: .epoch, now: start)
        let device = try #require(paired)
        #expect(device.id == "ab01")
        #expect(device.name == "phone")
        #expect(pairing.device(id: "ab01") == device)
        // Used: neither code is on offer any more.
        #expect(guess(offer.secret.letters, &pairing, at: start) == .noCode)
        #expect(pairing.paired(using: offer.secret.letters, name: "tablet", key: [2], id: [2], at: .epoch, now: start) == nil)
    }

    @Test func codesExpireAfterFiveMinutes() {
        var pairing = WebPairing()
        let offer = pairing.offer(typed: typed, secret: secret, now: start)
        let late = start + WebPairing.codeLifetime
        #expect(pairing.paired(using: offer.typed.letters, name: "phone", key: [1], id: [1], at: .epoch, now: late) == nil)
        #expect(guess(offer.typed.letters, &pairing, at: late) == .noCode)
    }

    @Test func aNewOfferWithdrawsTheOldCodes() {
        var pairing = WebPairing()
        let old = pairing.offer(typed: typed, secret: secret, now: start)
        let new = pairing.offer(typed: [1, 2, 3, 4, 5], secret: [UInt8](repeating: 7, count: 16), now: start)
        #expect(pairing.paired(using: old.typed.letters, name: "phone", key: [1], id: [1], at: .epoch, now: start) == nil)
        #expect(pairing.paired(using: new.typed.letters, name: "phone", key: [1], id: [1], at: .epoch, now: start) != nil)
    }

    @Test func wrongGuessesAreCountedPerAddressAndARightAnswerSpendsNothing() {
        var pairing = WebPairing()
        let offer = pairing.offer(typed: typed, secret: secret, now: start)
        let stranger = "192.168.1.66"
        for second in 0..<WebPairing.wrongGuessesPerMinute {
            #expect(guess("0000AAAA", &pairing, from: stranger, at: start + .seconds(second)) == .wrong)
        }
        // The stranger waits, and is told when his own first guess leaves the minute.
        #expect(guess("0000AAAB", &pairing, from: stranger, at: start + .seconds(10)) == .tooMany(retryAfter: .seconds(50)))
        // Even the right code waits behind his own wrong ones…
        #expect(guess(offer.typed.letters, &pairing, from: stranger, at: start + .seconds(11)) == .tooMany(retryAfter: .seconds(49)))
        // …but the QR secret is always checked, from anywhere, and pairs.
        guard case .paired = guess(offer.secret.letters, &pairing, from: stranger, at: start + .seconds(12)) else {
            Issue.record("the QR secret did not pair from an address out of guesses")
            return
        }
        // A friend's right code, typed while the stranger guesses, pairs at the first try.
        let second = pairing.offer(typed: [1, 2, 3, 4, 5], secret: [UInt8](repeating: 7, count: 16), now: start + .seconds(13))
        #expect(guess("0000AAAC", &pairing, from: stranger, at: start + .seconds(14)) == .tooMany(retryAfter: .seconds(46)))
        guard case .paired = guess(second.typed.letters, &pairing, from: "192.168.1.23", at: start + .seconds(15)) else {
            Issue.record("a friend's right code waited behind a stranger's guesses")
            return
        }
        // A minute after his first guess, the stranger may guess again.
        pairing.offer(typed: typed, secret: secret, now: start + .seconds(59))
        #expect(guess("0000AAAA", &pairing, from: stranger, at: start + .seconds(60)) == .wrong)
    }

    /// An attempt counts from its start: a stranger opening many at once from one address gets
    /// five under way, not one per connection; an attempt that proves right is given back.
    @Test func attemptsCountFromTheirStartAndARightOneIsGivenBack() {
        var pairing = WebPairing()
        let offer = pairing.offer(typed: typed, secret: secret, now: start)
        let begun = (0..<8).map { _ in pairing.begin(.typed, from: "192.168.1.66", now: start) }
        #expect(begun.prefix(5).allSatisfy { $0 == .code(offer.typed) })
        #expect(begun.suffix(3).allSatisfy { $0 == .tooMany(retryAfter: .seconds(60)) })
        // A friend at another address: one under way, then proven right, and his budget is whole.
        for round in 0..<6 {
            let fresh = pairing.offer(typed: [UInt8(round), 1, 2, 3, 4], secret: secret, now: start)
            guard case .code(let code) = pairing.begin(.typed, from: "192.168.1.23", now: start) else {
                Issue.record("round \(round): the friend was refused")
                return
            }
            #expect(code == fresh.typed)
            let verdict = pairing.finish(.typed, code: code, proven: true, name: "p", key: [1], id: [UInt8(round)], from: "192.168.1.23", at: .epoch, now: start)
            guard case .paired = verdict else {
                Issue.record("round \(round): \(verdict)")
                return
            }
        }
    }

    @Test func rightAnswersDoNotSpendTheBudget() {
        var pairing = WebPairing()
        for round in 0..<(2 * WebPairing.wrongGuessesPerMinute) {
            let offer = pairing.offer(typed: [UInt8(round), 2, 3, 4, 5], secret: secret, now: start)
            guard case .paired = guess(offer.typed.letters, &pairing, at: start + .seconds(round)) else {
                Issue.record("pairing \(round) in a minute was refused")
                return
            }
        }
    }

    @Test func aCodeGuessedAtTooOftenFromManyAddressesNoLongerPairs() {
        var pairing = WebPairing()
        let offer = pairing.offer(typed: typed, secret: secret, now: start)
        var verdicts: [Attempt] = []
        for index in 0..<(WebPairing.wrongGuessesPerCode + 10) {
            verdicts.append(guess("0000AAAA", &pairing, from: "10.0.\(index / 250).\(index % 250)", at: start + .milliseconds(index)))
        }
        #expect(verdicts.filter { $0 == .wrong }.count == WebPairing.wrongGuessesPerCode - 1)
        #expect(verdicts[WebPairing.wrongGuessesPerCode - 1] == .wornOut)
        #expect(verdicts.suffix(10).allSatisfy { $0 == .noCode }, "as if no typed code were on offer")
        // Worn out: the right typed code no longer pairs, from a fresh address; the QR secret does.
        #expect(guess(offer.typed.letters, &pairing, from: "192.168.1.23", at: start + .seconds(1)) == .noCode)
        guard case .paired = guess(offer.secret.letters, &pairing, from: "192.168.1.23", at: start + .seconds(2)) else {
            Issue.record("the QR secret did not pair once the typed code was worn out")
            return
        }
        // One stranger with 8 addresses, 5 guesses a minute each for the code's 5 minutes, does
        // not wear a code out: a friend's right code still pairs at the end.
        let fresh = pairing.offer(typed: [9, 9, 9, 9, 9], secret: [UInt8](repeating: 8, count: 16), now: start + .seconds(100))
        for minute in 0..<5 {
            for host in 0..<8 {
                for guessNumber in 0..<WebPairing.wrongGuessesPerMinute {
                    let at = start + .seconds(100 + 60 * minute + guessNumber)
                    #expect(guess("0000AAAA", &pairing, from: "10.9.9.\(host)", at: at) == .wrong)
                }
            }
        }
        guard case .paired = guess(fresh.typed.letters, &pairing, at: start + .seconds(100 + 290)) else {
            Issue.record("8 addresses guessing for the code's life wore it out")
            return
        }
    }

    @Test func namesAreOneWordAndUniqueAndRevokable() throws {
        var pairing = WebPairing()
        var names: [String] = []
        for (index, asked) in ["Ana's iPhone", "Ana's iPhone", "", "<script>"].enumerated() {
            let offer = pairing.offer(typed: typed, secret: secret, now: start)
            let paired = pairing.paired(using: offer.typed.letters, name: asked, key: [1], id: [UInt8(index)], at: .epoch, now: start)
            let device = try #require(paired)
            names.append(device.name)
        }
        #expect(names == ["Ana-s-iPhone", "Ana-s-iPhone-2", "phone", "script"])
        #expect(pairing.revoke(name: "Ana-s-iPhone")?.id == "00")
        #expect(pairing.revoke(name: "Ana-s-iPhone") == nil)
        #expect(pairing.device(id: "00") == nil)
        #expect(pairing.devices.map(\.name) == ["Ana-s-iPhone-2", "phone", "script"])
    }

    @Test func atMostSixteenDevices() {
        var pairing = WebPairing()
        for index in 0..<WebPairing.maximumDevices {
            let offer = pairing.offer(typed: typed, secret: secret, now: start)
            _ = pairing.paired(using: offer.typed.letters, name: "p", key: [1], id: [UInt8(index)], at: .epoch, now: start)
        }
        let offer = pairing.offer(typed: typed, secret: secret, now: start)
        #expect(pairing.paired(using: offer.typed.letters, name: "p", key: [1], id: [99], at: .epoch, now: start) == nil)
    }
}
