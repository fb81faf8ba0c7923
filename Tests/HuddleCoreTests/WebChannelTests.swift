import Testing

@testable import HuddleCore

/// The node's half of the page's cryptography against fixed vectors computed independently, with
/// Python's `cryptography` from docs/WEB.md (the page's `crypto.js` is checked against the same
/// derivations, and the RFCs' vectors, in Tests/e2e/test_web_crypto.py).
@Suite(.offThePool) struct WebChannelTests {
    static func hex(_ text: String) -> [UInt8] {
        stride(from: 0, to: text.count, by: 2).map { offset in
            let start = text.index(text.startIndex, offsetBy: offset)
            return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    // RFC 7748 §6.1's two keys as CPace's scalars: the page's ya is Alice's, the node's yb Bob's.
    static let page = hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
    static let node = hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")
    static let sid = Array(UInt8(0)..<16)
    /// The page's share for the code 7K3MQ9TX (Tests/huddletest/cpace.py).
    static let pageShare = hex("4dda3a22cf9804d80ee4c1af97390c339df22347b474396255a118ef1ba06a69")

    @Test func pairingGivesTheDocumentsKeysAndTags() throws {
        let code = PairingCode(letters: "7K3MQ9TX")
        #expect(CPace.share(scalar: Self.page, generator: CPace.generator(code: Array("7K3MQ9TX".utf8), sid: Self.sid)) == Self.pageShare)
        let exchange = try #require(WebChannel.PairingExchange(code: code, sid: Self.sid, page: Self.pageShare, scalar: Self.node))
        #expect(exchange.publicKey == Self.hex("f756e2f6308ec6873097e08818a5698b36a6dee2a435833ce6dcdd37ecbfe11c"))
        #expect(exchange.confirm == Self.hex("6f5911d345d6f09bf4a3d12380446ff3ede68f3539756dcf48e30b335760d270"))
        #expect(exchange.device == Self.hex("3d4d958717e6e9f6a59638d823e528f1caabe9c619c9408764dfa20afa904e21"))
        let pageTag = WebChannel.pairTag(exchange.confirm, page: Self.pageShare, node: exchange.publicKey, code: "", by: .page)
        #expect(pageTag == Self.hex("751b7875c212d6aa59abbdda5f98b6e8"))
        #expect(
            WebChannel.pairTag(exchange.confirm, page: Self.pageShare, node: exchange.publicKey, code: "", by: .node)
                == Self.hex("46b17263d1b7d0a43ac34b85b4c81295"))
        // The node running with another code, or another session id, holds another key: the
        // page's tag does not match it.
        for (other, sid) in [("7K3MQ9TW", Self.sid), ("7K3MQ9TX", Array(UInt8(1)...16))] {
            let wrong = try #require(
                WebChannel.PairingExchange(code: PairingCode(letters: other), sid: sid, page: Self.pageShare, scalar: Self.node))
            #expect(wrong.confirm != exchange.confirm)
        }
    }

    @Test func aLowOrderPointOrAShortSharePairsWithNothing() throws {
        let code = PairingCode(letters: "7K3MQ9TX")
        for share in [[UInt8](repeating: 0, count: 32), [1] + [UInt8](repeating: 0, count: 31), Array(Self.pageShare.prefix(31))] {
            #expect(WebChannel.PairingExchange(code: code, sid: Self.sid, page: share, scalar: Self.node) == nil)
        }
    }

    @Test func framesAreSealedInOrderAndOpenOnlyInTheirPlace() throws {
        let device = Self.hex("1075fce06e2029a6a0a2f76e17c29db2d3a8c6118bcdb155caf510441b4de33f")
        let connection = WebChannel.connectionKey(device, nonce: Array(0..<12))
        #expect(connection == Self.hex("88ef1816a45a77271878676061f59e715008f5fef7098f76bf839d1ab6906920"))
        let open = Self.hex("dc5904443ae24fb6f492a4b32ed01b625e79edfe36bdf0e9bf41c6e0936dd193940dc87e81ff")
        var opener = WebChannel.Opener(key: connection, direction: .toNode)
        #expect(opener.open(open).map { String(decoding: $0, as: UTF8.self) } == #"{"t":"open","since":0}"#)
        // The same frame again (a replay) is not the next one: refused, and so is all after.
        #expect(opener.open(open) == nil)
        #expect(opener.failed)

        var sealer = WebChannel.Sealer(key: connection, direction: .toPage)
        _ = sealer.seal(Array("first".utf8))
        #expect(
            sealer.seal(Array(#"{"t":"pong","id":7}"#.utf8))
                == Self.hex("e3af8c32746f91386d75634fca1bb275ac02eee060a0925029fe8983d1e121b71fd003"))

        // A frame for the other direction, or from another connection, does not open.
        var wrongWay = WebChannel.Opener(key: connection, direction: .toPage)
        #expect(wrongWay.open(open) == nil)
        var otherConnection = WebChannel.Opener(key: WebChannel.connectionKey(device, nonce: Array(1..<13)), direction: .toNode)
        #expect(otherConnection.open(open) == nil)
        var flipped = WebChannel.Opener(key: connection, direction: .toNode)
        var tampered = open
        tampered[3] ^= 1
        #expect(flipped.open(tampered) == nil)
    }

    @Test func base64urlRoundTripsAndRefusesWhatIsNotIt() {
        let bytes: [UInt8] = [0xfb, 0xff, 0x00, 0x10, 0x3e]
        #expect(WebChannel.base64url(bytes) == "-_8AED4")
        #expect(WebChannel.bytes(base64url: "-_8AED4") == bytes)
        #expect(WebChannel.bytes(base64url: "not base64!") == nil)
        #expect(WebChannel.bytes(base64url: "+/8AED4") == nil)
    }
}
