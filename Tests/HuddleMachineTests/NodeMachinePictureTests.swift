import Testing

@testable import HuddleCore

/// Pictures through node machines: a picture's bytes are asked for as soon as its event arrives,
/// from the writer first; nothing of it is shown before its moment; a picture shown before its
/// bytes are here says so and shows when they are; a stranger's, an oversized one and a flood of
/// them are not fetched.
@Suite(.offThePool) struct NodeMachinePictureTests {
    typealias P = PictureSamples

    func pair(shield: TimeSpan? = nil) -> (lan: MachineLAN, alice: Int, bob: Int) {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let bob = lan.add("bob", shield: shield)
        lan.introduceAll()
        return (lan, alice, bob)
    }

    func send(_ bytes: [UInt8], caption: String, from index: Int, in lan: inout MachineLAN) {
        lan.on(index) { machine, now in
            machine.handle(.picturePrepared(preparedPicture(bytes, caption: caption), room: "superbowl", from: nil), now: now)
        }
        lan.deliverAll()
    }

    func preparedPicture(_ bytes: [UInt8], caption: String) -> Result<Picture, PictureProblem> {
        let stripped = try! MediaFile.stripped(bytes)
        let header = try! MediaFile.header(of: stripped)
        let blob = PictureBlob(sealing: stripped, key: PictureBlob.newKey())
        return .success(
            Picture(
                type: header.type, byteCount: stripped.count, width: header.width, height: header.height,
            milliseconds: header.milliseconds, root: blob.root,
                key: blob.key, caption: caption))
    }

    func shownPictures(_ host: MachineLAN.Host) -> [ShownMessage] {
        host.outputs.compactMap { if case .room(.message(let shown), _) = $0, shown.picture != nil { shown } else { nil } }
    }

    func arrived(_ host: MachineLAN.Host) -> [ShownMessage] {
        host.outputs.compactMap { if case .room(.pictureArrived(let shown), _) = $0 { shown } else { nil } }
    }

    @Test func aPictureIsFetchedFromItsWriterFirstAndShownWhenItsBytesAreHere() {
        var (lan, alice, bob) = pair()
        send(P.jpeg().bytes, caption: "the replay", from: alice, in: &lan)
        let fetch = try! #require(lan[bob].fetches.first)
        #expect(fetch.sources.first == lan[alice].address)
        #expect(fetch.picture.caption == "the replay")
        // The shield is off: the line shows at once, before the bytes, and says so.
        let shown = try! #require(shownPictures(lan[bob]).first)
        #expect(shown.pictureMissing && shown.text == "the replay")
        #expect(arrived(lan[bob]).isEmpty)
        lan.on(bob) { $0.handle(.pictureFetched(fetch.picture.identity, .held), now: $1) }
        #expect(arrived(lan[bob]).map(\.event.id) == [shown.event.id])
        #expect(arrived(lan[bob]).first?.pictureMissing == false)
        // The writer holds its own picture: nothing to fetch, nothing missing.
        #expect(lan[alice].fetches.isEmpty)
        #expect(shownPictures(lan[alice]).first?.pictureMissing == false)
    }

    @Test func nothingOfAPictureShowsBeforeItsMomentThoughItsBytesAreAskedForAtOnce() {
        var (lan, alice, bob) = pair(shield: .seconds(90))
        send(P.png().bytes, caption: "look", from: alice, in: &lan)
        let fetch = try! #require(lan[bob].fetches.first)
        lan.on(bob) { $0.handle(.pictureFetched(fetch.picture.identity, .held), now: $1) }
        #expect(shownPictures(lan[bob]).isEmpty && arrived(lan[bob]).isEmpty)
        lan.advance(.seconds(89))
        #expect(shownPictures(lan[bob]).isEmpty)
        lan.advance(.seconds(2))
        let shown = try! #require(shownPictures(lan[bob]).first)
        #expect(!shown.pictureMissing && shown.held >= .seconds(89))
    }

    @Test func aFailedFetchIsAskedAgainLaterAndNotForever() {
        var (lan, alice, bob) = pair()
        send(P.webp().bytes, caption: "", from: alice, in: &lan)
        let root = try! #require(lan[bob].fetches.first).picture.identity
        lan.on(bob) { $0.handle(.pictureFetched(root, .failed([.pictureMismatch])), now: $1) }
        #expect(lan[bob].machine.counters.drops[.pictureMismatch] == 1)
        // Soon after the first failure (a busy source), then less and less often.
        lan.advance(.milliseconds(900))
        #expect(lan[bob].fetches.count == 1)
        lan.advance(.milliseconds(200))
        #expect(lan[bob].fetches.count == 2)
        lan.on(bob) { $0.handle(.pictureFetched(root, .failed([])), now: $1) }
        lan.advance(.milliseconds(1_900))
        #expect(lan[bob].fetches.count == 2)
        lan.advance(.milliseconds(200))
        #expect(lan[bob].fetches.count == 3)
        for _ in 0..<NodeMachine.pictureAttempts - 2 {
            lan.on(bob) { $0.handle(.pictureFetched(root, .failed([])), now: $1) }
            lan.advance(NodeMachine.pictureRetryAfter + .seconds(1))
        }
        #expect(lan[bob].fetches.count == NodeMachine.pictureAttempts)
    }

    @Test func aPictureOverTheLimitsIsRefusedUnfetchedButItsCaptionShows() {
        var (lan, alice, bob) = pair()
        var bomb = try! preparedPicture(P.jpeg().bytes, caption: "4 GiB").get()
        bomb.byteCount = Int(UInt32.max)
        lan.on(alice) { $0.handle(.picturePrepared(.success(bomb), room: "superbowl", from: nil), now: $1) }
        lan.deliverAll()
        var pixels = try! preparedPicture(P.jpeg().bytes, caption: "50k square").get()
        (pixels.width, pixels.height) = (50_000, 50_000)
        lan.on(alice) { $0.handle(.picturePrepared(.success(pixels), room: "superbowl", from: nil), now: $1) }
        lan.deliverAll()
        var long = try! preparedPicture(P.jpeg().bytes, caption: "45 s").get()
        (long.type, long.milliseconds) = (.clip(.mp4), 45_000)
        lan.on(alice) { $0.handle(.picturePrepared(.success(long), room: "superbowl", from: nil), now: $1) }
        lan.deliverAll()
        #expect(lan[bob].fetches.isEmpty)
        #expect(lan[bob].machine.counters.drops[.pictureTooLarge] == 3)
        #expect(shownPictures(lan[bob]).map(\.text) == ["4 GiB", "50k square", "45 s"])
        // Their lines say they will not come, not that they are on their way.
        #expect(shownPictures(lan[bob]).allSatisfy { $0.pictureRefused && !$0.pictureMissing })
    }

    @Test func aWritersFloodOfPicturesRunsOutOfItsBudget() {
        var (lan, alice, bob) = pair()
        // Each costs at least 64 KiB of the writer's 64 MiB: a flood of tiny ones stops near a thousand.
        var tiny = try! preparedPicture(P.png().bytes, caption: "").get()
        for n in 0..<1_100 {
            tiny.root = (0..<32).map { UInt8(truncatingIfNeeded: n >> ($0 % 4 * 8)) ^ UInt8($0) }
            let picture = tiny
            lan.on(alice) { $0.handle(.picturePrepared(.success(picture), room: "superbowl", from: nil), now: $1) }
            if n % 100 == 99 { lan.deliverAll() }
        }
        lan.deliverAll()
        let fetched = lan[bob].fetches.count
        #expect((1_000...1_030).contains(fetched), "\(fetched) fetched")
        #expect(lan[bob].machine.counters.drops[.pictureBudget] == 1_100 - fetched)
    }
}
