import Foundation
import Testing

@testable import HuddleCore

/// A page's way to its session (``PageHandshake``) on a mock clock, against a page written here
/// from docs/WEB.md: CPace as the initiator, the tags, the sealed `open`.
@Suite(.offThePool) struct PageHandshakeTests {
    let start = MonotonicTime.start + .seconds(1_000)
    let wall = WallTime(microsecondsSinceEpoch: 1_790_000_000_000_000)

    /// The page's side, as app.js and crypto.js do it.
    struct Page {
        var scalar: [UInt8] = Array(repeating: 7, count: 32)
        let sid = Array(UInt8(0)..<16)
        var letters = ""
        var share: [UInt8] = []
        var deviceKey: [UInt8] = []
        var confirm: [UInt8] = []

        mutating func pair(_ kind: String, letters: String, name: String = "kitchen") -> PageFrame {
            self.letters = letters
            share = CPace.share(scalar: scalar, generator: CPace.generator(code: Array(letters.utf8), sid: sid))!
            return Self.text(
                #"{"t":"pair","code":"\#(kind)","sid":"\#(WebChannel.base64url(sid))","pub":"\#(WebChannel.base64url(share))","name":"\#(name)"}"#
            )
        }

        /// The proof for the node's share; the node's own tag it should answer with.
        mutating func proof(nodeShare: [UInt8]) -> (frame: PageFrame, nodeTag: [UInt8]) {
            let secret = CPace.secret(scalar: scalar, share: nodeShare)!
            (confirm, deviceKey) = WebChannel.pairKeys(
                sessionKey: CPace.sessionKey(sid: sid, secret: secret, initiator: share, responder: nodeShare))
            let tag = WebChannel.pairTag(confirm, page: share, node: nodeShare, code: "", by: .page)
            let nodeTag = WebChannel.pairTag(confirm, page: share, node: nodeShare, code: "", by: .node)
            return (Self.text(#"{"t":"proof","tag":"\#(WebChannel.base64url(tag))"}"#), nodeTag)
        }

        func open(nonce: [UInt8], since: Int, key: [UInt8]? = nil) -> PageFrame {
            var sealer = WebChannel.Sealer(key: WebChannel.connectionKey(key ?? deviceKey, nonce: nonce), direction: .toNode)
            return .binary(sealer.seal(Array(#"{"t":"open","since":\#(since)}"#.utf8)))
        }

        static func text(_ json: String) -> PageFrame { .text(Array(json.utf8)) }
    }

    /// Random bytes that differ from call to call, the same from run to run.
    final class Random {
        var next: UInt8 = 0
        func bytes(_ count: Int) -> [UInt8] {
            next &+= 1
            return Array(repeating: next, count: count)
        }
    }

    func offered(_ pairing: inout WebPairing, at now: MonotonicTime? = nil) -> WebPairing.Offer {
        pairing.offer(typed: [0x3a, 0x91, 0x0c, 0xff, 0x42], secret: Array(repeating: 0xa5, count: 16), now: now ?? start)
    }

    /// Runs `frame` through the handshake at `now`.
    func send(
        _ frame: PageFrame, _ handshake: inout PageHandshake, _ pairing: inout WebPairing, at now: MonotonicTime,
        random: Random = Random()
    ) -> [PageHandshake.Step] {
        handshake.receive(frame, pairing: &pairing, now: now, wall: wall, random: random.bytes)
    }

    /// A page paired with the typed code from `address`, as far as `hello`: the device.
    func pairedDevice(_ page: inout Page, _ pairing: inout WebPairing, from address: String = "192.168.1.23") throws -> WebDevice {
        let code = offered(&pairing).typed.letters
        var handshake = PageHandshake(from: address, now: start)
        let answer = send(page.pair("typed", letters: code), &handshake, &pairing, at: start)
        guard case .reply(.pair(let nodeShare)) = try #require(answer.first) else { throw Failure.unexpected(answer) }
        let (proof, _) = page.proof(nodeShare: nodeShare)
        let steps = send(proof, &handshake, &pairing, at: start + .seconds(1))
        guard case .paired(let device) = try #require(steps.last) else { throw Failure.unexpected(steps) }
        return device
    }

    /// `hello` from a paired device at `now`: the nonce of the node's challenge.
    func hello(
        _ device: WebDevice, _ handshake: inout PageHandshake, _ pairing: inout WebPairing, at now: MonotonicTime,
        random: Random = Random()
    ) throws -> [UInt8] {
        let challenge = send(Page.text(#"{"t":"hello","device":"\#(device.id)"}"#), &handshake, &pairing, at: now, random: random)
        guard case .reply(.challenge(let nonce)) = try #require(challenge.first) else { throw Failure.unexpected(challenge) }
        return nonce
    }

    enum Failure: Error { case unexpected([PageHandshake.Step]) }

    @Test func aPagePairsWithTheTypedCodeThenOpensItsSessionWithTheKeyOnlyItAndTheNodeHold() throws {
        var pairing = WebPairing()
        let code = offered(&pairing).typed.letters
        var page = Page()
        var handshake = PageHandshake(from: "192.168.1.23", now: start)
        let random = Random()

        let answer = send(page.pair("typed", letters: code), &handshake, &pairing, at: start + .seconds(2), random: random)
        guard case .reply(.pair(let nodeShare)) = try #require(answer.first) else { throw Failure.unexpected(answer) }
        let (proof, nodeTag) = page.proof(nodeShare: nodeShare)
        let paired = send(proof, &handshake, &pairing, at: start + .seconds(3), random: random)
        let device = try #require(pairing.devices.first)
        #expect(paired == [.reply(.paired(device: device.id, name: "kitchen", tag: nodeTag)), .paired(device)])
        // The device's key is what CPace gave both sides; it never crossed the network.
        #expect(device.key == page.deviceKey)
        // A pairing gives the page the whole time again to open.
        #expect(handshake.deadline == start + .seconds(3) + PageHandshake.timeAllowed)

        let nonce = try hello(device, &handshake, &pairing, at: start + .seconds(4), random: random)
        let afterOpen = send(page.open(nonce: nonce, since: 41), &handshake, &pairing, at: start + .seconds(5))
        #expect(afterOpen.isEmpty)
        let opened = try #require(handshake.opened)
        #expect(opened.device == device)
        #expect(opened.since == 41)
    }

    @Test func aCodePairsOnceAndNotAfterItsFiveMinutes() throws {
        var pairing = WebPairing()
        var page = Page()
        let device = try pairedDevice(&page, &pairing)
        #expect(pairing.devices == [device])

        // The same code again, by another page: used up.
        var second = PageHandshake(from: "192.168.1.24", now: start + .seconds(5))
        var other = Page(scalar: Array(repeating: 9, count: 32))
        let again = send(other.pair("typed", letters: page.letters), &second, &pairing, at: start + .seconds(5))
        #expect(again == [.reply(.refused(.wrongOrExpiredCode))])
        #expect(second.isClosed)

        // A fresh code, tried a moment after its five minutes.
        let late = offered(&pairing, at: start + .seconds(10)).secret.letters
        let then = start + .seconds(10) + WebPairing.codeLifetime
        var third = PageHandshake(from: "192.168.1.24", now: then)
        let lateAnswer = send(other.pair("qr", letters: late), &third, &pairing, at: then)
        #expect(lateAnswer == [.reply(.refused(.wrongOrExpiredCode))])
        #expect(pairing.devices == [device])
    }

    @Test func aPageHasTenSecondsToPairAndTenMoreToOpen() throws {
        var pairing = WebPairing()
        _ = offered(&pairing)
        var handshake = PageHandshake(from: "192.168.1.23", now: start)
        let justBefore = handshake.expire(now: start + PageHandshake.timeAllowed - .microseconds(1))
        #expect(!justBefore)
        let atDeadline = handshake.expire(now: start + PageHandshake.timeAllowed)
        #expect(atDeadline)
        #expect(handshake.isClosed)

        // A message after the deadline is not read: the code stays on offer.
        var slow = PageHandshake(from: "192.168.1.23", now: start)
        var page = Page()
        let code = pairing.offer!.typed.letters
        let lateAnswer = send(page.pair("typed", letters: code), &slow, &pairing, at: start + .seconds(10))
        #expect(lateAnswer.isEmpty)
        #expect(slow.isClosed)
        #expect(pairing.offer != nil)
    }

    @Test func wrongProofsSpendOnlyTheGuessersAttempts() throws {
        var pairing = WebPairing()
        let code = offered(&pairing).typed.letters
        let stranger = "192.168.1.66"
        for guess in 0..<WebPairing.wrongGuessesPerMinute {
            var handshake = PageHandshake(from: stranger, now: start + .seconds(guess))
            var page = Page()
            let answer = send(page.pair("typed", letters: "WRONG\(guess)"), &handshake, &pairing, at: start + .seconds(guess))
            guard case .reply(.pair(let nodeShare)) = try #require(answer.first) else { throw Failure.unexpected(answer) }
            let refusal = send(page.proof(nodeShare: nodeShare).frame, &handshake, &pairing, at: start + .seconds(guess))
            #expect(refusal
                == [.reply(.refused(.wrongOrExpiredCode))])
        }
        // The sixth within the minute is told to wait, until the first guess is a minute old.
        var sixth = PageHandshake(from: stranger, now: start + .seconds(30))
        var page = Page()
        let sixthAnswer = send(page.pair("typed", letters: code), &sixth, &pairing, at: start + .seconds(30))
        #expect(sixthAnswer
            == [.reply(.refused(.tooManyAttempts(retryAfter: .seconds(30))))])
        // The viewer's phone, on another address, still pairs with the right code.
        var phone = Page(scalar: Array(repeating: 3, count: 32))
        _ = try pairedDevice(&phone, &pairing, from: "192.168.1.23")
        #expect(pairing.devices.map(\.name) == ["kitchen"])
    }

    @Test func aDeviceRevokedBetweenHelloAndOpenOpensNothing() throws {
        var pairing = WebPairing()
        var page = Page()
        let device = try pairedDevice(&page, &pairing)
        var handshake = PageHandshake(from: "192.168.1.23", now: start + .seconds(20))
        let nonce = try hello(device, &handshake, &pairing, at: start + .seconds(20))
        let revoked = pairing.revoke(name: device.name)
        #expect(revoked == device)
        let afterOpen = send(page.open(nonce: nonce, since: 0), &handshake, &pairing, at: start + .seconds(21))
        #expect(afterOpen.isEmpty)
        #expect(handshake.isClosed)
        #expect(handshake.opened == nil)
    }

    @Test func whatDoesNotFitThePhaseClosesTheConnection() throws {
        var pairing = WebPairing()
        var page = Page()
        let device = try pairedDevice(&page, &pairing)
        let at = start + .seconds(20)
        func fresh() -> PageHandshake { PageHandshake(from: "192.168.1.23", now: at) }

        // Sealed bytes before a session; a text that is not JSON; a clear message over 4 KiB.
        for frame in [PageFrame.binary([1, 2, 3]), Page.text("hello"), Page.text(#"{"t":"hello","device":"\#(String(repeating: "a", count: 4100))"}"#)] {
            var handshake = fresh()
            let answer = send(frame, &handshake, &pairing, at: at)
            #expect(answer.isEmpty)
            #expect(handshake.isClosed)
        }
        // A device nobody paired, or no `hello` at all.
        for json in [#"{"t":"hello","device":"00"}"#, #"{"t":"line","text":"hi"}"#] {
            var handshake = fresh()
            let answer = send(Page.text(json), &handshake, &pairing, at: at)
            #expect(answer == [.reply(.unpaired)])
            #expect(handshake.isClosed)
        }
        // A pairing request without its share, or with a low-order point for one.
        for pub in ["", WebChannel.base64url(Array(repeating: 0, count: 32))] {
            var handshake = fresh()
            let json = #"{"t":"pair","code":"qr","sid":"\#(WebChannel.base64url(page.sid))","pub":"\#(pub)"}"#
            _ = offered(&pairing, at: at)
            let answer = send(Page.text(json), &handshake, &pairing, at: at)
            #expect(answer == [.reply(.refused(.notAPairingRequest))])
        }
        // An `open` sealed for another connection's nonce (a replay of an old one).
        var handshake = fresh()
        let nonce = try hello(device, &handshake, &pairing, at: at)
        let afterOpen = send(page.open(nonce: nonce.map { $0 ^ 1 }, since: 0), &handshake, &pairing, at: at)
        #expect(afterOpen.isEmpty)
        #expect(handshake.isClosed)
    }

    @Test func theSessionTakesALinksDelayOffATapAndPutsAPhotoTogether() throws {
        var pairing = WebPairing()
        var page = Page()
        let device = try pairedDevice(&page, &pairing)
        var handshake = PageHandshake(from: "192.168.1.23", now: start + .seconds(20))
        let nonce = try hello(device, &handshake, &pairing, at: start + .seconds(20))
        var toNode = WebChannel.Sealer(key: WebChannel.connectionKey(page.deviceKey, nonce: nonce), direction: .toNode)
        _ = send(.binary(toNode.seal(Array(#"{"t":"open","since":0}"#.utf8))), &handshake, &pairing, at: start + .seconds(20))
        var session = PageSession(try #require(handshake.opened), number: 4)
        func say(_ json: String, at now: MonotonicTime) -> PageSession.Step {
            session.receive(.binary(toNode.seal(Array(json.utf8))), arrived: wall, now: now)
        }

        // Three round trips of 80 ms: a tap arrived 40 ms after it was made.
        var now = start + .seconds(21)
        for _ in 0..<3 {
            let id = session.ping(now: now)
            now = now + .milliseconds(80)
            let step = say(#"{"t":"pong","id":\#(id)}"#, at: now)
            #expect(step == .nothing)
        }
        let tap = say(#"{"t":"now","label":"kickoff"}"#, at: now)
        #expect(tap == .input(.mark(label: "kickoff", at: wall, linkDelay: .milliseconds(40))))
        let pong = say(#"{"t":"ping","id":12}"#, at: now)
        #expect(pong == .pong(id: 12))
        let ask = say(#"{"t":"get_picture","root":"ab"}"#, at: now)
        #expect(ask == .input(.picture(root: "ab", session: 4)))

        // A photo in two parts, then one whose parts come out of order.
        let photo = [UInt8](repeating: 0xd8, count: PageSession.photoPartBytes + 10)
        let parts = [Array(photo.prefix(PageSession.photoPartBytes)), Array(photo.dropFirst(PageSession.photoPartBytes))]
        for (n, part) in parts.enumerated() {
            let step = say(#"{"t":"photo_part","n":\#(n),"data":"\#(Data(part).base64EncodedString())"}"#, at: now)
            #expect(step == .nothing)
        }
        let photoSent = say(#"{"t":"photo","parts":2,"caption":"the TV"}"#, at: now)
        #expect(photoSent == .input(.photo(photo, caption: "the TV")))
        _ = say(#"{"t":"photo_part","n":1,"data":"AAAA"}"#, at: now)
        let broken = say(#"{"t":"photo","parts":1}"#, at: now)
        #expect(broken == .input(.photoRefused(.brokenPart, session: 4)))
        let incomplete = say(#"{"t":"photo","parts":1}"#, at: now)
        #expect(incomplete == .input(.photoRefused(.incomplete, session: 4)))

        // A frame that does not open (sealed out of its place) ends the session.
        var replay = WebChannel.Sealer(key: WebChannel.connectionKey(page.deviceKey, nonce: nonce), direction: .toNode)
        let replayed = session.receive(.binary(replay.seal(Array(#"{"t":"pause"}"#.utf8))), arrived: wall, now: now)
        #expect(replayed == .close)
    }
}
