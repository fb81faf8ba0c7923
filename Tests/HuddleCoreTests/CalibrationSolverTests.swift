import Testing

@testable import HuddleCore

@Suite(.offThePool) struct CalibrationSolverTests {
    let n1 = NodeID.fixture(1)
    let n2 = NodeID.fixture(2)
    let n3 = NodeID.fixture(3)
    let n4 = NodeID.fixture(4)

    func placed(_ reference: NodeID, _ offsets: [NodeID: TimeSpan]) -> Calibration {
        Calibration(placements: offsets.mapValues { Calibration.Placement(reference: reference, offset: $0) })
    }

    // MARK: The design's worked example

    @Test func workedExampleStepByStep() {
        var room = CalibrationRoomScript()
        room.join(n1)
        room.join(n2)
        room.join(n3)
        #expect(room.calibration == .none)

        room.mark(n1, "A", at: .epoch + .seconds(2))
        #expect(room.calibration == .none, "a lone mark calibrates nobody")

        room.mark(n2, "A", at: .epoch + .seconds(4))
        #expect(room.calibration == placed(n1, [n1: .zero, n2: .seconds(2)]))

        room.mark(n3, "B", at: .epoch + .seconds(6))
        #expect(room.calibration == placed(n1, [n1: .zero, n2: .seconds(2)]), "node 3 shares no label yet")
        #expect(!room.calibration.isCalibrated(n3))

        room.mark(n2, "B", at: .epoch + .seconds(10))
        let calibration = room.calibration
        #expect(calibration == placed(n1, [n1: .zero, n2: .seconds(2), n3: .seconds(-2)]))

        #expect(calibration.holdBack(from: n3, to: n1) == .seconds(2))
        #expect(calibration.holdBack(from: n3, to: n2) == .seconds(4))
        #expect(calibration.holdBack(from: n1, to: n3) == .zero)
        #expect(calibration.lag(of: n3, behind: n1) == .seconds(-2))
        #expect(calibration.lag(of: n2, behind: n3) == .seconds(4))
        #expect(calibration.groups == [Calibration.Group(reference: n1, members: [n1, n2, n3])])
    }

    @Test func referenceIsTheFirstMarkEvenWhenItCameThroughAnotherLabel() {
        var room = CalibrationRoomScript()
        room.mark(n3, "B", at: .epoch + .seconds(1))
        room.mark(n2, "B", at: .epoch + .seconds(3))
        room.mark(n2, "A", at: .epoch + .seconds(9))
        room.mark(n1, "A", at: .epoch + .seconds(8))
        #expect(room.calibration == placed(n3, [n3: .zero, n2: .seconds(2), n1: .seconds(1)]))
    }

    @Test func simultaneousFirstMarksBreakTheTieBySmallerNodeID() {
        var room = CalibrationRoomScript()
        room.mark(n2, "A", at: .epoch + .seconds(5))
        room.mark(n1, "A", at: .epoch + .seconds(5))
        room.mark(n3, "A", at: .epoch + .milliseconds(5_700))
        #expect(room.calibration == placed(n1, [n1: .zero, n2: .zero, n3: .milliseconds(700)]))
    }

    // MARK: Groups and membership

    @Test func separateGroupsHaveTheirOwnReferenceAndAreNotConnected() {
        var room = CalibrationRoomScript()
        room.mark(n1, "A", at: .epoch + .seconds(1))
        room.mark(n2, "A", at: .epoch + .seconds(4))
        room.mark(n4, "B", at: .epoch + .milliseconds(500))
        room.mark(n3, "B", at: .epoch + .milliseconds(700))
        let calibration = room.calibration
        #expect(calibration.placements == [
            n1: .init(reference: n1, offset: .zero), n2: .init(reference: n1, offset: .seconds(3)),
            n4: .init(reference: n4, offset: .zero), n3: .init(reference: n4, offset: .milliseconds(200)),
        ])
        #expect(calibration.areConnected(n1, n2))
        #expect(calibration.areConnected(n3, n4))
        #expect(!calibration.areConnected(n1, n3))
        #expect(!calibration.areConnected(n2, n4))
        #expect(calibration.holdBack(from: n1, to: n3) == nil)
        #expect(calibration.holdBack(from: n3, to: n2) == nil)
        #expect(calibration.groups == [
            Calibration.Group(reference: n1, members: [n1, n2]),
            Calibration.Group(reference: n4, members: [n3, n4]),
        ])
    }

    @Test func oneNodeWithManyLabelsCalibratesNobody() {
        var room = CalibrationRoomScript()
        room.mark(n1, "A", at: .epoch + .seconds(1))
        room.mark(n1, "B", at: .epoch + .seconds(2))
        room.mark(n1, "C", at: .epoch + .seconds(3))
        room.mark(n2, "D", at: .epoch + .seconds(3))
        #expect(room.calibration == .none)
        #expect(!room.calibration.areConnected(n1, n1))
    }

    @Test func rejoiningResetsTheNode() {
        var room = CalibrationRoomScript()
        room.join(n1)
        room.join(n2)
        room.mark(n1, "A", at: .epoch + .seconds(1))
        room.mark(n2, "A", at: .epoch + .seconds(3))
        #expect(room.calibration == placed(n1, [n1: .zero, n2: .seconds(2)]))

        room.leave(n2)
        #expect(room.calibration == .none, "a node that left counts for nothing; node 1 is alone again")

        room.join(n2)
        #expect(room.calibration == .none, "the old mark no longer counts after re-joining")

        room.mark(n2, "A", at: .epoch + .milliseconds(1_500))
        #expect(room.calibration == placed(n1, [n1: .zero, n2: .milliseconds(500)]))
    }

    @Test func latestMembershipEventDecidesEvenWithoutAnyJoin() {
        var room = CalibrationRoomScript()
        room.mark(n1, "A", at: .epoch + .seconds(1))  // no join at all: counts from seq 1
        room.mark(n2, "A", at: .epoch + .milliseconds(1_250))
        room.mark(n3, "A", at: .epoch + .milliseconds(1_500))
        #expect(room.calibration == placed(n1, [n1: .zero, n2: .milliseconds(250), n3: .milliseconds(500)]))
        room.leave(n1)  // the reference leaves: the group re-forms around the next first mark
        #expect(room.calibration == placed(n2, [n2: .zero, n3: .milliseconds(250)]))
    }

    @Test func onlyTheLatestMarkOfALabelCounts() {
        var room = CalibrationRoomScript()
        room.mark(n1, "A", at: .epoch + .seconds(1))
        room.mark(n2, "A", at: .epoch + .seconds(9))
        room.mark(n2, "a ", at: .epoch + .seconds(4))  // the same label, marked again (earlier clock, later seq)
        #expect(room.calibration == placed(n1, [n1: .zero, n2: .seconds(3)]))
    }

    // MARK: Labels

    @Test(arguments: [
        ("  KickOff ", "kickoff"), ("kickoff", "kickoff"), ("\tFirst Pitch\n", "first pitch"),
        ("\u{00A0}\u{2003}HALF time\u{3000}", "half time"), ("ÉCLAIR", "éclair"), ("   ", ""), ("", ""),
    ])
    func labelNormalisation(raw: String, normalized: String) {
        #expect(CalibrationLabel.normalize(raw) == normalized)
        #expect(CalibrationLabel(raw)?.normalized == (normalized.isEmpty ? nil : normalized))
    }

    @Test func differentlyWrittenLabelsAreTheSameEvent() {
        var room = CalibrationRoomScript()
        room.mark(n1, "  KickOff ", at: .epoch + .seconds(1))
        room.mark(n2, "kickoff", at: .epoch + .milliseconds(2_500))
        room.mark(n3, "   ", at: .epoch + .milliseconds(2_500))  // an empty label is no mark
        #expect(room.calibration == placed(n1, [n1: .zero, n2: .milliseconds(1_500)]))
    }

    // MARK: Least squares

    @Test func redundantMarksAreAveraged() {
        var room = CalibrationRoomScript()
        room.mark(n1, "A", at: .epoch)
        room.mark(n2, "A", at: .epoch + .seconds(1))
        room.mark(n1, "B", at: .epoch + .seconds(60))
        room.mark(n2, "B", at: .epoch + .milliseconds(61_201))
        // (1 000 + 1 201) / 2 = 1 100.5, rounded half away from zero.
        #expect(room.calibration == placed(n1, [n1: .zero, n2: .milliseconds(1_101)]))
    }

    @Test func cycleOfThreeNodesSharesTheMisfit() {
        // 1–2 on A (Δ 1 000), 2–3 on B (Δ 1 000), 1–3 on C (Δ 2 300): a 300 ms misfit around the cycle.
        var room = CalibrationRoomScript()
        room.mark(n1, "A", at: .epoch)
        room.mark(n2, "A", at: .epoch + .seconds(1))
        room.mark(n2, "B", at: .epoch + .seconds(10))
        room.mark(n3, "B", at: .epoch + .seconds(11))
        room.mark(n1, "C", at: .epoch + .seconds(20))
        room.mark(n3, "C", at: .epoch + .milliseconds(22_300))
        // Each residual takes a third of the misfit: o2 = 1 100, o3 = 2 200.
        #expect(room.calibration == placed(n1, [n1: .zero, n2: .milliseconds(1_100), n3: .milliseconds(2_200)]))
    }

    /// Four nodes with known offsets mark twelve shared moments, each press off by N(0, 200 ms) of
    /// reaction noise. The least-squares offsets must beat taking only the latest shared moment.
    @Test(arguments: [UInt64(1), 2, 3, 4])
    func leastSquaresAveragesOutReactionNoise(batch: UInt64) throws {
        let nodes = [n1, n2, n3, n4]
        let truth: [NodeID: TimeSpan] = [n1: .zero, n2: .seconds(12), n3: .milliseconds(45_500), n4: .milliseconds(-7_300)]
        let sigma = 200.0
        var squaredLeastSquares = 0.0
        var squaredLatest = 0.0
        var samples = 0.0
        for trial in UInt64(0)..<10 {
            var rng = SplitMix64(seed: batch &* 1_000 &+ trial)
            var room = CalibrationRoomScript()
            var pressed: [NodeID: WallTime] = [:]  // each node's press of the latest moment
            for moment in 0..<12 {
                let gameTime = WallTime.milliseconds(sinceEpoch: 1_700_000_000_000) + Int64(moment) * .seconds(60)
                for node in nodes {
                    let noise = TimeSpan.milliseconds(Int64((rng.nextGaussian() * sigma).rounded()))
                    pressed[node] = gameTime + truth[node]! + noise
                    room.mark(node, "moment \(moment)", at: pressed[node]!)
                }
            }
            let calibration = room.calibration
            let reference = try #require(calibration.reference(of: n1))
            for node in nodes where node != reference {
                let expected = (truth[node]! - truth[reference]!).fractionalMilliseconds
                let leastSquares = calibration.offset(of: node)!.fractionalMilliseconds
                let latest = (pressed[node]! - pressed[reference]!).fractionalMilliseconds
                squaredLeastSquares += (leastSquares - expected) * (leastSquares - expected)
                squaredLatest += (latest - expected) * (latest - expected)
                samples += 1
            }
        }
        let rmsLeastSquares = (squaredLeastSquares / samples).squareRoot()
        let rmsLatest = (squaredLatest / samples).squareRoot()
        // Expected: about σ·√(2/12) ≈ 82 ms against σ·√2 ≈ 283 ms, a ratio of 1/√12 ≈ 0.29.
        #expect(rmsLeastSquares < 0.5 * rmsLatest, "least squares \(rmsLeastSquares) vs latest mark \(rmsLatest)")
        #expect(rmsLeastSquares < 150)
    }

    // MARK: Nudges

    @Test func delayNudgesAddUp() {
        var room = CalibrationRoomScript()
        room.mark(n1, "A", at: .epoch + .seconds(1))
        room.mark(n2, "A", at: .epoch + .seconds(3))
        room.nudge(n2, 1_000)
        room.nudge(n2, -500)
        #expect(room.calibration.placements.mapValues(\.offset) == [n1: .zero, n2: .milliseconds(2_500)])
        room.nudge(n1, 250)  // the reference nudges itself
        #expect(room.calibration.placements.mapValues(\.offset) == [n1: .milliseconds(250), n2: .milliseconds(2_500)])
        #expect(room.calibration.holdBack(from: n1, to: n2) == .milliseconds(2_250))
    }

    @Test func nudgesWaitForCalibrationAndDoNotSurviveRejoining() {
        var room = CalibrationRoomScript()
        room.nudge(n2, 5_000)  // before a re-join: will not count
        room.join(n2)
        room.nudge(n2, 700)  // uncalibrated yet: waits
        room.mark(n1, "A", at: .epoch + .seconds(1))
        #expect(room.calibration == .none)
        room.mark(n2, "A", at: .epoch + .seconds(3))
        #expect(room.calibration.placements.mapValues(\.offset) == [n1: .zero, n2: .milliseconds(2_700)])

        room.leave(n2)
        room.join(n2)
        room.mark(n2, "A", at: .epoch + .seconds(3))
        #expect(room.calibration == placed(n1, [n1: .zero, n2: .seconds(2)]))
    }

    @Test func otherEventKindsAreIgnored() {
        var room = CalibrationRoomScript()
        room.mark(n1, "A", at: .epoch + .seconds(1))
        room.add(n2, .calibrationEvent(label: "A"), at: .epoch + .milliseconds(1_500))
        room.add(n2, .chat(text: "A"), at: .epoch + .milliseconds(1_600))
        room.mark(n2, "A", at: .epoch + .seconds(3))
        #expect(room.calibration == placed(n1, [n1: .zero, n2: .seconds(2)]))
    }

    @Test func extremeTimesDoNotTrap() {
        var room = CalibrationRoomScript()
        room.add(n1, .mark(label: "A"), atMilliseconds: .min)
        room.add(n2, .mark(label: "A"), atMilliseconds: .max)
        room.nudge(n2, .max)
        room.mark(n3, "A", at: .epoch)
        let calibration = room.calibration
        #expect(calibration.reference(of: n2) == n1)
        #expect(calibration.offset(of: n2) == .max)
        #expect(calibration.holdBack(from: n1, to: n2) == .max)
        #expect(calibration.lag(of: n1, behind: n2) == -.max)
    }

    // MARK: Properties, on seeded random rooms

    /// A random room: six nodes marking labels from a small pool, written in varying ways, with a
    /// few joins, leaves, nudges, chats and repeated marks mixed in.
    static func randomRoom(seed: UInt64) -> [Event] {
        var rng = SplitMix64(seed: seed)
        var room = CalibrationRoomScript()
        let spellings = [["kickoff", " KickOff", "KICKOFF\n"], ["goal", "Goal "], ["half"], ["foul", " FOUL"], ["end"]]
        let nodes = (1...6).map { NodeID.fixture(UInt8($0)) }
        for _ in 0..<Int.random(in: 10...40, using: &rng) {
            let node = nodes.randomElement(using: &rng)!
            let time = WallTime.milliseconds(sinceEpoch: 1_700_000_000_000 + Int64.random(in: 0...3_600_000, using: &rng))
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<75: room.mark(node, spellings.randomElement(using: &rng)!.randomElement(using: &rng)!, at: time)
            case 75..<82: room.nudge(node, Int64.random(in: -3...3, using: &rng) * 500)
            case 82..<88: room.join(node)
            case 88..<92: room.leave(node)
            default: room.add(node, .chat(text: "hi"), at: time)
            }
        }
        return room.events
    }

    @Test(arguments: UInt64(0)..<50)
    func arrivalOrderAndDuplicatesDoNotMatter(seed: UInt64) {
        let events = Self.randomRoom(seed: seed)
        let expected = CalibrationSolver.solve(events)
        var rng = SplitMix64(seed: seed ^ 0xDEAD_BEEF)
        for _ in 0..<5 {
            var arrived = events + events.filter { _ in Bool.random(using: &rng) }
            arrived.shuffle(using: &rng)
            #expect(CalibrationSolver.solve(arrived) == expected)
        }
        #expect(CalibrationSolver.solve(events.reversed()) == expected)
    }

    @Test func randomRoomsAreMostlyCalibrated() {
        // Keeps the property above from passing vacuously.
        let calibrated = (UInt64(0)..<50).filter { !CalibrationSolver.solve(Self.randomRoom(seed: $0)).isEmpty }
        #expect(calibrated.count >= 40)
    }

    /// A random tree of marks: every new mark either opens a new label by a placed node or brings a
    /// new node in on an existing label, so marks = nodes + labels − 1.
    static func randomTree(seed: UInt64) -> (events: [Event], marks: [(node: NodeID, label: String, time: WallTime)]) {
        var rng = SplitMix64(seed: seed)
        let nodeCount = Int.random(in: 2...40, using: &rng)
        var room = CalibrationRoomScript()
        var marks: [(node: NodeID, label: String, time: WallTime)] = []
        var nodes = [NodeID.fixture(UInt8.random(in: 1...255, using: &rng))]
        var labels: [String] = []
        func time() -> WallTime {
            .milliseconds(sinceEpoch: 1_700_000_000_000 + Int64.random(in: -500_000_000...500_000_000, using: &rng))
        }
        while nodes.count < nodeCount {
            if labels.isEmpty || Int.random(in: 0..<3, using: &rng) == 0 {
                let label = "label \(labels.count)"
                labels.append(label)
                marks.append((nodes.randomElement(using: &rng)!, label, time()))
            } else {
                var node: NodeID
                repeat { node = .fixture(UInt8.random(in: 1...255, using: &rng)) } while nodes.contains(node)
                nodes.append(node)
                marks.append((node, labels.randomElement(using: &rng)!, time()))
            }
        }
        for mark in marks { room.mark(mark.node, mark.label, at: mark.time) }
        return (room.events, marks)
    }

    @Test(arguments: UInt64(0)..<50)
    func onTreesLeastSquaresIsTheExactRule(seed: UInt64) {
        let (events, marks) = Self.randomTree(seed: seed)
        let labelSet = Set(marks.map(\.label))
        let nodeSet = Set(marks.map(\.node))
        #expect(marks.count == nodeSet.count + labelSet.count - 1)

        // The exact rule, walking outwards from the node whose mark came first.
        let first = marks.min { ($0.time, $0.node, $0.label) < ($1.time, $1.node, $1.label) }!
        var expected: [NodeID: TimeSpan] = [first.node: .zero]
        var changed = true
        while changed {
            changed = false
            for mark in marks where expected[mark.node] == nil {
                if let placed = marks.first(where: { $0.label == mark.label && expected[$0.node] != nil }) {
                    expected[mark.node] = mark.time - placed.time + expected[placed.node]!
                    changed = true
                }
            }
        }
        #expect(expected.count == nodeSet.count)
        var shuffler = SplitMix64(seed: seed)
        let calibration = CalibrationSolver.solve(events.shuffled(using: &shuffler))
        let placements = expected.mapValues { Calibration.Placement(reference: first.node, offset: $0) }
        #expect(calibration == Calibration(placements: placements))
    }
}
