/// Applying what the log delivered: each event's effect on the room (people, calibration,
/// score, proofs), what it shows now, and what waits in the hold-back schedule until the
/// reader's stream reaches its moment.
extension RoomSession {

    mutating func apply(_ delivered: [Event], now: WallTime, announce all: Bool) -> [RoomOutput] {
        var outputs: [RoomOutput] = []
        var recalibrate = false
        for event in delivered {
            let from = member(event.origin)
            // What a late joiner catches up on is not news: no line for each join and mark.
            let earlier = isEarlier(event)
            let announce = all && !earlier
            switch event.body {
            case .chat, .picture, .score:
                outputs += present(schedule.admit(event, now: now))
            case .teams(let home, let guest):
                // The latest naming wins, by its sender's time, then origin and seq: the same on
                // every node, whatever the arrival order.
                if teams.map({ (event.createdAt, event.origin, event.seq) > ($0.at, $0.by, $0.seq) }) ?? true {
                    teams = (home, guest, event.createdAt, event.origin, event.seq)
                    scoreboard?.teams = (home, guest)
                }
                if announce { outputs.append(.teamsNamed(home: home, guest: guest, by: from)) }
            case .join(let nick):
                if event.origin == reader {
                    calibrating.pendingMarks.readerJoined()
                    readerJoinSeq = event.seq
                    readerJoinedAt = event.createdAt
                }
                people.joined(event.origin, as: nick)
                calibrating.add(event)
                recalibrate = true
                if announce { outputs.append(.joined(member(event.origin))) }
            case .leave:
                people.left(event.origin)
                calibrating.add(event)
                recalibrate = true
                if announce { outputs.append(.left(from)) }
            case .calibrationEvent(let raw):
                guard let label = CalibrationLabel(raw) else { continue }
                everyLabel.insert(label)
                guard event.origin == reader || SpoilerFreeMoment.contains(label) else {
                    // "safety" is the play: it reaches the reader at its moment, like a line.
                    outputs += withhold(event, now: now, announce: all)
                    continue
                }
                // The proposer is not offered her own moment: she marks it when she means to.
                calibrating.pendingMarks.proposed(
                    label, madeAt: event.createdAt, at: now, byReader: event.origin == reader, earlier: earlier)
                if announce, !ignoredLabels.contains(label) {
                    outputs.append(.calibrationEvent(label: label.normalized, by: from))
                }
            case .mark(let raw):
                if let label = CalibrationLabel(raw) {
                    everyLabel.insert(label)
                    if event.origin == reader {
                        calibrating.pendingMarks.readerMarked(label, at: now)
                        if announce { outputs.append(.mark(label: label.normalized, by: from, at: event.createdAt)) }
                    } else if SpoilerFreeMoment.contains(label) {
                        calibrating.pendingMarks.proposed(label, madeAt: event.createdAt, at: now, earlier: earlier)
                        if announce { outputs.append(.mark(label: label.normalized, by: from, at: event.createdAt)) }
                    } else {
                        outputs += withhold(event, now: now, announce: all)
                    }
                }
                calibrating.add(event)
                recalibrate = true
            case .unmark(let raw):
                if let label = CalibrationLabel(raw) {
                    if event.origin == reader { calibrating.pendingMarks.readerUnmarked(label) }
                    // A name the reader was not told yet stays untold.
                    if announce, event.origin == reader || mayName(label) {
                        outputs.append(.unmarked(label: label.normalized, by: from))
                    }
                }
                calibrating.add(event)
                recalibrate = true
            case .delayNudge, .heard:
                calibrating.add(event)
                recalibrate = true
            case .voided:
                // Its stretch is holes in the log already; nothing to show.
                continue
            case .sealed:
                // Never here: ``opened(_:)`` comes first, and a body never opens to another seal.
                continue
            }
        }
        if recalibrate { outputs += self.recalibrate(now: now, announce: all) }
        outputs += unplacedNews()
        // Messages and scores from before the reader joined come as one block (see ``gathered(_:)``).
        return all ? earlierGathered(outputs) : outputs
    }

    /// Holds a proposal or a mark whose name could spoil (``SpoilerFreeMoment``) until its
    /// moment reaches the reader, as a line is held (placed with its writer: at the reader's
    /// moment; else by the shield). A reader not placed with its writer is cued once, in words
    /// that name nothing, with what would place it (``RoomOutput/momentCue(by:)``). `announce`:
    /// what comes due at once is said (not while a restart loads the room).
    mutating func withhold(_ event: Event, now: WallTime, announce: Bool) -> [RoomOutput] {
        var outputs = present(schedule.admit(event, now: now), announce: announce)
        if announce, schedule.isPending(event.id), !calibration.areConnected(event.origin, reader),
            memberIDs.contains(reader), !isEarlier(event), cued.insert(event.origin).inserted
        {
            outputs.append(.momentCue(by: member(event.origin)))
        }
        return outputs
    }

    /// Each shown message or score written before the reader joined as an ``RoomOutput/earlier(_:)``
    /// of its own, for ``gathered(_:)`` to put into one block.
    func earlierGathered(_ outputs: [RoomOutput]) -> [RoomOutput] {
        outputs.map { output in
            switch output {
            case .message(let message) where isEarlier(message.event): .earlier([.message(message)])
            case .score(let score) where isEarlier(score.event): .earlier([.score(score)])
            default: output
            }
        }
    }

    /// Holds this room's messages back by `calibration`, another room's offsets, from now on: a
    /// direct message between two people is held back by the offsets of a room they share.
    /// Messages already held are re-timed; marks in this room no longer count.
    public mutating func follow(_ calibration: Calibration, now: WallTime) -> [RoomOutput] {
        guard calibrating.follow(calibration) else { return [] }
        return recalibrate(now: now, announce: false)
    }

    mutating func recalibrate(now: WallTime, announce: Bool) -> [RoomOutput] {
        guard let previous = calibrating.resolve() else { return [] }
        let updated = calibrating.current
        var outputs: [RoomOutput] = []
        if announce {
            outputs.append(.offsetsChanged(calibrating.news(in: offsetReport)))
            // A mark set aside is said once, when it is; someone else's by a name the reader was
            // told, or not at all (the reader can do nothing about it, and the name could spoil).
            for suspect in updated.suspects where !previous.suspects.contains(suspect) {
                guard suspect.node == reader || CalibrationLabel(suspect.label).map(mayName) == true else { continue }
                outputs.append(.markSetAside(member(suspect.node), label: suspect.label))
            }
        } else {
            calibrating.known(offsetReport)
        }
        cued = cued.filter { !updated.areConnected($0, reader) }
        // A step in someone's lag is said in words, once, when it is found.
        for (node, placement) in updated.placements.sorted(by: { $0.key < $1.key }) where announce {
            guard let before = previous.placement(of: node), placement.steps > before.steps,
                placement.reference == before.reference
            else { continue }
            outputs.append(.lagStepped(
                member(node), change: placement.offset - before.offset, offset: placement.offset,
                heard: placement.sound?.stepHeard ?? false))
        }
        let shieldBefore = schedule.shield
        outputs += present(schedule.recalibrate(updated, now: now), announce: announce)
        // The shield grew to a spread the room just showed: said where it holds lines back.
        if announce, let shield = schedule.shield, let spread = schedule.widestSpread, shield > shieldBefore ?? .max,
            !updated.isCalibrated(reader), memberIDs.contains(reader)
        {
            outputs.append(.shieldGrew(to: shield, ahead: member(spread.ahead), behind: member(spread.behind), apart: spread.apart))
        }
        return outputs
    }

    /// ``RoomOutput/unplaced(shield:)`` once each time the reader, in the room, is left with no
    /// offset (it joined, or took back the mark that placed it).
    mutating func unplacedNews() -> [RoomOutput] {
        calibrating.unplacedIsNews(readerIsMember: memberIDs.contains(reader)) ? [.unplaced(shield: schedule.shield)] : []
    }

    /// After the log quarantined an origin: its held-back messages and calibration events from
    /// the proof's seq on are dropped too, and the reader is told.
    mutating func contain(_ proof: Equivocation, now: WallTime, announce: Bool) -> [RoomOutput] {
        let isDropped = { (event: Event) in event.origin == proof.origin && event.seq >= proof.seq }
        schedule.withdraw(where: isDropped)
        calibrating.drop(where: isDropped)
        var outputs: [RoomOutput] = announce ? [.equivocated(member(proof.origin), seq: proof.seq)] : []
        outputs += recalibrate(now: now, announce: announce)
        outputs += unplacedNews()
        return outputs
    }

    /// What released messages, scores, proposals and marks show, in release order; a score also
    /// moves the scoreboard (see ``standScore(_:)``), and a proposal or a mark is offered to
    /// mark from its release on, as if it had been made then. `announce`: proposals and marks are
    /// said (not while a restart loads the room, nor those written before the reader joined).
    mutating func present(_ releases: [HoldBackSchedule.Release], announce: Bool = true) -> [RoomOutput] {
        var outputs: [RoomOutput] = []
        for release in releases {
            let event = release.event
            switch event.body {
            case .score(let home, let guest):
                let isCorrection = !standScore(event)
                outputs.append(.score(ShownScore(
                    event: event, from: member(event.origin), home: home, guest: guest,
                    shownAt: release.shownAt, held: release.held, waited: release.waited,
                    gameTime: calibration.gameTime(of: event), isCorrection: isCorrection, homeName: teams?.home,
                    guestName: teams?.guest)))
            case .calibrationEvent(let raw), .mark(let raw):
                guard let label = CalibrationLabel(raw) else { continue }
                let earlier = isEarlier(event)
                calibrating.pendingMarks.proposed(label, madeAt: release.releaseAt, at: release.shownAt, earlier: earlier)
                guard announce, !earlier else { continue }
                if case .mark = event.body {
                    outputs.append(.mark(label: label.normalized, by: member(event.origin), at: event.createdAt))
                } else if !ignoredLabels.contains(label), !readerHasMarked(label) {
                    outputs.append(.calibrationEvent(label: label.normalized, by: member(event.origin)))
                }
            default:
                outputs.append(shown(release))
            }
        }
        return outputs
    }

    /// Makes a shown score the standing one unless a score of a later game moment stands
    /// already (then it is a correction). Returns whether it stands.
    mutating func standScore(_ event: Event) -> Bool {
        guard case .score(let home, let guest) = event.body else { return false }
        let moment = calibration.gameTime(of: event) ?? event.createdAt
        if let standing = scoreboard, standing.moment > moment { return false }
        scoreboard = Scoreboard(
            home: home, guest: guest, by: member(event.origin), moment: moment,
            teams: teams.map { ($0.home, $0.guest) })
        return true
    }

    func shown(_ release: HoldBackSchedule.Release) -> RoomOutput {
        guard let text = release.event.body.messageText else { preconditionFailure("only messages and scores are held back") }
        return .message(ShownMessage(
            event: release.event, from: member(release.event.origin), text: text, shownAt: release.shownAt,
            held: release.held, waited: release.waited, gameTime: calibration.gameTime(of: release.event)))
    }
}
