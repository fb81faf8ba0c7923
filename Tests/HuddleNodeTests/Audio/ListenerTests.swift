import Foundation
import HuddleAudio
import HuddleCore
import Testing

@testable import HuddleNode

/// The listening path off the node's actor: a source, the extractor on the listener's thread,
/// windows on the node's clock, and matches between two viewers' sound.
@Suite struct ListenerTests {
    let start = WallTime(microsecondsSinceEpoch: 1_764_000_000_000_000)
    let bob = NodeID(bytes: [UInt8](repeating: 2, count: 32))!

    @Test func aFileIsHeardAsWindowsOnTheNodesClock() async throws {
        let path = try TestSound.wavFile(TestSound.broadcast(seconds: 5))
        let source = try WAVFileSource(path: path, start: start, clock: SteppingClock(start))
        let outputs = await TestSound.collect(Listener(source: source))
        #expect(outputs.first == .started(source: .file, at: start))
        #expect(outputs.last == .stopped(reason: nil))
        let windows = outputs.compactMap { output -> AudioFeatures? in
            if case .window(let features) = output { features } else { nil }
        }
        #expect(windows.count == 3, "2 s, 2 s and what is left")
        #expect(windows.map(\.start) == [10, 2_010, 4_010].map { start.millisecondsSinceEpoch + $0 })  // features count ms
        #expect(windows.prefix(2).allSatisfy { $0.count == 200 })
        #expect(windows.allSatisfy { $0.loudDuration > 0.5 * $0.duration }, "the broadcast is loud")
    }

    @Test func twoViewersFilesOfOneBroadcastMatchAtTheirDelay() async throws {
        // alice hears the broadcast from the start; bob's stream is 3.2 s behind: his file is
        // 3.2 s of a quiet room, then the same broadcast. Both nodes start at the same instant.
        let broadcast = TestSound.broadcast(seconds: 20)
        let quietRoom = TestSound.broadcast(seconds: 3.2, seed: 99).map { $0 * 0.0002 }
        let alice = try WAVFileSource(path: try TestSound.wavFile(broadcast), start: start, clock: SteppingClock(start))
        let bob = try WAVFileSource(
            path: try TestSound.wavFile(quietRoom + broadcast), start: start, clock: SteppingClock(start))
        async let heardByAlice = TestSound.collect(Listener(source: alice))
        async let heardByBob = TestSound.collect(Listener(source: bob))
        let own = try #require(TestSound.joined(await heardByAlice))
        let theirs = try #require(TestSound.joined(await heardByBob))
        let found = PairMatch.run(own: own, peer: theirs, peerID: self.bob, centre: 0, reach: 120)
        let heard = try #require(found.heard, "\(found.match)")
        #expect((heard.lag - .milliseconds(3_200)).magnitude <= .milliseconds(10), "lag \(heard.lag)")
        #expect(heard.peer == self.bob && heard.confidence >= 9)
        // The moment is the middle of the sound both heard: alice's 0–20 s.
        #expect(
            (heard.at - (start + .seconds(10))).magnitude <= .milliseconds(100),
            "at \(heard.at - start)")
    }

    @Test func aSearchCentredOnTheClocksDifferenceFindsStreamsWhateverTheClocksSay() throws {
        let features = try AudioFeatureExtractor.features(
            of: PCMAudio(sampleRate: 16_000, samples: TestSound.broadcast(seconds: 12)), start: 1_000_000)
        // bob's machine clock is 10 minutes ahead and his stream 1.5 s behind.
        var theirs = features
        theirs.start += 600_000 + 1_500
        let blind = PairMatch.run(own: features, peer: theirs, peerID: bob, centre: 0, reach: 120)
        #expect(blind.heard == nil, "10 minutes is outside ±120 s")
        let centred = PairMatch.run(own: features, peer: theirs, peerID: bob, centre: 600_020, reach: 120)
        #expect(((centred.heard?.lag ?? .zero) - .milliseconds(601_500)).magnitude <= .milliseconds(5), "\(centred.match)")
        let narrow = PairMatch.run(own: features, peer: theirs, peerID: bob, centre: 601_480, reach: 5)
        #expect(((narrow.heard?.lag ?? .zero) - .milliseconds(601_500)).magnitude <= .milliseconds(5), "\(narrow.match)")
    }

    @Test func theRunnerMatchesAPairOnceThereIsSoundAndSaysWhatItFound() async throws {
        let features = try AudioFeatureExtractor.features(
            of: PCMAudio(sampleRate: 16_000, samples: TestSound.broadcast(seconds: 12)), start: 1_000_000)
        let runner = MatchRunner()
        defer { runner.stop() }
        runner.addOwn(features)
        var theirs = features
        theirs.start += 2_500
        runner.addPeer(bob, theirs, sentAt: theirs.start + 12_000, receivedAt: theirs.start + 12_003)
        var attempts = runner.matches.makeAsyncIterator()
        let attempt = try #require(await attempts.next())
        #expect(attempt.peer == bob)
        #expect(
            ((attempt.result.heard?.lag ?? .zero) - .milliseconds(2_500)).magnitude <= .milliseconds(5),
            "\(attempt.result.match)")
    }

    @Test func aTimelineKeepsTheLastSecondsInOrderWithGapsQuiet() {
        var timeline = FeatureTimeline(seconds: 1)
        func window(_ start: Int64, _ count: Int, _ value: UInt32) -> AudioFeatures {
            AudioFeatures(start: start, bits: [UInt32](repeating: value, count: count), loud: [Bool](repeating: true, count: count))
        }
        timeline.add(window(1_000, 30, 1))
        timeline.add(window(1_500, 20, 2))  // 20 frames lost between: quiet
        #expect(timeline.count == 70 && timeline.start == 1_000 && timeline.end == 1_700)
        #expect(timeline.features.loud[30..<50].allSatisfy { !$0 })
        timeline.add(window(1_300, 20, 3))  // the lost window, late
        #expect(timeline.features.bits[30..<50].allSatisfy { $0 == 3 })
        timeline.add(window(1_700, 60, 4))  // past the capacity of 100 frames: the oldest go
        #expect(timeline.count == 100 && timeline.start == 1_300 && timeline.end == 2_300)
        timeline.add(window(900, 10, 5))  // older than everything held
        #expect(timeline.start == 1_300)
        timeline.add(window(100_000, 10, 6))  // far ahead: start over
        #expect(timeline.start == 100_000 && timeline.count == 10)
        #expect(timeline.last(seconds: 0.05).count == 5)
    }
}
