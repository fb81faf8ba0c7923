import Foundation
import HuddleCore
import Testing

@testable import HuddleNode

/// Proofs of equivocation on disk, and events made here stored durably.
@Suite struct StoreFaultTests {
    let alice = NodeIdentity.generate()
    let mallory = NodeIdentity.generate()

    func event(_ who: NodeIdentity, _ seq: UInt64, _ text: String) -> Event {
        who.sign(
            id: EventID(origin: who.id, seq: seq), room: "superbowl", createdAt: .epoch + .milliseconds(seq),
            context: [who.id: seq - 1], body: .chat(text: text))
    }

    @Test func aProofIsKeptAcrossARestartAndTheFaultyOriginsLaterEventsAreDeleted() throws {
        try withTemporaryDirectory { dir in
            let events = (1...4).map { event(mallory, UInt64($0), "m\($0)") } + [event(alice, 1, "a1")]
            let proof = try #require(Equivocation(events[1], event(mallory, 2, "other")))
            do {
                let store = try HuddleStore(directory: dir)
                try store.insert(events)
                #expect(try store.recordFault(proof))
                #expect(try store.eventCount(room: "superbowl") == 2)  // mallory#1 and alice#1
                // A proof at a higher seq changes nothing; the same one is not new.
                let higher = try #require(Equivocation(events[2], event(mallory, 3, "other 3")))
                #expect(try !store.recordFault(higher))
                #expect(try !store.recordFault(proof))
                try store.close()
            }
            let reopened = try reopenedStore(dir)
            #expect(try reopened.faults(room: "superbowl") == [proof])
            #expect(try reopened.faults(room: "worldcup").isEmpty)
            #expect(try reopened.events(room: "superbowl").map(\.id) == byID([events[0], events[4]]).map(\.id))
            try reopened.close()
        }
    }

    @Test func aDurableInsertStoresLikeAnyOtherAndLeavesLaterWritesNormal() throws {
        try withTemporaryDirectory { dir in
            let store = try HuddleStore(directory: dir)
            #expect(try store.insert([event(alice, 1, "made here")], durable: true) == 1)
            #expect(try store.insert([event(alice, 1, "made here")], durable: true) == 0)
            #expect(try store.insert([event(alice, 2, "from a peer")]) == 1)
            #expect(try store.eventCount(room: "superbowl") == 2)
            try store.close()
        }
    }

    @Test func eventsGivenUpOnAreDeleted() throws {
        try withTemporaryDirectory { dir in
            let store = try HuddleStore(directory: dir)
            let stranger = (5...7).map { event(mallory, UInt64($0), "past a gap") }
            try store.insert(stranger + [event(alice, 1, "kept")])
            try store.delete(stranger.map(\.id), room: "superbowl")
            #expect(try store.events(room: "superbowl").map(\.id) == [EventID(origin: alice.id, seq: 1)])
            try store.close()
        }
    }
}
