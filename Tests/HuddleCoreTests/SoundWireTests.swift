import Testing

@testable import HuddleCore

/// The wire forms of listening (protocol version 5): the `heard` event body (tag 11) and the
/// sound window (kind 11), exactly as docs/PROTOCOL.md draws them.
@Suite struct SoundWireTests {
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

    @Test func aPublicWindowIsTheDocumentedBytesAndVerifies() throws {
        let (bits, loud) = frames(10)
        let window = SoundWindow.made(
            by: alice, room: "ab", key: nil, sentAt: .epoch + .seconds(2), start: .epoch + .seconds(1), bits: bits,
            loud: loud)
        let bytes = window.encoded()
        #expect(Array(bytes.prefix(4)) == [0x48, 0x44, 5, 11])
        #expect(Array(bytes[4..<36]) == alice.id.bytes)
        #expect(Array(bytes[36..<40]) == [0, 2, 0x61, 0x62])
        #expect(Array(bytes[40..<48]) == [0, 0, 0, 0, 0, 0, 0x07, 0xD0])
        #expect(Array(bytes[48..<56]) == [0, 0, 0, 0, 0, 0, 0x03, 0xE8])
        #expect(Array(bytes[56..<58]) == [0, 10])
        // Frame 1's bits, big-endian; quiet frames 0 and 5 carry none.
        #expect(Array(bytes[58..<62]) == [0, 0, 0, 0])
        #expect(Array(bytes[62..<66]) == [0x9E, 0x37, 0x79, 0xB1])
        // Loudness: frames 1–4, 6–7 in the first byte, 8–9 in the second.
        #expect(Array(bytes[98..<100]) == [0b1101_1110, 0b0000_0011])
        #expect(bytes.count == 100 + 64 && window.encodedByteCount == bytes.count)
        let back = try SoundWindow(decoding: bytes)
        #expect(back == window && back.hasValidSignature && back.isOpen)
        var forged = back
        forged.start += .milliseconds(10)
        #expect(!forged.hasValidSignature)
        #expect(try Datagram(decoding: bytes) == .sound(window))
        #expect(try Datagram(decoding: WireSamples.messages[0].encoded()) == .message(WireSamples.messages[0]))
    }

    @Test func aPrivateWindowTravelsSealedAndOpensOnlyWithItsKey() throws {
        let key = RoomKey(name: "superbowl", master: [UInt8](repeating: 7, count: 32))
        let other = RoomKey(name: "superbowl", master: [UInt8](repeating: 8, count: 32))
        let (bits, loud) = frames(1_000)
        let window = SoundWindow.made(
            by: alice, room: key.id, key: key, sentAt: .epoch + .seconds(2), start: .epoch + .seconds(1), bits: bits,
            loud: loud)
        let bytes = window.encoded()
        #expect(bytes.count == 4 + 32 + 27 + 8 + 8 + 2 + 4_125 + 28 + 64)
        let received = try SoundWindow(decoding: bytes)
        #expect(!received.isOpen && received.hasValidSignature)
        #expect(!bytes.windowContains(bits[1...4].flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * $0)) } }))
        let opened = try #require(key.open(received))
        #expect(opened.bits == zip(bits, loud).map { $1 ? $0 : 0 } && opened.loud == loud)
        #expect(opened.encoded() == bytes)
        #expect(other.open(received) == nil)
        var moved = received
        moved.sentAt += .milliseconds(1)
        #expect(key.open(moved) == nil, "the seal binds the times")
    }

    @Test func windowsOutsideTheirOneEncodingAreRefused() throws {
        let (bits, loud) = frames(10)
        let bytes = SoundWindow.made(by: alice, room: "ab", key: nil, sentAt: .epoch, start: .epoch, bits: bits, loud: loud)
            .encoded()
        func error(_ bytes: [UInt8]) -> WireError? {
            do { _ = try SoundWindow(decoding: bytes) } catch { return error }
            return nil
        }
        var quietWithBits = bytes
        quietWithBits[61] = 1  // frame 0 is quiet
        #expect(error(quietWithBits) == .nonCanonicalSound(offset: 58))
        var padding = bytes
        padding[99] |= 0b0100  // frame 10 does not exist
        #expect(error(padding) == .nonCanonicalSound(offset: 99))
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
    }

    @Test(arguments: [UInt64(31), 32])
    func mutatedWindowsNeverTrapAndWhatDecodesIsCanonical(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let (bits, loud) = frames(40)
        let key = RoomKey(name: "superbowl", master: [UInt8](repeating: 7, count: 32))
        let windows = [
            SoundWindow.made(by: alice, room: "superbowl", key: nil, sentAt: .epoch + .milliseconds(1), start: .epoch + .milliseconds(2), bits: bits, loud: loud),
            SoundWindow.made(by: alice, room: key.id, key: key, sentAt: .epoch + .milliseconds(1), start: .epoch + .milliseconds(2), bits: bits, loud: loud),
        ].map { $0.encoded() }
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
