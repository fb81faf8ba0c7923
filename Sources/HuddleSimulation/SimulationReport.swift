public import HuddleCore

/// The figures of one ``Simulation`` run, and the targets they are judged against.
public struct SimulationReport: Sendable {
    public let config: SimulationConfig
    /// Shown (origin, other node) pairs over broadcasts × (nodes − 1).
    public let deliveredFraction: Double
    /// Every message any node sent from the first broadcast until the last was everywhere (or the
    /// run ended), probes and digests included, over the broadcasts.
    public let messagesPerBroadcast: Double
    /// Origin → shown on each other node, ms of virtual time.
    public let p50Ms: Double
    public let p99Ms: Double
    public let maxMs: Double
    /// Messages a node showed a second time.
    public let duplicatesShown: Int
    /// Messages sent from the first broadcast on, by kind.
    public let messagesByKind: [String: Int]
    /// With a partition: from the heal until every broadcast was everywhere, ms (`nil` if that
    /// never happened).
    public let allDeliveredAfterHealMs: Double?
    /// Virtual seconds from the end of the warm-up to the end of the run.
    public let virtualSeconds: Double
    /// With ``SimulationConfig/stalls``: how many nodes froze now and then, and how many freezes.
    public let stallingNodes: Int
    public let stalls: Int
    /// Every "suspect" or "gone" a node reported after the warm-up about a node that was up
    /// (frozen or not).
    public let falseAlarms: [Alarm]
    /// With ``SimulationConfig/kill``: for each other node, how long after the death it reported
    /// the dead node gone (ms), or `nil` if it never did.
    public let killDetectionMs: [Double?]?
    /// With ``SimulationConfig/unreachable``: how many pairs could not reach each other.
    public var unreachablePairs = 0
    /// The broadcasts as said (when, by which node, what), and the texts each node showed, in
    /// order: what another driver replays to compare (issue 32).
    public var script: [(at: MonotonicTime, origin: Int, text: String)] = []
    public var shownInOrder: [Int: [String]] = [:]
    /// With ``SimulationConfig/crashes``: how many; messages a crash lost before they landed that
    /// some node showed anyway; seqs a restarted node signed twice; proofs of equivocation the
    /// nodes found. All three must be 0.
    public var crashes = 0
    public var lostShown = 0
    public var seqsReused = 0
    public var equivocations = 0
    /// SHA-256 over every delivery (time, from, to, kind): equal for equal configs.
    public let trace: String

    /// A node reported another that was up as not answering or gone.
    public struct Alarm: Sendable {
        public let observer: Int
        public let about: Int
        public let state: PeerState
        public let atMs: Double
    }

    /// False alarms per node-hour: over the nodes that could raise them and the virtual time.
    public var falseAlarmsPerNodeHour: Double {
        let nodeHours = Double(config.nodes - (config.kill == nil ? 0 : 1)) * virtualSeconds / 3600
        return nodeHours > 0 ? Double(falseAlarms.count) / nodeHours : 0
    }

    /// The slowest node's time to report the dead node gone (ms; infinite if one never did).
    public var killDetectedEverywhereMs: Double? {
        killDetectionMs.map { times in times.map { $0 ?? .infinity }.max() ?? 0 }
    }

    /// One figure beside its target.
    public struct Verdict: Sendable {
        public let figure: String
        public let value: String
        public let target: String
        public let met: Bool
    }

    /// The targets of issue 8, as they apply to this run's config.
    public var verdicts: [Verdict] {
        var verdicts: [Verdict] = []
        func add(_ figure: String, _ value: String, _ target: String, _ met: Bool) {
            verdicts.append(Verdict(figure: figure, value: value, target: target, met: met))
        }
        if config.stalls != nil || config.kill != nil {
            add("false_alarms", "\(falseAlarms.count)", "= 0", falseAlarms.isEmpty)
        }
        if let slowest = killDetectedEverywhereMs {
            add("kill_reported_gone_everywhere_ms", slowest.isFinite ? Self.ms(slowest) : "never", "<= 10000",
                slowest <= 10_000)
        }
        if config.partition != nil {
            let healed = allDeliveredAfterHealMs.map { "\(Self.ms($0)) ms" } ?? "never"
            add("all_delivered_after_heal_ms", healed, "<= 3000", (allDeliveredAfterHealMs ?? .infinity) <= 3000)
        } else if config.loss == 0 {
            add("msgs_per_broadcast", Self.two(messagesPerBroadcast), "<= 30", messagesPerBroadcast <= 30)
            add("p50_ms", Self.ms(p50Ms), "<= 110", p50Ms <= 110)
            add("max_ms", Self.ms(maxMs), "<= 250", maxMs <= 250)
        } else {
            add("delivered_fraction", Self.four(deliveredFraction), "= 1", deliveredFraction == 1)
            add("duplicates_shown", "\(duplicatesShown)", "= 0", duplicatesShown == 0)
            add("p99_ms", Self.ms(p99Ms), "<= 1500", p99Ms <= 1500)
        }
        return verdicts
    }

    /// One JSON object: the config, the figures and the verdicts.
    public var json: String {
        var fields: [(String, String)] = [
            ("nodes", "\(config.nodes)"), ("latency_ms", "\(config.latencyMs)"), ("loss", "\(config.loss)"),
            ("broadcasts", "\(config.broadcasts)"), ("rate", "\(config.rate)"), ("seed", "\(config.seed)"),
            ("delivered_fraction", Self.four(deliveredFraction)),
            ("msgs_per_broadcast", Self.two(messagesPerBroadcast)),
            ("p50_ms", Self.ms(p50Ms)), ("p99_ms", Self.ms(p99Ms)), ("max_ms", Self.ms(maxMs)),
            ("duplicates_shown", "\(duplicatesShown)"),
            ("msgs_by_kind", "{" + messagesByKind.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }
                .joined(separator: ",") + "}"),
        ]
        if config.unreachable > 0 { fields.append(("unreachable_pairs", "\(unreachablePairs)")) }
        if config.commitLatencyMs > 0 { fields.append(("commit_latency_ms", "\(config.commitLatencyMs)")) }
        if config.crashes != nil {
            fields.append((
                "crashes",
                "{\"count\":\(crashes),\"lost_shown\":\(lostShown),\"seqs_reused\":\(seqsReused),"
                    + "\"equivocations\":\(equivocations)}"))
        }
        if config.stalls != nil || config.kill != nil {
            fields.append(("virtual_seconds", Self.two(virtualSeconds)))
            fields.append(("false_alarms", "\(falseAlarms.count)"))
            fields.append(("false_alarms_per_node_hour", Self.two(falseAlarmsPerNodeHour)))
        }
        if let stalls = config.stalls {
            fields.append((
                "stalls",
                "{\"fraction\":\(stalls.fraction),\"seconds\":\(stalls.seconds),\"every\":\(stalls.every),"
                    + "\"nodes\":\(stallingNodes),\"count\":\(self.stalls)}"))
        }
        if let kill = config.kill, let times = killDetectionMs {
            let known = times.compactMap { $0 }.sorted()
            fields.append(("kill", "{\"node\":\(kill.node),\"at_s\":\(kill.at)}"))
            fields.append(("kill_reported_gone_ms", "{\"median\":\(known.isEmpty ? "null" : Self.ms(known[known.count / 2])),"
                + "\"max\":\(known.isEmpty ? "null" : Self.ms(known.last!)),\"never\":\(times.count - known.count)}"))
        }
        if let partition = config.partition {
            fields.append(("partition", "{\"nodes\":\(partition.nodes),\"at_s\":\(partition.at),\"seconds\":\(partition.seconds)}"))
            fields.append(("all_delivered_after_heal_ms", allDeliveredAfterHealMs.map(Self.ms) ?? "null"))
        }
        fields.append((
            "targets",
            "[" + verdicts.map {
                "{\"figure\":\"\($0.figure)\",\"value\":\"\($0.value)\",\"target\":\"\($0.target)\",\"met\":\($0.met)}"
            }.joined(separator: ",") + "]"))
        fields.append(("trace_sha256", "\"\(trace)\""))
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// The figures as lines for a person.
    public var text: String {
        var lines = [
            "\(config.nodes) nodes, \(config.latencyMs) ms links, \(Int(config.loss * 100)) % loss, "
                + "\(config.broadcasts) broadcasts at \(config.rate)/s, seed \(config.seed)"
                + (config.partition.map { ", \($0.nodes) nodes cut off at \($0.at) s for \($0.seconds) s" } ?? "")
                + (config.unreachable > 0 ? ", \(unreachablePairs) pairs unreachable" : ""),
            "  delivered \(Self.four(deliveredFraction)), shown twice \(duplicatesShown)",
            "  latency p50 \(Self.ms(p50Ms)) ms, p99 \(Self.ms(p99Ms)) ms, max \(Self.ms(maxMs)) ms",
            "  messages per broadcast \(Self.two(messagesPerBroadcast)) ("
                + messagesByKind.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")",
        ]
        if config.crashes != nil {
            lines.append(
                "  \(crashes) crashes (commits take \(config.commitLatencyMs) ms): lost messages shown \(lostShown), "
                    + "seqs signed twice \(seqsReused), equivocations found \(equivocations)")
        }
        if let healed = allDeliveredAfterHealMs { lines.append("  everything everywhere \(Self.ms(healed)) ms after the heal") }
        if let stalls = config.stalls {
            lines.append(
                "  \(stallingNodes) nodes froze \(self.stalls) times for \(stalls.seconds) s (one freeze each "
                    + "\(stalls.every) s on average) over \(Self.two(virtualSeconds)) virtual s")
        }
        if config.stalls != nil || config.kill != nil {
            lines.append(
                "  false alarms (suspect or gone about a node that was up): \(falseAlarms.count), "
                    + "\(Self.two(falseAlarmsPerNodeHour)) per node-hour")
        }
        if let kill = config.kill, let times = killDetectionMs {
            let known = times.compactMap { $0 }.sorted()
            lines.append(
                "  node \(kill.node) killed at \(kill.at) s: reported gone by \(known.count) of \(times.count) nodes, "
                    + "median \(known.isEmpty ? "-" : Self.ms(known[known.count / 2])) ms, "
                    + "max \(known.last.map(Self.ms) ?? "-") ms")
        }
        for verdict in verdicts {
            lines.append("  \(verdict.figure) \(verdict.value), target \(verdict.target): \(verdict.met ? "OK" : "MISSED")")
        }
        return lines.joined(separator: "\n")
    }

    static func ms(_ value: Double) -> String { "\(Int(value.rounded()))" }
    static func two(_ value: Double) -> String { "\((value * 100).rounded() / 100)" }
    static func four(_ value: Double) -> String { "\((value * 10000).rounded() / 10000)" }
}
