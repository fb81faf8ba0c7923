import Foundation
import HuddleCore

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

extension ToPage {
    /// What a ``PageHandshake`` says in the clear, in the page's words.
    init(_ reply: PageHandshake.Reply) {
        switch reply {
        case .pair(let share): self = .pair(pub: share)
        case .paired(let device, let name, let tag): self = .paired(device: device, name: name, tag: tag)
        case .unpaired: self = .unpaired
        case .challenge(let nonce): self = .challenge(nonce: nonce)
        case .refused(.notAPairingRequest): self = .error("that is not a pairing request")
        case .refused(.wrongOrExpiredCode): self = .error("wrong or expired code")
        case .refused(.tooManyAttempts(let retryAfter)):
            self = .error("too many attempts: wait \(max(1, retryAfter.milliseconds / 1000)) s")
        case .refused(.devicesFull):
            self = .error("this node has \(WebPairing.maximumDevices) devices paired: unpair one first (/web revoke NAME)")
        }
    }
}
