import Testing

@testable import HuddleCore

@Suite(.offThePool) struct WebPairingTests {
    let start = MonotonicTime.start + .seconds(1_000)
    let typed: [UInt8] = [0x3a, 0x91, 0x0c, 0xff, 0x42]
    let secret = [UInt8](repeating: 0xa5, count: 16)

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
        #expect(pairing.attempt(now: start) == .allowed([offer.typed.letters, offer.secret.letters]))
        let paired = pairing.paired(using: offer.typed.letters, name: "phone", key: [1], id: [0xab, 0x01], at: .epoch, now: start)
        let device = try #require(paired)
        #expect(device.id == "ab01")
        #expect(device.name == "phone")
        #expect(pairing.device(id: "ab01") == device)
        // Used: neither code is on offer any more.
        #expect(pairing.attempt(now: start) == .noCode)
        #expect(pairing.paired(using: offer.secret.letters, name: "tablet", key: [2], id: [2], at: .epoch, now: start) == nil)
    }

    @Test func codesExpireAfterFiveMinutes() {
        var pairing = WebPairing()
        let offer = pairing.offer(typed: typed, secret: secret, now: start)
        let late = start + WebPairing.codeLifetime
        #expect(pairing.paired(using: offer.typed.letters, name: "phone", key: [1], id: [1], at: .epoch, now: late) == nil)
        #expect(pairing.attempt(now: late) == .noCode)
    }

    @Test func aNewOfferWithdrawsTheOldCodes() {
        var pairing = WebPairing()
        let old = pairing.offer(typed: typed, secret: secret, now: start)
        let new = pairing.offer(typed: [1, 2, 3, 4, 5], secret: [UInt8](repeating: 7, count: 16), now: start)
        #expect(pairing.paired(using: old.typed.letters, name: "phone", key: [1], id: [1], at: .epoch, now: start) == nil)
        #expect(pairing.paired(using: new.typed.letters, name: "phone", key: [1], id: [1], at: .epoch, now: start) != nil)
    }

    @Test func attemptsAreFiveAMinuteFromEveryoneTogether() {
        var pairing = WebPairing()
        pairing.offer(typed: typed, secret: secret, now: start)
        for second in 0..<WebPairing.attemptsPerMinute {
            guard case .allowed = pairing.attempt(now: start + .seconds(second)) else {
                Issue.record("attempt \(second) refused")
                return
            }
        }
        #expect(pairing.attempt(now: start + .seconds(10)) == .tooMany(retryAfter: .seconds(50)))
        // A minute after the first, one more is allowed.
        guard case .allowed = pairing.attempt(now: start + .seconds(60)) else {
            Issue.record("the budget did not refill")
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
        let (page, node, confirm) = ([UInt8](repeating: 1, count: 32), [UInt8](repeating: 2, count: 32), [UInt8](repeating: 3, count: 32))
        func proof(_ code: String) -> [UInt8] { WebChannel.pairTag(confirm, page: page, node: node, code: code, by: .page) }
        func pair(_ tag: [UInt8]) -> WebPairing.Verdict {
            pairing.pair(proof: tag, page: page, node: node, confirm: confirm, deviceKey: [9], name: "phone", id: [1], at: .epoch, now: start)
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
