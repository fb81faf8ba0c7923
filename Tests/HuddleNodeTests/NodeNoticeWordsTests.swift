import HuddleCore
import Testing

@testable import HuddleCore
@testable import HuddleNode

/// The machine says what happened; these are the words a viewer reads for it, in the console
/// and in JSON.
@Suite struct NodeNoticeWordsTests {
    @Test func aDelayNudgeSaysWhoIsAheadNowOrWhenItWillCount() {
        #expect(NodeNotice.delayed(by: .seconds(2), room: "superbowl", others: nil).words
            == "delay +2.0 s in superbowl: it counts once you are placed (/now LABEL at a moment others mark, or /listen)")
        #expect(NodeNotice.delayed(by: .milliseconds(-500), room: "superbowl", others: []).words
            == "delay -500 ms in superbowl: nobody else is placed yet")
        let others = [Standing(name: "alice", behind: .milliseconds(-2_500)), Standing(name: "carol", behind: .seconds(1))]
        #expect(NodeNotice.delayed(by: .milliseconds(-500), room: "superbowl", others: others).words
            == "delay -500 ms in superbowl: now alice 2.5 s ahead of you, carol 1.0 s behind you")
    }

    @Test func pauseAndResumeSayForHowLongAndWhatMoved() {
        #expect(NodeNotice.paused(alreadyFor: nil).words
            == "paused: nothing new is shown until you /resume (Ctrl-Q on the console)")
        #expect(NodeNotice.paused(alreadyFor: .seconds(75)).words
            == "already paused, for 1:15; /resume when your stream plays")
        #expect(NodeNotice.resumed(after: .seconds(5), rooms: ["superbowl", "nfl"]).words
            == "resumed after 0:05: your offset grew by 5.0 s in superbowl, nfl")
        #expect(NodeNotice.resumed(after: .seconds(5), rooms: []).words
            == "resumed after 0:05: not calibrated anywhere, so no offset changed")
    }

    @Test func lockedRoomsAreNamedWhenAllNamesAreKnown() {
        #expect(NodeNotice.locked(names: ["poker", "family"], count: 2).words
            == "this run has no passphrase for poker, family: /private ROOM opens it")
        #expect(NodeNotice.locked(names: ["poker"], count: 3).words
            == "this run has no passphrase for 3 private rooms: /private ROOM opens it")
    }

    @Test func historyIsFramedAndAnEmptyRoomSaysSo() {
        #expect(NodeNotice.historyStart(count: 0, room: "nfl").words == "no messages in nfl yet")
        #expect(NodeNotice.historyStart(count: 1, room: "nfl").words == "history: the last message in nfl, in game-time order")
        #expect(NodeNotice.historyStart(count: 5, room: "nfl").words == "history: the last 5 messages in nfl, in game-time order")
    }

    @Test func roomsListTheReadersAndThoseSeen() {
        let rooms = RoomsGlance(
            joined: [.init(label: "superbowl", current: true), .init(label: "poker (private)", current: false)],
            seen: [.init(label: "nfl", nicks: ["bob", "carol"])])
        #expect(NodeNotice.rooms(rooms).words == """
            your rooms: superbowl (current), poker (private)
              nfl: bob, carol
            """)
        #expect(NodeNotice.rooms(RoomsGlance(joined: [], seen: [])).words
            == "your rooms: none\nno rooms seen on the network yet")
    }

    /// What happened to the node is starred; an answer to a command is plain; JSON names the kind.
    @Test func happeningsAreStarredAnswersPlainAndJSONSaysTheKind() throws {
        let text = HumanRenderer(colors: false)
        #expect(text.notice(NodeNotice.talkingIn(room: "nfl")) == "* now talking in nfl")
        #expect(text.notice(NodeNotice.historyEnd) == "end of history")
        #expect(text.error(CommandProblem.noRoom.words) == "! you are not in a room: /join ROOM first")
        let json = JSONRenderer()
        #expect(json.notice(NodeNotice.route(nick: "bob", through: "carol"))
            == #"{"type":"info","kind":"route","message":"bob is reachable only through carol"}"#)
    }

    @Test func problemsSayWhatToDoInstead() {
        #expect(CommandProblem.privateNeedsPassphrase(room: "poker").words
            == "poker is a private room on this node: start with --passphrase-file FILE, or type /private poker")
        #expect(CommandProblem.noMomentWaiting.words == "no moment is waiting for your mark; /now LABEL marks a new one")
        #expect(CommandProblem.direct(.unknown("zed")).words == "nobody called zed is here")
    }

    /// What a face may not run is decided by the machine and worded here, for the console, the
    /// control socket's reply and the page alike.
    @Test func aCommandAFaceMayNotRunSaysWhereItRuns() {
        #expect(CommandProblem.notFrom(.control, command: "/doctor").words.hasPrefix("huddle doctor --name NICK"))
        #expect(CommandProblem.notFrom(.page, command: "/quit").words == "/quit stops the node from its console, not from a phone")
        #expect(SendRefusal.consoleOnly(command: "/web", face: .control).words == "/web shows its pairing code at the node's console")
        #expect(SendRefusal.notInRoom("nfl").words == "this node is not in room nfl")
        #expect(PeerLookupError.ambiguous("bob", ids: ["0123456789ab", "fedcba987654"]).words
            == "2 peers are called bob: say which, e.g. /msg bob#01234567 (ids 0123456789ab, fedcba987654)")
    }
}
