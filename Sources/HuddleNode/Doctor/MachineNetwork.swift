import Foundation
import NIOCore

/// This machine's interfaces and default route, as `huddle doctor` reports them.
public enum MachineNetwork {
    /// Every interface with an IPv4 address but loopback, each address with its prefix
    /// (`192.168.1.23/24`), and what its name says it is.
    public static func interfaces() -> [DoctorFacts.Interface] {
        guard let devices = try? System.enumerateDevices() else { return [] }
        var byName: [String: [String]] = [:]
        for device in devices {
            guard let address = device.address, case .v4 = address, let ip = address.ipAddress, !ip.hasPrefix("127.")
            else { continue }
            let prefix = device.netmask?.ipAddress.map(prefixLength) ?? 32
            byName[device.name, default: []].append("\(ip)/\(prefix)")
        }
        return byName.keys.sorted().map { name in
            DoctorFacts.Interface(name: name, addresses: byName[name]!.sorted(), kind: DoctorFacts.Interface.kind(ofName: name))
        }
    }

    /// The index of the interface named `name` (`--interface`); `nil` if this machine has none.
    public static func index(of name: String) -> UInt32? {
        let index = if_nametoindex(name)
        return index == 0 ? nil : index
    }

    /// The one interface a node keeps its mDNS to when `--interface` did not choose: the only
    /// Wi-Fi or Ethernet one, when a VPN or a container bridge sits beside it, so that nothing
    /// is announced where no friend is (a Docker bridge's address resolved by a friend never
    /// answers). `nil`: every interface the mDNS daemon uses (two networks at once, or nothing
    /// beside the one).
    public static func keptInterface(in interfaces: [DoctorFacts.Interface]) -> String? {
        let withAddress = interfaces.filter { !$0.addresses.isEmpty }
        let lan = withAddress.filter { $0.kind == .lan }
        guard lan.count == 1, withAddress.contains(where: { $0.kind != .lan }) else { return nil }
        return lan[0].name
    }

    /// The address to tell a phone or a friend (the page's QR code): the chosen interface's
    /// (`--interface`); else the default route's, when that is Wi-Fi or Ethernet; else the first
    /// Wi-Fi or Ethernet one. A VPN's or a container bridge's only when there is nothing else:
    /// nobody on the Wi-Fi reaches those. `nil`: no address at all.
    public static func preferredAddress(in interfaces: [DoctorFacts.Interface], defaultRoute: String?, chosen: String?)
        -> String?
    {
        let withAddress = interfaces.filter { !$0.addresses.isEmpty }
        let lan = withAddress.filter { $0.kind == .lan }
        let pick =
            withAddress.first { $0.name == chosen } ?? lan.first { $0.name == defaultRoute } ?? lan.first ?? withAddress.first
        return pick?.addresses.first.map { String($0.prefix { $0 != "/" }) }
    }

    /// The interface of the IPv4 default route (`/proc/net/route`), if there is one.
    public static func defaultRoute(table: String = "/proc/net/route") -> String? {
        guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { return nil }
        return defaultRoute(inTable: text)
    }

    /// `/proc/net/route`'s text: the interface of the first route to 0.0.0.0/0.
    static func defaultRoute(inTable text: String) -> String? {
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.count > 7, fields[1] == "00000000", fields[7] == "00000000" { return String(fields[0]) }
        }
        return nil
    }

    /// `255.255.255.0` → 24.
    static func prefixLength(_ netmask: String) -> Int {
        netmask.split(separator: ".").compactMap { UInt8($0) }.reduce(0) { $0 + $1.nonzeroBitCount }
    }
}
