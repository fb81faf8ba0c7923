import Foundation
import HuddleCore
import Testing

@testable import HuddleNode

/// The `Node` actor as the I/O around its machine, on a real socket and a real store, with a
/// clock the test moves and output kept in memory: that what the machine pushes leaves by the
/// socket, that what arrives is decoded and verified, and that what the store keeps survives a
/// restart. A plain UDP socket plays bob. The decisions themselves (hold-back to the millisecond,
/// digests, privacy, direct messages, pause) are tested synchronously in `NodeMachineTests`.
@Suite struct NodeActorTests {
    let room = "superbowl"
    let bob = NodeIdentity.generate()

    /// Bob's side of the room: his events, signed by him, with the context his log gives them.
    final class Bob {
        var session: RoomSession
        let identity: NodeIdentity

        init(_ identity: NodeIdentity, room: String) {
            self.identity = identity
            session = RoomSession(room: room, reader: identity.id)
        }

        func make(_ body: EventBody, at now: WallTime) throws -> Event {
            try session.compose(body, now: now, signer: identity).event
        }
    }

    /// Bob introduces himself to `alice` with a probe, as his node would, and answers hers: she
    /// takes him for a peer only once her probe to his address is answered from there
    /// (docs/PROTOCOL.md, "Trust"). A datagram can be lost on a busy machine, and what she sends
    /// an address that has not proven itself is paid by what came from it, so, like a node, he
    /// probes again (a new sequence each time) until both have happened.
    func introduce(_ peer: UDPPeer, to alice: NodeHarness) async throws {
        var answered = false
        for sequence in 1...30 as ClosedRange<UInt64> {
            let probe = Probe(
                from: bob.id, nick: "bob", incarnation: 1, sequence: sequence, sentAt: .start, port: peer.port,
                rooms: [room], peers: [])
            peer.send(bob.signed(.probe(probe)), toPort: alice.port)
            await alice.advance(.milliseconds(300))  // her probe to him is due at once
            let heard = await peer.receive(timeout: .seconds(1)) {
                if case .probe = $0 { true } else { false }
            }
            if case .probe(let hers) = heard {
                let ack = Ack(
                    from: bob.id, nick: "bob", incarnation: 1, sequence: hers.sequence, echoedSentAt: hers.sentAt,
                    rooms: [room], peers: [])
                peer.send(bob.signed(.ack(ack)), toPort: alice.port)
                answered = true
            }
            for _ in 0..<50 where answered {
                if await alice.node.step({ machine, _ in machine.membership.isProven(bob.id) }) { return }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        Issue.record("alice did not take bob for a peer for 30 s")
    }

    @Test func aMessageMadeHereIsPushedToEveryLivePeerOfTheRoom() async throws {
        let alice = try await NodeHarness.start(nick: "alice", room: room)
        defer { Task { try? await alice.stop() } }
        let peer = try UDPPeer()
        try await introduce(peer, to: alice)

        await alice.node.step { $0.originate(.chat(text: "hello"), in: room, now: $1) }
        let pushed = await peer.receive {
            if case .events(let events) = $0 { events.contains { $0.body == .chat(text: "hello") } } else { false }
        }
        guard case .events(let events) = pushed else {
            Issue.record("no push reached bob")
            return
        }
        #expect(events.allSatisfy { $0.hasValidSignature })
        #expect(events.allSatisfy { $0.origin == alice.identity.id && $0.room == room })
    }

    @Test func aProbeNotSignedByItsSenderIsDroppedAndCounted() async throws {
        let alice = try await NodeHarness.start(nick: "alice", room: room)
        defer { Task { try? await alice.stop() } }
        let peer = try UDPPeer()
        // Mallory claims to be bob: the probe carries bob's id, signed by mallory.
        let forged = NodeIdentity.generate()
        let probe = Probe(
            from: forged.id, nick: "bob", incarnation: 1, sequence: 1, sentAt: .start, port: peer.port, rooms: [room],
            peers: [])
        guard case .probe(let signedByMallory) = forged.signed(.probe(probe)) else {
            Issue.record("signing a probe gave something other than a probe")
            return
        }
        var claim = signedByMallory
        claim.from = bob.id
        peer.send(.probe(claim), toPort: alice.port)
        peer.send(.probe(Probe(
            from: bob.id, nick: "bob", incarnation: 1, sequence: 2, sentAt: .start, port: peer.port, rooms: [room],
            peers: [])), toPort: alice.port)  // unsigned
        #expect(await alice.eventually { await alice.node.machine.counters.drops[.badSignature] == 2 })
        #expect(await alice.node.machine.membership.peers[bob.id] == nil)
        // Bob's own, signed, is answered.
        try await introduce(peer, to: alice)
        #expect(await alice.node.machine.membership.peers[bob.id]?.vouched == 1)
    }

    @Test func aRestartRestoresTheRoomAndShowsNothingTwice() async throws {
        let alice = try await NodeHarness.start(nick: "alice", room: room)
        let peer = try UDPPeer()
        let bobSide = Bob(bob, room: room)
        let now = alice.clock.wall()
        peer.send(
            .events([try bobSide.make(.join(nick: "bob"), at: now), try bobSide.make(.chat(text: "hi"), at: now)]),
            toPort: alice.port)
        #expect(await alice.eventually { alice.sink.messages == ["hi"] })
        try await alice.stop()

        let again = try await NodeHarness.start(nick: "alice", room: room, dataDir: alice.dataDir)
        defer { Task { try? await again.stop() } }
        #expect(await again.node.vector(of: room)[bob.id] == 2)
        #expect(again.sink.messages == [])
        // And the room goes on: bob's next message is shown.
        peer.send(.events([try bobSide.make(.chat(text: "still here"), at: now + .milliseconds(1))]), toPort: again.port)
        #expect(await again.eventually { again.sink.messages == ["still here"] })
    }
}

/// What a node does with datagrams it must not take whole.
extension NodeActorTests {
    @Test func anEventWithABadSignatureDropsItselfNotTheOthersInItsDatagram() async throws {
        let alice = try await NodeHarness.start(nick: "alice", room: room)
        defer { Task { try? await alice.stop() } }
        let peer = try UDPPeer()
        let now = alice.clock.wall()
        let good = try Bob(bob, room: room).make(.join(nick: "bob"), at: now)
        let carol = NodeIdentity.generate()
        let signed = try Bob(carol, room: room).make(.join(nick: "carol"), at: now)
        let forged = Event(
            id: signed.id, room: room, createdAt: signed.createdAt, context: signed.context,
            body: .join(nick: "mallory"), signature: signed.signature)
        peer.send(.events([forged, good]), toPort: alice.port)
        #expect(await alice.eventually { await alice.node.vector(of: room)[bob.id] == 1 })
        #expect(await alice.node.vector(of: room)[carol.id] == 0)
        #expect(await alice.node.machine.counters.rejected == 1)
    }

    @Test func aDatagramLongerThanANodeSendsIsDroppedUnread() async throws {
        let alice = try await NodeHarness.start(nick: "alice", room: room)
        defer { Task { try? await alice.stop() } }
        let peer = try UDPPeer()
        let bobSide = Bob(bob, room: room)
        let now = alice.clock.wall()
        var events = [try bobSide.make(.join(nick: "bob"), at: now)]
        while WireMessage.events(events).encodedByteCount <= WireLimits.maxDatagramBytes {
            events.append(try bobSide.make(.chat(text: String(repeating: "x", count: 1_000)), at: now))
        }
        #expect(WireMessage.events(events).encodedByteCount < 65_507)  // still one UDP datagram
        peer.send(.events(events), toPort: alice.port)
        #expect(await alice.eventually { await alice.node.machine.counters.rejected == 1 })
        #expect(await alice.node.vector(of: room)[bob.id] == 0)
        // The same events in datagrams a node would send are taken.
        peer.send(.events(Array(events.prefix(10))), toPort: alice.port)
        #expect(await alice.eventually { await alice.node.vector(of: room)[bob.id] == 10 })
    }
}
