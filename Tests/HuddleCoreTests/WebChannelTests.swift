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

    // RFC 7748 §6.1's two keys: the page is Alice, the node Bob.
    static let page = hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
    static let node = hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")
    static let pagePublic = hex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")

    @Test func pairingGivesTheDocumentsKeysAndTags() throws {
        let exchange = try WebChannel.PairingExchange(privateKey: Self.node)
        #expect(exchange.publicKey == Self.hex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"))
        let keys = try #require(exchange.keys(withPage: Self.pagePublic))
        #expect(keys.confirm == Self.hex("d473c7aba2a786a6e923422e9274fbcf72a6b7669071bb9b826716c09029f3c7"))
        #expect(keys.device == Self.hex("1075fce06e2029a6a0a2f76e17c29db2d3a8c6118bcdb155caf510441b4de33f"))
        let pageTag = WebChannel.pairTag(keys.confirm, page: Self.pagePublic, node: exchange.publicKey, code: "7K3MQ9TX", by: .page)
        #expect(pageTag == Self.hex("6dd10047cdcdffdb877fa3d96dcdb75a"))
        #expect(
            WebChannel.pairTag(keys.confirm, page: Self.pagePublic, node: exchange.publicKey, code: "7K3MQ9TX", by: .node)
                == Self.hex("7888ae1f900bfca7fb218b36ac742e3f"))
        // Another code, or the keys the other way round, make another tag.
        #expect(WebChannel.pairTag(keys.confirm, page: Self.pagePublic, node: exchange.publicKey, code: "7K3MQ9TW", by: .page) != pageTag)
        #expect(WebChannel.pairTag(keys.confirm, page: exchange.publicKey, node: Self.pagePublic, code: "7K3MQ9TX", by: .page) != pageTag)
    }

    @Test func aLowOrderPointOrAShortKeyPairsWithNothing() throws {
        let exchange = WebChannel.PairingExchange()
        #expect(exchange.keys(withPage: [UInt8](repeating: 0, count: 32)) == nil)
        #expect(exchange.keys(withPage: [1] + [UInt8](repeating: 0, count: 31)) == nil)
        #expect(exchange.keys(withPage: Array(Self.pagePublic.prefix(31))) == nil)
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
