import Foundation
import HuddleCore
import NIOCore

/// Pictures on the node: preparing one to send, fetching the blobs the machine asks for, and
/// opening a picture's file when its message is shown.
extension Node {
    /// Fetches at once, and of one writer's pictures; more wait.
    static let picturesFetchedAtOnce = 4
    static let picturesFetchedAtOncePerWriter = 2

    /// Reads the picture (a file, or a page's bytes), refuses what is not a picture or is too large
    /// before reading it all, strips what says where and when it was taken, seals and keeps its
    /// blob and its own file (the sender sees it at once), then hands it to the machine.
    func preparePicture(_ source: PictureSource, caption: String, room: String, face: Face?) {
        let store = pictures
        Task {
            let result = await Task.detached { Self.prepared(source, caption: caption, store: store) }.value
            if case .success(let picture) = result { await keptPicture(picture) }
            await feed(.picturePrepared(result, room: room, from: face))
        }
    }

    /// `huddle send --photo PATH` (`/photo PATH` through the control socket): prepared while the
    /// client waits, so it hears what became of it.
    func sendPicture(path: String, caption: String, inRoomNamed name: String, json: Bool) async -> ControlResponse {
        guard let room = machine.joinedRoom(named: name) else {
            return .error(name.isEmpty ? "the node is in no room" : "the node is not in \(name)")
        }
        let store = pictures
        let result = await Task.detached { Self.prepared(.file(path), caption: caption, store: store) }.value
        if case .success(let picture) = result { await keptPicture(picture) }
        let (_, shown) = await stepShowing { machine, now in
            machine.handle(.picturePrepared(result, room: room, from: .control), now: now)
        }
        let renderer = outputRenderer(json: json, colors: false, picturesDirectory: pictures.directory)
        return .said(shown.compactMap { rendered($0, by: renderer) })
    }

    /// A picture was kept (sent or fetched): counted, and if the count passes the quota, the
    /// oldest go (the machine hears which). The directory is read once at the first picture and
    /// again only when the quota may be passed.
    func keptPicture(_ picture: Picture) async {
        let quota = configuration.picturesQuota
        let store = pictures
        if let known = shownPictures.bytesOnDisk {
            shownPictures.bytesOnDisk = known + PictureStore.bytesOnDisk(of: picture)
            guard known + PictureStore.bytesOnDisk(of: picture) > quota else { return }
        }
        let (removed, total) = await Task.detached { store.enforce(quota: quota, keeping: picture.root) }.value
        shownPictures.bytesOnDisk = total
        if !removed.isEmpty { await feed(.picturesRemoved(removed)) }
    }

    /// The bytes of the file at `path` (`~` expanded): a regular file of at most 16 MiB.
    nonisolated static func pictureFile(at path: String) -> Result<[UInt8], PictureProblem> {
        let path = (path as NSString).expandingTildeInPath
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else {
            return .failure(PictureProblem("no file at \(path)"))
        }
        // Not a device or a pipe, whose size says nothing of what reading it would bring.
        guard attributes[.type] as? FileAttributeType == .typeRegular else {
            return .failure(PictureProblem("\(path) is not a regular file"))
        }
        let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
        guard size <= Picture.maxBytes else {
            return .failure(PictureProblem("\(path) is \(size / 1_048_576) MiB; a picture is at most 16 MiB"))
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            return .failure(PictureProblem("cannot read \(path)"))
        }
        return .success(Array(data))
    }

    nonisolated static func prepared(_ source: PictureSource, caption: String, store: PictureStore) -> Result<Picture, PictureProblem> {
        let bytes: [UInt8]
        switch source {
        case .bytes(let given):
            bytes = given
        case .file(let path):
            switch pictureFile(at: path) {
            case .success(let read): bytes = read
            case .failure(let problem): return .failure(problem)
            }
        }
        guard !bytes.isEmpty, bytes.count <= Picture.maxBytes else {
            return .failure(PictureProblem("a picture is 1 byte to 16 MiB; this is \(bytes.count) bytes"))
        }
        do {
            let stripped = try MediaFile.stripped(bytes)
            let header = try MediaFile.header(of: stripped)
            let blob = PictureBlob(sealing: stripped, key: PictureBlob.newKey())
            let picture = Picture(
                type: header.type, byteCount: stripped.count, width: header.width, height: header.height,
                milliseconds: header.milliseconds, root: blob.root, key: blob.key, caption: caption)
            guard picture.isWithinLimits else { return .failure(PictureProblem("the picture is too large to send")) }
            try store.keep(blob)
            guard case .shown = store.reveal(picture) else { return .failure(PictureProblem("the picture did not open again")) }
            return .success(picture)
        } catch let error as PictureFileError {
            return .failure(PictureProblem(error.description))
        } catch {
            return .failure(PictureProblem("could not keep the picture: \(error)"))
        }
    }

    /// Opens the file of each picture a line is about to show, so the path it names is there:
    /// a picture's own bytes are on disk from its moment on, never before. A picture whose blob
    /// does not open to what its event says is marked unreadable (and counted): the line says so.
    func revealPictures(of output: NodeOutput) -> NodeOutput {
        func revealed(_ message: ShownMessage) -> ShownMessage {
            guard !message.pictureMissing, let picture = message.picture else { return message }
            var message = message
            switch pictures.reveal(picture) {
            case .shown: break
            case .missing: message.pictureMissing = true
            case .unreadable:
                message.pictureUnreadable = true
                Task { await self.feed(.dropped(.pictureMismatch, count: 1)) }
            }
            return message
        }
        switch output {
        case .room(.message(let message), let line): return .room(.message(revealed(message)), line)
        case .room(.pictureArrived(let message), let line): return .room(.pictureArrived(revealed(message)), line)
        case .room(.earlier(let items), let line):
            return .room(.earlier(items.map { if case .message(let message) = $0 { .message(revealed(message)) } else { $0 } }), line)
        case .history(let event, _, _, _):
            if let picture = event.body.picture { _ = pictures.reveal(picture) }
            return output
        default: return output
        }
    }

    /// Runs the fetches the machine asks for, a few at once and at most two of one writer's, taking
    /// writers in turn (``FairQueue``): a writer whose pictures do not come (its node stalls every
    /// fetch) holds up nobody else's. Each outcome goes back through the machine's door.
    func pictureLoop(group: any EventLoopGroup) async {
        enum Step: Sendable {
            case asked(PictureFetch)
            case finished(NodeID)
        }
        let fetcher = PictureFetcher(group: group, store: pictures)
        let (steps, stepSink) = AsyncStream<Step>.makeStream()
        let asked = fetches.pictures.items
        await withDiscardingTaskGroup { tasks in
            tasks.addTask {
                for await fetch in asked { stepSink.yield(.asked(fetch)) }
                stepSink.finish()
            }
            var waiting = FairQueue<NodeID, PictureFetch>(
                atOnce: Self.picturesFetchedAtOnce, perKey: Self.picturesFetchedAtOncePerWriter)
            for await step in steps {
                switch step {
                case .asked(let fetch): waiting.add(fetch, for: fetch.origin)
                case .finished(let origin): waiting.finished(origin)
                }
                for (origin, fetch) in waiting.startable() {
                    tasks.addTask {
                        let outcome = await fetcher.fetch(fetch)
                        if outcome == .held { await self.keptPicture(fetch.picture) }
                        await self.feed(.pictureFetched(fetch.picture.identity, outcome))
                        stepSink.yield(.finished(origin))
                    }
                }
            }
        }
    }
}
