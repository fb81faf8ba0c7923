import HuddleCore

/// The words for what the machine refused, as the types it said it with (`SendRefusal`,
/// `PeerLookupError`, a face's ``CommandProblem/notFrom(_:command:)``): worded here, once, for
/// every face.
extension SendRefusal {
    var words: String {
        switch self {
        case .notInRoom(let name): "this node is not in room \(name)"
        case .empty: "nothing to send"
        case .refused: "the message was refused (too long or containing control characters)"
        case .invalid(let why): why
        case .consoleOnly(let command, let face): face.refusalWords(for: command)
        }
    }
}

extension PeerLookupError {
    var words: String {
        switch self {
        case .unknown(let target): "nobody called \(target) is here"
        case .noKey(let nick): "\(nick) has not sent a key for direct messages yet (is it an older Huddle?)"
        case .notSent: "the message was refused (too long or containing control characters)"
        case .notTheOneYouKnow(let nick, let id, let known):
            "the \(nick) here (\(id)) is not the \(nick) you met first (\(known)); to write to this one anyway: "
                + "/msg \(nick)#\(id.prefix(8))"
        case .ambiguous(let nick, let ids):
            "\(ids.count) peers are called \(nick): say which, e.g. /msg \(nick)#\(ids[0].prefix(8)) "
                + "(ids \(ids.joined(separator: ", ")))"
        }
    }
}

extension Face {
    /// Why this face may not run `command`, in words (``NodeMachine/refusal(of:from:)`` decides).
    func refusalWords(for command: String) -> String {
        switch (command, self) {
        case ("/quit", .page): "/quit stops the node from its console, not from a phone"
        case ("/quit", _): "/quit stops the node from its console; stop a service with SIGTERM"
        case ("/web", .page): "phones are paired and unpaired at the node's console (/web there), not from a phone"
        case ("/web", _): "/web shows its pairing code at the node's console"
        case ("/private", _): "/private asks for the passphrase at the node's console"
        case ("/photo", .page): "a phone sends a photo with its camera button, not a file on the node's machine"
        case ("/open", .page): "tap a photo to see it full screen"
        case ("/open", _): "/open opens a photo on the node's screen, from its console"
        case ("/doctor", _): "huddle doctor --name NICK runs the same checks from a command line"
        default: "\(command) runs at the node's console only"
        }
    }
}

extension PhotoRefusal {
    /// Why a page's photo was not sent, for the page.
    var words: String {
        switch self {
        case .brokenPart: "a photo's part arrived out of order or broken: send it again"
        case .tooLarge: "a photo from a phone is at most \(PageSession.maximumPhotoBytes / 1_048_576) MiB: the page scales it down first"
        case .incomplete: "a photo arrived incomplete: send it again"
        }
    }
}
