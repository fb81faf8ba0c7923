import Foundation

/// What a page says to the node (docs/WEB.md), decoded here and nowhere else: in the clear
/// before its session (`pair`, `proof`, `hello`), then sealed. A field the page left out is
/// `nil`: what it is missing is the reader's to say (a `pair` without a code is answered "that
/// is not a pairing request"). A type this node does not know (a newer page's) is ``unknown``,
/// and ignored.
public enum FromPage: Equatable, Sendable, Decodable {
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
    public static let maximumClearBytes = 4096

    /// The message in `bytes` (one WebSocket message's JSON), or `nil` if it is none.
    public init?(json bytes: some Collection<UInt8>) {
        guard let message = try? JSONDecoder().decode(FromPage.self, from: Data(bytes)) else { return nil }
        self = message
    }

    private enum Field: String, CodingKey {
        case t, code, sid, pub, name, tag, device, since, text, label, on, id, n, parts, data, caption, root
    }

    public init(from decoder: any Decoder) throws {
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
