import Foundation
import HuddleAudio
import HuddleCore
import Testing

@testable import HuddleNode

/// `--audio-file`: a WAV file heard in real time from a given instant, and refused in words
/// when it is not one Huddle can play.
@Suite struct WAVFileSourceTests {
    let start = WallTime(microsecondsSinceEpoch: 1_764_000_000_000_000)  // on the node's wall clock

    @Test func theFirstSampleCountsAsHeardAtTheStartAndEachBlockWaitsUntilItIsOver() throws {
        let path = try TestSound.wavFile(TestSound.broadcast(seconds: 1, rate: 44_100), rate: 44_100)
        let clock = SteppingClock(start - .seconds(5))
        let source = try WAVFileSource(path: path, start: start, clock: clock)
        let first = try #require(try source.nextBlock())
        #expect(first.at == start && first.samples.count == 441)
        #expect(clock.wall() == start + .milliseconds(10), "handed over once its last sample was heard")
        let second = try #require(try source.nextBlock())
        #expect(second.at == start + .milliseconds(10) && clock.wall() == start + .milliseconds(20))
        var blocks = 2
        while let block = try source.nextBlock() {
            blocks += 1
            #expect(block.at == start + TimeSpan.milliseconds(10) * Int64(blocks - 1))
        }
        #expect(blocks == 100 && clock.wall() == start + .seconds(1))
    }

    @Test func inRealTimeItPlaysNoFasterThanSoundIsHeard() throws {
        let path = try TestSound.wavFile(TestSound.broadcast(seconds: 1))
        let clock = SystemListeningClock()
        let begin = clock.wall() + .milliseconds(100)
        let source = try WAVFileSource(path: path, start: begin)
        let first = try #require(try source.nextBlock())
        let handed = clock.wall()
        #expect(first.at == begin)
        // Never faster than sound is heard: that is the property. How much later a block comes is
        // the machine's business (a busy test process runs late), so the upper bounds only catch
        // a source that does not pace at all or stalls, not a slow scheduler.
        #expect(handed >= begin + .milliseconds(10), "first block \(handed - begin) after the start")
        #expect(handed < begin + .seconds(2), "first block \(handed - begin) after the start")
        for _ in 0..<49 { _ = try source.nextBlock() }
        let half = clock.wall() - begin
        #expect(half >= .milliseconds(500) && half < .seconds(5), "50 blocks in \(half)")
        source.close()
        #expect(try source.nextBlock() == nil, "a closed source hands out nothing more")
    }

    @Test func aFileThatIsNotAPlayableWAVIsRefusedInWords() throws {
        func refusal(_ path: String) -> String? {
            do {
                _ = try WAVFileSource(path: path, start: start)
                return nil
            } catch {
                return error.description
            }
        }
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-\(UUID()).wav").path
        #expect(refusal(missing) == "\(missing) does not exist")

        let text = try TestSound.file(Array("not sound at all\n".utf8), name: "notes.wav")
        let notWAV = try #require(refusal(text))
        #expect(notWAV.hasPrefix("\(text) is not a WAV file Huddle can play: "), "\(notWAV)")

        // A 32-bit float WAV: the header says format 3.
        var float = PCMAudio(sampleRate: 16_000, samples: [0.1, 0.2]).wavBytes()
        float[20] = 3
        let floatPath = try TestSound.file(float, name: "float.wav")
        let floatRefusal = try #require(refusal(floatPath))
        #expect(floatRefusal.contains("16-bit"), "\(floatRefusal)")

        let silent = try TestSound.wavFile([], name: "empty.wav")
        #expect(refusal(silent) == "\(silent) holds no sound (0 samples)")

        let fast = try TestSound.file(PCMAudio(sampleRate: 96_000, samples: [0.1]).wavBytes(), name: "fast.wav")
        let fastRefusal = try #require(refusal(fast))
        #expect(fastRefusal.contains("96") && fastRefusal.hasPrefix(fast), "\(fastRefusal)")
    }
}
