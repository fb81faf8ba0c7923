import HuddleNode

/// A command failed for a reason the user can read; ArgumentParser prints it as
/// `Error: <message>` and exits with status 1.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String

    init(_ message: String) {
        description = message
    }

    init(unexpected response: ControlResponse) {
        description = "the node gave an unexpected answer: \(response)"
    }
}
