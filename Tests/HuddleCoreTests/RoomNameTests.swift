import Testing

@testable import HuddleCore

@Suite(.offThePool) struct RoomNameTests {
    @Test(arguments: ["superbowl", "worldcup-2026", "Élysée", String(repeating: "r", count: WireLimits.maxRoomBytes)])
    func acceptsNamesThatFitEverywhere(name: String) {
        #expect(RoomName.problem(with: name) == nil)
    }

    @Test(arguments: [
        ("", "a room name cannot be blank"),
        ("super bowl", "a room name cannot contain spaces"),
        ("a,b", "a room name cannot contain commas (mDNS lists rooms separated by commas)"),
        ("tab\there", "a room name cannot contain control characters"),
        (String(repeating: "r", count: WireLimits.maxRoomBytes + 1), "a room name has at most 64 bytes"),
    ])
    func refusesWithAReason(name: String, reason: String) {
        #expect(RoomName.problem(with: name) == reason)
    }
}
