import HuddleCore

/// The viewer paused its stream (DVR, a snack) and plays it again: `/pause` and `/resume`, or
/// Ctrl-S and Ctrl-Q on the interactive console, timed at the keypress like a mark.
///
/// While paused, no message is shown: the viewer's stream is not reaching anyone's moments. On
/// resume the paused span becomes this viewer's delay nudge in every room where it is calibrated
/// (gossiped like `/delay`), so held messages are re-timed by it here, and peers ahead of this
/// stream hold their messages for it that much longer. A room where the viewer is not calibrated
/// gets no nudge: its marks, made later, will measure the lag as it is.
extension Node {
    func pause(at: Int64) {
        if let pausedAt {
            return showNotice("already paused, for \(HumanFormat.elapsed(milliseconds: at - pausedAt)); /resume when your stream plays")
        }
        pausedAt = at
        for room in Array(rooms.keys) { rooms[room]?.pause() }
        showNotice("paused: nothing new is shown until you /resume (Ctrl-Q on the console)")
        refreshConsole()
    }

    func resume(at: Int64) {
        guard let pausedAt else { return showNotice("not paused") }
        let span = max(0, at - pausedAt)
        self.pausedAt = nil
        var nudged: [String] = []
        for room in joined where directs[room] == nil && rooms[room]?.calibration.isCalibrated(identity.id) == true {
            if originate(.delayNudge(milliseconds: span), in: room, at: at) != nil { nudged.append(name(of: room)) }
        }
        for room in Array(rooms.keys) {
            let outputs = withRoom(room) { $0.resume(now: clock.wallMillis()) }
            show(outputs, room: room)
        }
        let added = nudged.isEmpty
            ? "not calibrated anywhere, so no offset changed"
            : "your offset grew by \(HumanFormat.duration(milliseconds: span)) in \(nudged.joined(separator: ", "))"
        showNotice("resumed after \(HumanFormat.elapsed(milliseconds: span)): \(added)")
        refreshConsole()
    }
}
