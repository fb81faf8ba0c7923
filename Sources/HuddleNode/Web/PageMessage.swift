import Foundation
import HuddleCore

/// What a page says to the node (docs/WEB.md), decoded here and nowhere else: in the clear
/// before its session (`pair`, `proof`, `hello`), then sealed. A field the page left out is
/// `nil`: what it is missing is the reader's to say (a `pair` without a code is answered "that
/// is not a pairing request"). A type this node does not know (a newer page's) is ``unknown``,
/// and ignored.
enum FromPage: Equatable, Sendable, Decodable {
    case pair(code: String?, sid: String?, pub: String?, name: String?)
    case proof(tag: String?)
    case hello(device: String?)
    /// The session's first sealed message: the last line the page showed (0 for none).
    case open(since: Int?)
    case line(String?)
    /// A tap on Now (a label, or the moment offered).
    case now(label: String?)
    case pause
    case resume
    case listen(on: Bool?)
    /// The answer to `ask_passphrase`; `nil` gives up.
    case passphrase(String?)
    case ping(id: Int?)
    case pong(id: Int?)
    case photoPart(n: Int?, data: String?)
    case photo(parts: Int?, caption: String?)
    case getPicture(root: String?)
    case unknown(String)

    /// The most a clear (text) message may hold.
    static let maximumClearBytes = 4096

    /// The message in `bytes` (one WebSocket message's JSON), or `nil` if it is none.
    init?(json bytes: some Collection<UInt8>) {
        guard let message = try? JSONDecoder().decode(FromPage.self, from: Data(bytes)) else { return nil }
        self = message
    }

    private enum Field: String, CodingKey {
        case t, code, sid, pub, name, tag, device, since, text, label, on, id, n, parts, data, caption, root
    }

    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: Field.self)
        func text(_ field: Field) throws -> String? { try fields.decodeIfPresent(String.self, forKey: field) }
        func number(_ field: Field) throws -> Int? { try fields.decodeIfPresent(Int.self, forKey: field) }
        let type = try fields.decode(String.self, forKey: .t)
        switch type {
        case "pair": self = .pair(code: try text(.code), sid: try text(.sid), pub: try text(.pub), name: try text(.name))
        case "proof": self = .proof(tag: try text(.tag))
        case "hello": self = .hello(device: try text(.device))
        case "open": self = .open(since: try number(.since))
        case "line": self = .line(try text(.text))
        case "now": self = .now(label: try text(.label))
        case "pause": self = .pause
        case "resume": self = .resume
        case "listen": self = .listen(on: try fields.decodeIfPresent(Bool.self, forKey: .on))
        case "passphrase": self = .passphrase(try text(.text))
        case "ping": self = .ping(id: try number(.id))
        case "pong": self = .pong(id: try number(.id))
        case "photo_part": self = .photoPart(n: try number(.n), data: try text(.data))
        case "photo": self = .photo(parts: try number(.parts), caption: try text(.caption))
        case "get_picture": self = .getPicture(root: try text(.root))
        default: self = .unknown(type)
        }
    }
}

/// What the node says to a page (docs/WEB.md), encoded here and nowhere else: in the clear
/// while it pairs or greets the page, then sealed. A line is the object the node's JSON renderer
/// made for its own viewer, carried verbatim (so a line is worded once, by the node, for the
/// console and the page alike); the view is the console's status line taken apart
/// (``WebView``).
enum ToPage: Equatable, Sendable {
    /// CPace's answer to `pair`: the node's public share.
    case pair(pub: [UInt8])
    case paired(device: String, name: String, tag: [UInt8])
    case error(String)
    case unpaired
    case challenge(nonce: [UInt8])
    /// One line the node showed its viewer, with its number in the page's backlog.
    case line(seq: Int, json: String)
    case view(ConsoleView, nick: String, listening: Bool)
    case askPassphrase(room: String)
    case ping(id: Int)
    case pong(id: Int)
    case bye(reason: String)
    /// The answer to `get_picture` for a picture not on disk.
    case pictureMissing(root: String)

    /// The message as the page reads it: one JSON object.
    var json: String {
        switch self {
        case .pair(let pub): Self.object("pair", [("pub", .string(WebChannel.base64url(pub)))])
        case .paired(let device, let name, let tag):
            Self.object(
                "paired", [("device", .string(device)), ("name", .string(name)), ("tag", .string(WebChannel.base64url(tag)))])
        case .error(let message): Self.object("error", [("message", .string(message))])
        case .unpaired: Self.object("unpaired", [])
        case .challenge(let nonce): Self.object("challenge", [("nonce", .string(WebChannel.base64url(nonce)))])
        // The renderer's object goes in as it is: JSONLine has no raw member.
        case .line(let seq, let json): "{\"t\":\"line\",\"seq\":\(seq),\"line\":\(json)}"
        case .view(let view, let nick, let listening): WebView.json(view, nick: nick, listening: listening)
        case .askPassphrase(let room): Self.object("ask_passphrase", [("room", .string(room))])
        case .ping(let id): Self.object("ping", [("id", .int(Int64(id)))])
        case .pong(let id): Self.object("pong", [("id", .int(Int64(id)))])
        case .bye(let reason): Self.object("bye", [("reason", .string(reason))])
        case .pictureMissing(let root): Self.object("picture", [("root", .string(root)), ("missing", .bool(true))])
        }
    }

    private static func object(_ type: String, _ fields: [(String, JSONLine)]) -> String {
        JSONLine.object([("t", .string(type))] + fields).render()
    }
}
