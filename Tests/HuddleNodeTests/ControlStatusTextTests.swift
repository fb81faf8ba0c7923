import Foundation
import Testing

@testable import HuddleCore
@testable import HuddleNode

@Suite struct ControlStatusTextTests {
    @Test func readableTables() {
        let text = sampleStatus.text()
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "alice  abababababab  port 7700  up 1 h 2 min  addresses 192.0.2.11")
        #expect(lines[1] == "data dir /home/alice/.local/share/huddle/alice")
        #expect(text.contains("""
            PEERS
              NICK   ID            ADDRESS          STATE    RTT      LAST SEEN  ROOMS      FOUND BY
              bob    cdcdcdcdcdcd  192.0.2.12:7700  alive    0.42 ms  1.2 s ago  superbowl  mdns
              carol  efefefefefef  192.0.2.13:7700  suspect  -        -          -          seed
            """))
        #expect(text.contains("""
            ROOM superbowl (current): 41 events shown
              NICK         ID            STREAM            CALIBRATED
              alice (you)  abababababab  yours             yes
              bob          cdcdcdcdcdcd  2.0 s behind you  yes
              carol        efefefefefef  not calibrated    no
              shown by writer: alice 12, bob 29
            """))
        // What is held back is in no count a person reads: not 42 events, not bob's 30.
        #expect(!text.contains("42 events") && !text.contains("bob 30"))
        #expect(lines.last == "COUNTERS packets in 10, out 12, rejected 0; events received 30, stored 42, duplicates 0")
        #expect(!text.contains("\u{1B}"))
    }

    /// A node that does not use mDNS says so under its data dir; one that does says nothing.
    @Test func aNodeWithoutMDNSSaysSoAndWhy() {
        var status = sampleStatus
        #expect(!status.text().contains("mDNS"))
        status.node.mdns = "on"
        #expect(!status.text().contains("mDNS"))
        status.node.mdns = "off"
        #expect(status.text().split(separator: "\n")[2] == "mDNS off (--no-mdns): friends are found by address (--peer) and through the peers they know")
        status.node.mdns = "unavailable"
        #expect(status.text().split(separator: "\n")[2].hasPrefix("mDNS unavailable: no daemon answered at the start"))
    }

    /// A 64-column terminal: the tables leave out ids, how a peer was found, when it was last
    /// heard, and cut a long address short, rather than wrap; without a width nothing is left out.
    @Test func aNarrowTerminalGetsNarrowerTablesNotWrappedLines() {
        var status = sampleStatus
        status.peers[0].address = "[fd00:1234:5678:9abc:def0:1234:5678:9abc]:7700"
        let narrow = status.text(width: 64)
        let tables = narrow.split(separator: "\n").filter { $0.hasPrefix("  ") && !$0.contains("shown by writer") }
        for line in tables { #expect(line.count <= 64, "\(line.count): \(line)") }
        #expect(narrow.contains("  NICK   ADDRESS                     STATE    RTT      ROOMS\n"))
        #expect(narrow.contains("  bob    [fd00:1234:5678:9abc:def0…  alive    0.42 ms  superbowl\n"))
        #expect(narrow.contains("  NICK         ID            STREAM            CALIBRATED\n"))
        let narrower = status.text(width: 48)
        #expect(narrower.contains("  NICK         STREAM            CALIBRATED\n"))
        #expect(narrower.contains("  bob          2.0 s behind you  yes\n"))
        let wide = status.text()
        #expect(wide.contains("[fd00:1234:5678:9abc:def0:1234:5678:9abc]:7700") && wide.contains("FOUND BY"))
    }

    @Test func dropsWaitingEventsAndQuarantinesAreSpelledOut() {
        var status = sampleStatus
        status.counters.rejected = 7
        status.counters.drops = ["bad_signature": 2, "over_budget": 5]
        status.rooms[0].waitingCount = 3
        status.rooms[0].quarantined = [String(repeating: "cd", count: 32): 4]
        let text = status.text()
        #expect(text.contains("ROOM superbowl (current): 41 events shown, 3 waiting for earlier events"))
        #expect(text.contains("  quarantined: bob signed two versions of its event #4; nothing of it from there on"))
        #expect(text.hasSuffix("rejected 7; events received 30, stored 42, duplicates 0\n  dropped: over budget 5, bad signature 2"))
    }

    @Test func peerTextIsMadeSafe() {
        var status = sampleStatus
        status.peers[0].nick = "bob\u{1B}[2J"
        status.rooms[0].members[1].nick = "\u{202E}bob"
        let text = status.text()
        #expect(!text.unicodeScalars.contains { TerminalText.isUnsafe($0) && $0 != "\n" })
        #expect(text.contains(#"bob\x1B[2J"#))
    }

    @Test func aPeerReachedThroughAnotherSaysThrough() {
        var status = sampleStatus
        status.peers[0].relay = NodeStatus.Relay(nick: "carol", rttMs: 2.3)
        let text = status.text()
        #expect(text.contains("  bob    cdcdcdcdcdcd  192.0.2.12:7700, reachable only through carol (2.30 ms)  alive "))
    }

    @Test func emptyNode() {
        var status = sampleStatus
        status.peers = []
        status.rooms = []
        let text = status.text()
        #expect(text.contains("PEERS\n  none yet"))
        #expect(text.contains("ROOMS none"))
    }

    @Test func listeningSaysWhatOfTheSoundLeftAndToWhom() {
        var status = sampleStatus
        status.listening = NodeStatus.Listening(
            source: "device", startedAt: 1_795_000_000_000,
            peers: ["bob": NodeStatus.Match(verdict: "aligned", lagMs: 3_200, confidence: 47.5)],
            sharing: NodeStatus.Sharing(
                now: "rechecking", to: ["bob", "carol"], heardS: 600, sharedS: 32, sharedWith: ["bob": 32, "carol": 12]))
        var text = status.text()
        #expect(text.contains("  sound shared: 32 s of 600 s heard, sealed for each peer; the latest 2 s: sent to bob, carol (rechecking)"))
        #expect(text.contains("  bob: heard 3.2 s later (confidence 48)"))
        status.listening?.sharing.to = []
        status.listening?.sharing.now = "kept"
        text = status.text()
        #expect(text.contains("the latest 2 s: kept here"))
    }

    @Test func jsonHasSnakeCaseKeys() throws {
        let text = try sampleStatus.jsonText()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let node = try #require(object["node"] as? [String: Any])
        #expect(node["uptime_ms"] as? Int == 3_725_000)
        #expect(node["data_dir"] as? String == "/home/alice/.local/share/huddle/alice")
        let peer = try #require((object["peers"] as? [[String: Any]])?.first)
        #expect(peer["rtt_ms"] as? Double == 0.42)
        #expect(peer["found_by"] as? String == "mdns")
        let room = try #require((object["rooms"] as? [[String: Any]])?.first)
        #expect(room["held_back_count"] as? Int == 1)
        let vector = try #require(room["version_vector"] as? [String: Any])
        #expect(vector[String(repeating: "ab", count: 32)] as? Int == 12)
        let counters = try #require(object["counters"] as? [String: Any])
        #expect(counters["events_stored"] as? Int == 42)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try decoder.decode(NodeStatus.self, from: Data(text.utf8)) == sampleStatus)
    }
}
