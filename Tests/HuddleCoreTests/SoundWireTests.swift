import Testing

@testable import HuddleCore

/// The wire forms of listening (protocol version 5): the `heard` event body (tag 11) and the
/// sound window (kind 11), exactly as docs/PROTOCOL.md draws them.
@Suite(.offThePool) struct SoundWireTests {
    typealias S = WireSamples
    let alice = try! NodeIdentity(privateKeyBytes: [UInt8](repeating: 1, count: 32))
    let bob = try! NodeIdentity(privateKeyBytes: [UInt8](repeating: 2, count: 32))

    // MARK: heard

    @Test func aHeardBodyIsTheDocumentedFiftyFiveBytes() {
        let match = HeardMatch(
            peer: S.bob, at: .milliseconds(sinceEpoch: 1_000_000), lag: .microseconds(-3_198_400),
            sigma: .microseconds(8_467), confidenceTenths: 1_063)
        var writer = ByteWriter(capacity: 64)
        writer.write(EventBody.heard(match))
        let expected: [UInt8] =
            [11] + S.bob.bytes
            + [0, 0, 0, 0, 0, 0x0F, 0x42, 0x40]  // at 1 000 000
            + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xCF, 0x32, 0x40]  // lag −3 198 400 µs
            + [0, 0, 0x21, 0x13]  // σ 8 467 µs
            + [0x04, 0x27]  // confidence 106.3
        #expect(writer.bytes == expected)
        #expect(EventBody.heard(match).encodedByteCount == 55)
    }

    @Test func aHeardMatchTakesItsUncertaintyFromItsConfidence() {
        #expect(HeardMatch.sigma(confidence: 9) == .milliseconds(100))
        #expect(HeardMatch.sigma(confidence: 45) == .milliseconds(20))
        #expect(HeardMatch.sigma(confidence: 1_000) == .milliseconds(2))
        #expect(HeardMatch.sigma(confidence: 0) == .microseconds(UInt32.max))
        let match = HeardMatch(peer: S.bob, at: .epoch + .milliseconds(10), lag: .microseconds(3_198_500), confidence: 106.34)
        #expect(match.confidenceTenths == 1_063 && match.peerAt == .epoch + .milliseconds(3_209))
        #expect(
            HeardMatch(peer: S.bob, at: .epoch + .milliseconds(10), lag: .microseconds(-1_500), confidence: 20).peerAt
                == .epoch + .milliseconds(8))
    }

    @Test func aHeardEventSealsAndOpensInAPrivateRoom() throws {
        let key = RoomKey(name: "superbowl", master: [UInt8](repeating: 7, count: 32))
        let match = HeardMatch(peer: S.bob, at: .epoch + .milliseconds(5), lag: .milliseconds(3_200), confidence: 50)
        let id = EventID(origin: S.alice, seq: 4)
        let sealed = key.seal(.heard(match), id: id)
        #expect(sealed.count == 55 + WireLimits.sealOverheadBytes)
        let event = Event(id: id, room: key.id, createdAt: .epoch + .milliseconds(5), context: [S.alice: 3], body: .sealed(bytes: sealed),
                          signature: S.signature(1))
        let back = try Event(decoding: event.encoded())
        #expect(key.open(back)?.body == .heard(match))
    }

    // MARK: Sound windows

    func frames(_ count: Int) -> (bits: [UInt32], loud: [Bool]) {
        let loud = (0..<count).map { $0 % 5 != 0 }
        let bits = (0..<count).map { UInt32(truncatingIfNeeded: $0 &* 2_654_435_761) }
        return (bits, loud)
    }

    /// The pair key alice and bob share (their direct-message key).
    var pairKey: RoomKey {
        alice.directKey(with: bob.id, peerAgreementKey: bob.agreementPublicKey, name: "@bob")!
    }

    @Test func aWindowIsTheDocumentedBytesAndOnlyItsReceiverReadsIt() throws {
        let (bits, loud) = frames(10)
        let window = SoundWindow.made(
            by: alice, room: "ab", for: bob.id, pairKey: pairKey, sentAt: .epoch + .seconds(2),
            start: .epoch + .seconds(1), bits: bits, loud: loud)
        let bytes = window.encoded()
        #expect(Array(bytes.prefix(4)) == [0x48, 0x44, 6, 11])
        #expect(Array(bytes[4..<36]) == alice.id.bytes)
        #expect(Array(bytes[36..<40]) == [0, 2, 0x61, 0x62])
        #expect(Array(bytes[40..<48]) == [0, 0, 0, 0, 0, 0, 0x07, 0xD0])
        #expect(Array(bytes[48..<56]) == [0, 0, 0, 0, 0, 0, 0x03, 0xE8])
        #expect(Array(bytes[56..<58]) == [0, 10])
        // nonce 12, the 42 bytes of the public form sealed, tag 16, signature 64.
        #expect(bytes.count == 58 + 12 + 42 + 16 + 64 && window.encodedByteCount == bytes.count)
        #expect(!bytes.windowContains([0x9E, 0x37, 0x79, 0xB1]), "frame 1's bits are not on the wire")
        let received = try SoundWindow(decoding: bytes)
        #expect(received == window && received.hasValidSignature && !received.isOpen)
        #expect(try Datagram(decoding: bytes) == .sound(window))
        #expect(try Datagram(decoding: WireSamples.messages[0].encoded()) == .message(WireSamples.messages[0]))

        // Bob opens it; the public form inside is as drawn: bits big-endian, quiet frames 0.
        let opened = try #require(pairKey.open(received, for: bob.id))
        #expect(opened.bits == zip(bits, loud).map { $1 ? $0 : 0 } && opened.loud == loud)
        #expect(opened.encoded() == bytes, "the seal is kept: it encodes and verifies as it travelled")
        let form = opened.openedForm
        #expect(Array(form[0..<8]) == [0, 0, 0, 0, 0, 0, 0x03, 0xE8] && Array(form[8..<10]) == [0, 10])
        #expect(Array(form[10..<14]) == [0, 0, 0, 0] && Array(form[14..<18]) == [0x9E, 0x37, 0x79, 0xB1])
        // Loudness: frames 1–4, 6–7 in the first byte, 8–9 in the second.
        #expect(Array(form[50..<52]) == [0b1101_1110, 0b0000_0011] && form.count == 52)

        // Nobody else: not the sender's key for another receiver, not another pair, not moved.
        #expect(pairKey.open(received, for: alice.id) == nil, "sealed for bob, not for whoever asks")
        let carol = NodeIdentity.generate()
        let carolsKey = try #require(alice.directKey(with: carol.id, peerAgreementKey: carol.agreementPublicKey, name: "@carol"))
        #expect(carolsKey.open(received, for: carol.id) == nil)
        var moved = received
        moved.sentAt += .milliseconds(1)
        #expect(pairKey.open(moved, for: bob.id) == nil, "the seal binds the times")
        moved = received
        moved.room = "ac"
        #expect(pairKey.open(moved, for: bob.id) == nil, "and the room")
    }

    @Test func aLongWindowIsOneDatagramOfTheDocumentedSize() throws {
        let (bits, loud) = frames(1_000)
        let bytes = SoundWindow.made(
            by: alice, room: "superbowl", for: bob.id, pairKey: pairKey, sentAt: .epoch, start: .epoch, bits: bits,
            loud: loud
        ).encoded()
        #expect(bytes.count == 4 + 32 + 11 + 8 + 8 + 2 + 4_125 + 28 + 64)
        #expect(try pairKey.open(SoundWindow(decoding: bytes), for: bob.id)?.bits.count == 1_000)
        // The largest: in a room of the longest name (docs/PROTOCOL.md says 4 337 bytes).
        let longest = String(repeating: "r", count: WireLimits.maxRoomBytes)
        let largest = SoundWindow.made(
            by: alice, room: longest, for: bob.id, pairKey: pairKey, sentAt: .epoch, start: .epoch, bits: bits, loud: loud)
        #expect(largest.encodedByteCount == 4_337)
    }

    @Test func windowsOutsideTheirOneEncodingAreRefused() throws {
        let (bits, loud) = frames(10)
        let window = SoundWindow.made(
            by: alice, room: "ab", for: bob.id, pairKey: pairKey, sentAt: .epoch, start: .epoch, bits: bits, loud: loud)
        let bytes = window.encoded()
        func error(_ bytes: [UInt8]) -> WireError? {
            do { _ = try SoundWindow(decoding: bytes) } catch { return error }
            return nil
        }
        var none = bytes
        none[56...57] = [0, 0]
        #expect(error(none) == .lengthOutOfRange(.soundFrames, length: 0, min: 1, max: 1_000, offset: 56))
        var tooMany = bytes
        tooMany[56...57] = [0x03, 0xE9]
        #expect(error(tooMany) == .lengthOutOfRange(.soundFrames, length: 1_001, min: 1, max: 1_000, offset: 56))
        #expect(error(bytes + [0]) == .trailingBytes(count: 1, offset: bytes.count))
        #expect(error(Array(bytes.dropLast())) != nil)
        var older = bytes
        older[2] = 4
        #expect(error(older) == .unsupportedVersion(4))
        #expect(throws: WireError.unknownMessageKind(11)) { try WireMessage(decoding: bytes) }
        for cut in 0..<bytes.count { #expect(error(Array(bytes.prefix(cut))) != nil) }
        // Inside the seal, too, the frames have one form: a sender that seals a quiet frame with
        // bits, or a flag past the last frame, is not read.
        var quietWithBits = SoundWindow(from: alice.id, room: "ab", sentAt: .epoch, start: .epoch, bits: bits, loud: loud)
        quietWithBits.seal = pairKey.seal(quietWithBits, for: bob.id)
        #expect(pairKey.open(quietWithBits, for: bob.id) == nil, "frame 0 is quiet and has bits")
        let canonical = SoundWindow.unsealed(by: alice.id, room: "ab", sentAt: .epoch, start: .epoch, bits: bits, loud: loud)
        var sealed = canonical
        sealed.seal = pairKey.seal(canonical, for: bob.id)
        #expect(pairKey.open(sealed, for: bob.id)?.bits == canonical.bits)
    }

    @Test(arguments: [UInt64(31), 32])
    func mutatedWindowsNeverTrapAndWhatDecodesIsCanonical(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let (bits, loud) = frames(40)
        let windows = ["superbowl", "~aaaaaaaaaaaaaaaaaaaaaaaa"].map { room in
            SoundWindow.made(
                by: alice, room: room, for: bob.id, pairKey: pairKey, sentAt: .epoch + .milliseconds(1),
                start: .epoch + .milliseconds(2), bits: bits, loud: loud
            ).encoded()
        }
        var accepted = 0
        for _ in 0..<3_000 {
            var bytes = windows[Int(rng.next() % 2)]
            for _ in 0..<Int(1 + rng.next() % 4) {
                let at = Int(rng.next() % UInt64(bytes.count))
                switch rng.next() % 3 {
                case 0: bytes[at] ^= UInt8(truncatingIfNeeded: 1 << (rng.next() % 8))
                case 1: bytes.remove(at: at)
                default: bytes.insert(UInt8(truncatingIfNeeded: rng.next()), at: at)
                }
            }
            guard let window = try? SoundWindow(decoding: bytes) else { continue }
            accepted += 1
            #expect(window.encoded() == bytes)
            #expect(!window.hasValidSignature || bytes == windows[0] || bytes == windows[1])
        }
        #expect(accepted > 0, "some single bit flips (in the times, say) still decode")
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in these bytes.
    func windowContains(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { Array(self[$0..<$0 + needle.count]) == needle }
    }
}
