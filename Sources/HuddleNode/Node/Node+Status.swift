import Foundation
import HuddleCore
import NIOCore

extension Node {
    /// Answers a request from the control socket (`huddle status`, `huddle send`).
    func handleControl(_ request: ControlRequest) async -> ControlResponse {
        switch request {
        case .status:
            return .status(status())
        case .send(let asked, let text):
            let name = roomNamed(asked)
            switch await step({ machine, now in machine.say(text, inRoomNamed: name, now: now) }) {
            case .success(let event):
                let pushedTo = machine.roomPeers(event.room).map(\.nick).sorted()
                return .sent(id: "\(event.origin.hex)#\(event.seq)", room: machine.name(of: event.room), pushedTo: pushedTo)
            case .failure(let refusal): return .error(refusal.words)
            }
        case .command(let asked, let line, let json):
            let name = roomNamed(asked)
            if case .photo(let path, let caption)? = try? ConsoleCommand(parsing: line) {
                return await sendPicture(path: path, caption: caption, inRoomNamed: name, json: json)
            }
            let (refusal, shown) = await stepShowing { machine, now in
                machine.controlLine(line, inRoomNamed: name, at: now.wall, now: now)
            }
            if let refusal { return .error(refusal.words) }
            let renderer = outputRenderer(json: json, colors: false)
            return .said(shown.compactMap { rendered($0, by: renderer) })
        case .sendDirect(let target, let text):
            let trimmed = text.trimmingWhitespace()
            guard !trimmed.isEmpty else { return .error("nothing to send") }
            switch await step({ machine, now in machine.sendDirect(to: target, text: trimmed, now: now) }) {
            case .success(let event):
                let pushedTo = machine.roomPeers(event.room).map(\.nick).sorted()
                return .sent(id: "\(event.origin.hex)#\(event.seq)", room: machine.name(of: event.room), pushedTo: pushedTo)
            case .failure(let problem): return .error(problem.words)
            }
        }
    }

    /// The room a request names, or the console's current one when it names none (`huddle send`
    /// without `--room`); `""` when there is none either (the machine says so).
    private func roomNamed(_ asked: String) -> String {
        guard asked.isEmpty else { return asked }
        return machine.currentRoom.map(machine.name(of:)) ?? ""
    }

    /// The node as `huddle status` shows it: the machine's snapshot, with what only the shell
    /// knows (the host's addresses, the data dir, what the store took, what the rate limit
    /// refused, the interface it was told to keep to, whether it uses mDNS).
    func status() -> NodeStatus {
        var status = machine.status(
            now: now, dataDir: configuration.dataDir, addresses: Self.localAddresses(), eventsStored: writer.eventsStored,
            rateLimited: datagrams.limits.withLock { $0.refused })
        status.node.interface = configuration.interface
        status.node.mdns = !configuration.mdns ? "off" : run.mdnsUnavailable ? "unavailable" : "on"
        return status
    }

    /// The IPv4 and IPv6 addresses of this host's interfaces, loopback last.
    static func localAddresses() -> [String] {
        guard let devices = try? System.enumerateDevices() else { return [] }
        let addresses = devices.compactMap { device -> String? in
            guard let address = device.address, let ip = address.ipAddress else { return nil }
            if case .v6 = address, ip.hasPrefix("fe80") { return nil }
            return ip
        }
        let unique = Array(Set(addresses))
        return unique.filter { !$0.hasPrefix("127.") && $0 != "::1" }.sorted()
            + unique.filter { $0.hasPrefix("127.") || $0 == "::1" }.sorted()
    }
}
