import Testing

@testable import HuddleCore

/// The relay wrapper (kind 10, docs/PROTOCOL.md): its exact bytes, strict decoding, and random
/// and mutated input that never traps and, when accepted, re-encodes to the same bytes.
@Suite(.offThePool) struct RelayCodecTests {
    @Test func theRelayCodecRoundTripsAndRefusesWhatItMustNot() throws {
        let from = NodeID.fixture(1), to = NodeID.fixture(2)
        let leaving = WireMessage.leaving(Leaving(from: from, incarnation: 7))
        let relay = try #require(RelayMessage(from: from, to: to, payload: leaving.encoded()))
        let bytes = relay.encoded()
        #expect(bytes.count == RelayMessage.headerByteCount + leaving.encodedByteCount)
        #expect(Array(bytes.prefix(4)) == [0x48, 0x44, WireProtocol.version, 10])
        #expect(RelayMessage.isRelay(bytes) && !RelayMessage.isRelay(leaving.encoded()))
        let decoded = try RelayMessage(decoding: bytes)
        #expect(decoded == relay && decoded.message == leaving && decoded.encoded() == bytes)
        // A relay is not a message: the message decoder does not take it.
        #expect(throws: WireError.unknownMessageKind(10)) { try WireMessage(decoding: bytes) }
        // Trailing bytes, a short payload, a length past the datagram, garbage inside.
        #expect(throws: WireError.self) { try RelayMessage(decoding: bytes + [0]) }
        #expect(throws: WireError.self) { try RelayMessage(decoding: Array(bytes.dropLast())) }
        var long = bytes
        long[68] = 0xff
        long[69] = 0xff
        #expect(throws: WireError.lengthOutOfRange(.relayPayload, length: 65_535, min: 4, max: 59_930, offset: 68)) {
            try RelayMessage(decoding: long)
        }
        var garbage = bytes
        garbage[70] = 0
        #expect(throws: WireError.self) { try RelayMessage(decoding: garbage) }
    }

    @Test func aRouteMakesTheDatagramToSend() throws {
        let me = NodeID.fixture(1), bob = NodeID.fixture(2), carol = NodeID.fixture(3)
        let bobAt = PeerAddress(host: "10.77.2.12", port: 7400), carolAt = PeerAddress(host: "10.77.2.11", port: 7400)
        let push = WireMessage.events([Event.fixture(me, 1, .chat(text: "hi"))]).encoded()
        #expect(Route.direct(bobAt).datagram(push, from: me, to: bob)! == (push, bobAt))
        let relayed = try #require(Route.via(relay: carol, address: carolAt).datagram(push, from: me, to: bob))
        #expect(relayed.address == carolAt)
        let relay = try RelayMessage(decoding: relayed.bytes)
        #expect(relay.from == me && relay.to == bob && relay.payload == push)
        #expect(Route.via(relay: carol, address: carolAt).relay == carol && Route.direct(bobAt).relay == nil)
        // Nothing for no route; a digest, which nobody signs, goes through no relay.
        #expect(Route.none.datagram(push, from: me, to: bob) == nil)
        let digest = WireMessage.digest(RoomDigest(from: me, room: "superbowl", vector: VersionVector())).encoded()
        #expect(Route.via(relay: carol, address: carolAt).datagram(digest, from: me, to: bob) == nil)
    }

    @Test func aRelayedProbeStillCarriesItsSendersSignatureAndOnlyIts() throws {
        let alice = try NodeIdentity(privateKeyBytes: [UInt8](repeating: 7, count: 32))
        let bob = NodeID.fixture(2), carol = NodeID.fixture(3)
        let probe = alice.signed(.probe(Probe(
            from: alice.id, nick: "alice", incarnation: 1, sequence: 1, sentAt: .start + .microseconds(5), port: 7400, rooms: ["superbowl"],
            peers: [])))
        var bytes = try #require(RelayMessage(from: alice.id, to: bob, payload: probe.encoded())).encoded()
        let relayed = try RelayMessage(decoding: bytes)
        #expect(relayed.message?.hasValidMembershipSignature == true && relayed.signer == alice.id)
        // Readdressed on the way: the probe is still alice's, for the target to check; the relay
        // header is not signed, which is why a relay forwards only from `from`'s own address.
        bytes.replaceSubrange(36..<68, with: carol.bytes)
        #expect(try RelayMessage(decoding: bytes).message?.hasValidMembershipSignature == true)
        // One bit of the payload changed: the target's check fails.
        bytes[80] ^= 1
        #expect(try RelayMessage(decoding: bytes).message?.hasValidMembershipSignature == false)
    }

    @Test func theExampleOfTheProtocolDocument() throws {
        // alice (01 00…) asks a relay to pass her goodbye at incarnation 7 to bob (02 00…).
        let alice = NodeID.fixture(1), bob = NodeID.fixture(2)
        let leaving = WireMessage.leaving(Leaving(from: alice, incarnation: 7, signature: [UInt8](repeating: 0xAB, count: 64)))
        let bytes = try #require(RelayMessage(from: alice, to: bob, payload: leaving.encoded())).encoded()
        let expected: [UInt8] =
            [0x48, 0x44, 0x06, 0x0A] + [1] + [UInt8](repeating: 0, count: 31) + [2] + [UInt8](repeating: 0, count: 31)
            + [0x00, 0x6C]  // 108 bytes of payload: a goodbye
            + [0x48, 0x44, 0x06, 0x09] + [1] + [UInt8](repeating: 0, count: 31) + [0, 0, 0, 0, 0, 0, 0, 7]
            + [UInt8](repeating: 0xAB, count: 64)
        #expect(bytes == expected)
        #expect(bytes.count == 178)
    }

    @Test func aSoundWindowTravelsInARelayAndItsSenderIsItsSigner() throws {
        let alice = NodeIdentity.generate(), bob = NodeID.fixture(2)
        let pairKey = RoomKey(name: "@bob", master: [UInt8](repeating: 5, count: 32))
        let window = SoundWindow.made(
            by: alice, room: "superbowl", for: bob, pairKey: pairKey, sentAt: .epoch + .seconds(1), start: .epoch,
            bits: [1, 2, 3], loud: [true, true, false])
        let relay = try #require(RelayMessage(from: alice.id, to: bob, payload: window.encoded()))
        let decoded = try RelayMessage(decoding: relay.encoded())
        #expect(decoded.content == .sound(window) && decoded.message == nil)
        #expect(decoded.signer == alice.id)
        // Someone else's window is carried only as theirs: the relay names the signer as `from`,
        // and Membership refuses one whose `from` is not its signer (notItsOwn).
        let forged = try #require(RelayMessage(from: bob, to: alice.id, payload: window.encoded()))
        #expect(forged.signer != forged.from)
    }

    /// Decodes `bytes` as a relay; if that works, checks it re-encodes to the same bytes.
    static func checkCanonical(_ bytes: [UInt8], _ failures: inout [[UInt8]]) -> Bool {
        guard let relay = try? RelayMessage(decoding: bytes) else { return false }
        if relay.encoded() != bytes || relay.content.encoded() != relay.payload, failures.count < 5 {
            failures.append(bytes)
        }
        return true
    }

    @Test("mutated relays of every relayable sample either throw or re-encode", arguments: [UInt64(41), 42])
    func mutations(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var failures: [[UInt8]] = []
        var decoded = 0
        let samples = WireSamples.smallMessages.filter { RelayMessage.relayableKinds.contains($0.kind) }.compactMap {
            RelayMessage(from: WireSamples.alice, to: WireSamples.bob, payload: $0.encoded())?.encoded()
        }
        #expect(samples.count >= 4)
        for bytes in samples {
            for _ in 0..<200 where Self.checkCanonical(WireFuzzTests.mutate(bytes, using: &rng), &failures) {
                decoded += 1
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        #expect(decoded > 0)
    }

    @Test("garbage behind a relay's envelope never traps")
    func garbage() {
        var rng = SplitMix64(seed: 0x7E1A)
        var failures: [[UInt8]] = []
        for _ in 0..<5_000 {
            let count = Int.random(in: 0...300, using: &rng)
            let payload = (0..<count).map { _ in
                Bool.random(using: &rng) ? UInt8.random(in: 0...3, using: &rng) : UInt8.random(in: 0...255, using: &rng)
            }
            _ = Self.checkCanonical([0x48, 0x44, WireProtocol.version, RelayMessage.kind] + payload, &failures)
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}
