/// The rules a nick keeps, checked where a person gives one (`huddle run --name`): the same in
/// every place a nick is typed, so a nick that starts a node can always be named again, in
/// `/msg NICK` or `huddle send --to NICK`.
///
/// ```swift
/// NickName.problem(with: "bob")        // nil
/// NickName.problem(with: "big al")     // "a nick cannot contain spaces (/msg NICK takes one word)"
/// ```
public enum NickName {
    /// Why `nick` cannot be used, or `nil` if it can.
    public static func problem(with nick: String) -> String? {
        if nick.isEmpty || nick.allSatisfy(\.isWhitespace) {
            "a nick cannot be blank"
        } else if nick.utf8.count > WireLimits.maxNickBytes {
            "a nick has at most \(WireLimits.maxNickBytes) bytes"
        } else if nick.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) {
            "a nick cannot contain control characters"
        } else if nick.contains(where: \.isWhitespace) {
            "a nick cannot contain spaces (/msg NICK takes one word)"
        } else if nick.contains("/") {
            "a nick cannot contain '/'"
        } else if nick.contains("#") {
            "a nick cannot contain '#' (nick#id is how two nodes with one nick are told apart)"
        } else {
            nil
        }
    }
}
