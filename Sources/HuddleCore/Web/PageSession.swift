import Foundation

/// What a paired page asks the node to do (docs/WEB.md, "Sealed messages"), timed when it
/// reached the node (a mark with the link's one-way delay, which the machine takes off).
public enum WebInput: Sendable, Equatable {
    case line(String, at: WallTime)
    /// A tap on Now, arrived at `at`, the link's one-way delay ago (``LinkDelay``).
    case mark(label: String?, at: WallTime, linkDelay: TimeSpan)
    case pause(at: WallTime)
    case resume(at: WallTime)
    case listen(Bool, at: WallTime)
    case passphrase(String?)
    /// A device was just paired: the node tells its viewer.
    case paired(name: String)
    /// The typed code on offer was guessed at too often and no longer pairs: the node tells its
    /// viewer (someone on the network is guessing).
    case codeWornOut
    /// A page opened a session: it needs the view as it stands.
    case opened
    /// A page sent a photo (its parts put together): send it, as `/photo` does a file.
    case photo([UInt8], caption: String)
    /// A page asks for the bytes of a picture shown on it (by root, 64 hex digits): answered to
    /// that session only.
    case picture(root: String, session: Int)
    /// A page's photo was refused before it reached the machine.
    case photoRefused(PhotoRefusal, session: Int)
}

/// Why a photo from a page did not reach the machine (worded by the shell).
public enum PhotoRefusal: Sendable, Equatable {
    /// A part came out of order, or was not base64, or was larger than ``PageSession/photoPartBytes``.
    case brokenPart
    /// Larger than ``PageSession/maximumPhotoBytes``.
    case tooLarge
    /// `photo` named more or fewer parts than came.
    case incomplete
}

/// An open page's session, the node's side of what the page sends (docs/WEB.md, "Sealed
/// messages"): each frame opened in order, a photo put together part by part, the link timed by
/// the node's pings. Pure: time is passed in. The first frame that does not open ends it.
///
/// ```swift
/// var session = PageSession(opened, number: 3)
/// let id = session.ping(now: now)                        // {"t":"ping","id":…} goes out
/// switch session.receive(frame, arrived: wall, now: now) {
/// case .input(let input): await node.webInput(input)
/// case .pong(let id): send(.pong(id: id))
/// case .nothing: break
/// case .close: close()
/// }
/// ```
public struct PageSession: Sendable {
    /// Bytes of a photo in one part a page sends (base64 in a sealed frame of at most 16 KiB).
    public static let photoPartBytes = 8 * 1024
    /// Largest photo or clip a page may send: a photo goes scaled to 1,600 px (a few hundred KiB),
    /// a clip as it is, up to what any node takes.
    public static let maximumPhotoBytes = Picture.maxBytes

    /// What the shell does with one frame.
    public enum Step: Sendable, Equatable {
        case input(WebInput)
        /// Answer the page's ping.
        case pong(id: Int)
        case nothing
        /// The frame did not open, or was not a message: the connection ends.
        case close
    }

    /// The hub's number for this session: what answers to this page alone name.
    public let number: Int
    private var opener: WebChannel.Opener
    private var link = LinkDelay()
    private var upload = PhotoUpload()

    public init(_ opened: PageHandshake.Opened, number: Int) {
        self.number = number
        opener = opened.opener
    }

    /// A ping leaves at `now`: the id it carries.
    public mutating func ping(now: MonotonicTime) -> Int {
        link.ping(now: now)
    }

    /// The link's one-way delay as measured so far (``LinkDelay``).
    public var linkDelay: TimeSpan { link.oneWay }

    /// One frame from the page, arrived at `arrived` (`now` on the monotonic clock).
    public mutating func receive(_ frame: PageFrame, arrived: WallTime, now: MonotonicTime) -> Step {
        guard case .binary(let sealed) = frame, let plain = opener.open(sealed), let said = FromPage(json: plain) else {
            return .close
        }
        switch said {
        case .ping(let id): return .pong(id: id ?? 0)
        case .pong(let id):
            if let id { link.pong(id, now: now) }
            return .nothing
        case .line(let text?): return .input(.line(text, at: arrived))
        case .now(let label): return .input(.mark(label: label, at: arrived, linkDelay: link.oneWay))
        case .pause: return .input(.pause(at: arrived))
        case .resume: return .input(.resume(at: arrived))
        case .listen(let on): return .input(.listen(on ?? true, at: arrived))
        case .passphrase(let text): return .input(.passphrase(text))
        case .photoPart(let n, let data):
            upload.add(part: n, base64: data)
            return .nothing
        case .photo(let parts, let caption):
            let done = upload
            upload = PhotoUpload()
            if let refusal = done.refusal ?? (done.parts == parts && done.parts > 0 ? nil : .incomplete) {
                return .input(.photoRefused(refusal, session: number))
            }
            return .input(.photo(done.bytes, caption: caption ?? ""))
        case .getPicture(let root?): return .input(.picture(root: root, session: number))
        // Fields missing, a message of before the session, or a newer page's: ignored.
        case .line(nil), .getPicture(nil), .pair, .proof, .hello, .open, .unknown: return .nothing
        }
    }
}

/// A photo a page is sending, part by part (``PageSession/photoPartBytes`` each).
struct PhotoUpload: Sendable {
    var bytes: [UInt8] = []
    var parts = 0
    var refusal: PhotoRefusal?

    mutating func add(part n: Int?, base64: String?) {
        guard refusal == nil else { return }
        guard n == parts, let base64, let data = Data(base64Encoded: base64), data.count <= PageSession.photoPartBytes else {
            refusal = .brokenPart
            return
        }
        guard bytes.count + data.count <= PageSession.maximumPhotoBytes else {
            refusal = .tooLarge
            return
        }
        bytes += data
        parts += 1
    }
}
