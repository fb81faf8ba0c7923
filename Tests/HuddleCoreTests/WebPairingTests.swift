import Testing

@testable import HuddleCore

@Suite(.offThePool) struct WebPairingTests {
    let start = MonotonicTime.start + .seconds(1_000)
    let typed: [UInt8] = [0x3a, 0x91, 0x0c, 0xff, 0x42]
    let secret = [UInt8](repeating: 0xa5, count: 16)
    let page = [UInt8](repeating: 1, count: 32)
    let node = [UInt8](repeating: 2, count: 32)
    let confirm = [UInt8](repeating: 3, count: 32)

    /// The page's proof that it knows `code` (docs/WEB.md, pairing step 4).
    func proof(_ code: String) -> [UInt8] { WebChannel.pairTag(confirm, page: page, node: node, code: code, by: .page) }

    /// `pairing.pair` with a proof of `code` from `address`.
    func guess(
        _ code: String, _ pairing: inout WebPairing, from address: String = "192.168.1.23", at now: MonotonicTime
    ) -> WebPairing.Verdict {
        pairing.pair(
            proof: proof(code), page: page, node: node, confirm: confirm, deviceKey: [9], name: "phone", id: [1],
            from: address, at: .epoch, now: now)
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
        var verdicts: [WebPairing.Verdict] = []
        for index in 0..<(WebPairing.wrongGuessesPerCode + 10) {
            verdicts.append(guess("0000AAAA", &pairing, from: "10.0.\(index / 250).\(index % 250)", at: start + .milliseconds(index)))
        }
        #expect(verdicts.filter { $0 == .wrong }.count == WebPairing.wrongGuessesPerCode - 1 + 10)
        #expect(verdicts[WebPairing.wrongGuessesPerCode - 1] == .wornOut)
        // Worn out: the right typed code no longer pairs, from a fresh address; the QR secret does.
        #expect(guess(offer.typed.letters, &pairing, from: "192.168.1.23", at: start + .seconds(1)) == .wrong)
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

    @Test func aProofPairsOnlyWithTheCodeItWasMadeWith() {
        var pairing = WebPairing()
        let offer = pairing.offer(typed: typed, secret: secret, now: start)
        func pair(_ tag: [UInt8]) -> WebPairing.Verdict {
            pairing.pair(
                proof: tag, page: page, node: node, confirm: confirm, deviceKey: [9], name: "phone", id: [1], from: "192.168.1.23",
                at: .epoch, now: start)
        }
        #expect(pair(proof("0000AAAA")) == .wrong)
        // A proof by the node (the other nonce) is not the page's.
        #expect(pair(WebChannel.pairTag(confirm, page: page, node: node, code: offer.secret.letters, by: .node)) == .wrong)
        guard case .paired(let device, let code) = pair(proof(offer.secret.letters)) else {
            Issue.record("the QR secret's proof did not pair")
            return
        }
        #expect(code == offer.secret.letters && device.key == [9])
        #expect(pair(proof(offer.secret.letters)) == .noCode)
    }
}
