public import HuddleCore

/// What a client asks a running node over its control socket (one JSON object per line).
public enum ControlRequest: Codable, Sendable, Equatable {
    case status
    /// Send a chat message to a room the node is in.
    case send(room: String, text: String)
    /// Send a direct message to one peer, by nick (or `nick#idprefix`).
    case sendDirect(to: String, text: String)
    /// Run a console command (`/now kickoff`, `/event q2`, `/delay +1`, `/msg bob hi`) in a room
    /// the node is in, as if typed at its console there; the answer is what the console would
    /// say, rendered as JSON lines when `json`.
    case command(room: String, line: String, json: Bool)
}

/// A running node's answer to a ``ControlRequest`` (one JSON object per line).
public enum ControlResponse: Codable, Sendable, Equatable {
    case status(NodeStatus)
    /// A message was made: its id (`ORIGIN#SEQ`), the room as people name it, and the nicks of
    /// the live peers it was pushed to at once.
    case sent(id: String, room: String? = nil, pushedTo: [String]? = nil)
    /// What a console command said, a line each (text, or JSON objects).
    case said([String])
    case error(String)
}
