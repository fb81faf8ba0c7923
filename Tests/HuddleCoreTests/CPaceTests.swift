import Testing

@testable import HuddleCore

/// CPace as draft-irtf-cfrg-cpace-21 specifies it, against the draft's own test vectors
/// (appendix "Test vector for CPace using group X25519 and hash SHA-512"): the string utilities,
/// the generator, both shares, the secret, the session key; low-order points refused; and a
/// wrong code giving another key.
@Suite(.offThePool) struct CPaceTests {
    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    let prs = Array("Password".utf8)
    let ci = hex("0b415f696e69746961746f720b425f726573706f6e646572")
    let sid = hex("7e4b4791d6a8ef019b936c79fb7f2c57")
    let ya = hex("21b4f4bd9e64ed355c3eb676a28ebedaf6d8f17bdc365995b319097153044080")
    let yb = hex("848b0779ff415f0af4ea14df9dd1d3c29ac41d836c7808896c4eba19c51ac40a")
    let g = hex("d04bf6d41f6a289632a2e929fa29bebd51092512a7829fdde7d314b62f05a73f")
    let bigYa = hex("1d13c89278cdadd826f6d8d7f887701430f8380ddc17611cdd6dc989ce0c9f32")
    let bigYb = hex("248cccf6d5cdc3646f0ad593f9e6cef4e69d4945f8372e623512ecea32185623")
    let k = hex("5b067effbdc0b2a0e1d907b21ebb25cfedb96a852179a847c37e43ee71322c6b")

    @Test func theStringUtilitiesMatchTheDraft() {
        #expect(CPace.prependLength([]) == [0])
        #expect(CPace.prependLength(Array("1234".utf8)) == Self.hex("0431323334"))
        #expect(CPace.prependLength((0..<127).map(UInt8.init)).prefix(2) == [0x7F, 0x00])
        #expect(CPace.prependLength((0..<128).map(UInt8.init)).prefix(3) == [0x80, 0x01, 0x00])
        #expect(CPace.lengthValues(Array("1234".utf8), Array("5".utf8), [], Array("678".utf8))
                == Self.hex("043132333401350003363738"))
        let string = CPace.generatorString(code: prs, channel: ci, sid: sid)
        #expect(string.count == 170)
        #expect(string == Self.hex("0843506163653235350850617373776f72646d") + [UInt8](repeating: 0, count: 109)
                + Self.hex("180b415f696e69746961746f720b425f726573706f6e646572107e4b4791d6a8ef019b936c79fb7f2c57"))
    }

    @Test func theGeneratorSharesSecretAndSessionKeyMatchTheDraft() throws {
        #expect(CPace.generator(code: prs, channel: ci, sid: sid) == g)
        #expect(CPace.share(scalar: ya, generator: g) == bigYa)
        #expect(CPace.share(scalar: yb, generator: g) == bigYb)
        #expect(CPace.secret(scalar: ya, share: bigYb) == k)
        #expect(CPace.secret(scalar: yb, share: bigYa) == k)
        let isk = CPace.sessionKey(
            sid: sid, secret: k, initiator: bigYa, initiatorData: Array("ADa".utf8), responder: bigYb,
            responderData: Array("ADb".utf8))
        #expect(isk == Self.hex(
            "6e19b875f7a561d6b3ca3dbb9ef42ac55de3e717881018204b8922b4d5e53bb2"
                + "aa82c300bea7b65d2b671da71922ddf6472301b79bc270adfa8bf413285f2263"))
    }

    /// The draft's table for scalar_mult_vfy: low-order u-coordinates (on the curve and on its
    /// twist) make the secret all zeros whatever the scalar, and are refused; the ones with bit
    /// 255 set are read without it, as RFC 7748 decodes, and give the draft's results.
    @Test(arguments: [
        ("0000000000000000000000000000000000000000000000000000000000000000", nil),
        ("0100000000000000000000000000000000000000000000000000000000000000", nil),
        ("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", nil),
        ("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800", nil),
        ("5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157", nil),
        ("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", nil),
        ("daffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
         "d8e2c776bbacd510d09fd9278b7edcd25fc5ae9adfba3b6e040e8d3b71b21806"),
        ("eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", nil),
        ("dbffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
         "c85c655ebe8be44ba9c0ffde69f2fe10194458d137f09bbff725ce58803cdb38"),
        ("d9ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
         "db64dafa9b8fdd136914e61461935fe92aa372cb056314e1231bc4ec12417456"),
        ("cdeb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b880",
         "e062dcd5376d58297be2618c7498f55baa07d7e03184e8aada20bca28888bf7a"),
        ("4c9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f11d7",
         "993c6ad11c4c29da9a56f7691fd0ff8d732e49de6250b6c2e80003ff4629a175"),
    ] as [(String, String?)])
    func lowOrderPointsGiveNoSecret(point: String, expected: String?) {
        let scalar = Self.hex("af46e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449aff")
        #expect(CPace.secret(scalar: scalar, share: Self.hex(point)) == expected.map(Self.hex))
    }

    @Test func aWrongCodeGivesAnotherGeneratorAndAnotherKey() throws {
        let right = CPace.generator(code: Array("7K3MQ9TX".utf8), sid: sid)
        let wrong = CPace.generator(code: Array("7K3MQ9TY".utf8), sid: sid)
        #expect(right != wrong)
        #expect(CPace.generator(code: Array("7K3MQ9TX".utf8), sid: Self.hex("00112233445566778899aabbccddeeff")) != right)
        let pageShare = try #require(CPace.share(scalar: ya, generator: right))
        let nodeShare = try #require(CPace.share(scalar: yb, generator: wrong))
        let pageKey = try #require(CPace.secret(scalar: ya, share: nodeShare))
        let nodeKey = try #require(CPace.secret(scalar: yb, share: pageShare))
        #expect(pageKey != nodeKey)
    }

    @Test func theFieldKeepsItsLaws() {
        let a = Field25519(littleEndian: Self.hex("03998087bdb1a2617bbe25ef5a7c18cd4f84f902328701790958755ee4aed1d3"))
        // Bit 255 is ignored when decoding, as RFC 7748 says.
        #expect(a.littleEndianBytes == Self.hex("03998087bdb1a2617bbe25ef5a7c18cd4f84f902328701790958755ee4aed153"))
        #expect(a * a.inverse == Field25519(1))
        #expect(a - a == Field25519(0))
        #expect(-Field25519(1) + Field25519(1) == Field25519(0))
        #expect((a * a).legendre == Field25519(1))
        #expect(Field25519(2).legendre == -Field25519(1), "2 is Elligator's non-square")
        // p itself reads as 0.
        #expect(Field25519(littleEndian: Self.hex("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")) == Field25519(0))
    }
}
