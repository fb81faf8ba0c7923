/// The rules a room name follows: it travels in every event, in probes and in the mDNS TXT
/// record (where rooms are separated by commas), and people type it after `/join`.
///
/// ```swift
/// RoomName.problem(with: "superbowl")   // nil
/// RoomName.problem(with: "super bowl")  // "a room name cannot contain spaces"
/// ```
public enum RoomName {
    /// Why `name` cannot name a room, in words for the user; `nil` if it can.
    public static func problem(with name: String) -> String? {
        if name.isEmpty {
            "a room name cannot be blank"
        } else if name.utf8.count > WireLimits.maxRoomBytes {
            "a room name has at most \(WireLimits.maxRoomBytes) bytes"
        } else if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) {
            "a room name cannot contain control characters"
        } else if name.contains(where: \.isWhitespace) {
            "a room name cannot contain spaces"
        } else if name.contains(",") {
            "a room name cannot contain commas (mDNS lists rooms separated by commas)"
        } else if name.hasPrefix("@") {
            "a room name cannot start with @ (direct messages show as @nick: /msg NICK TEXT)"
        } else if RoomKey.isPrivate(name) {
            "a room name cannot start with \(RoomKey.idPrefix) (private rooms travel under \(RoomKey.idPrefix) and a code)"
        } else {
            nil
        }
    }
}
