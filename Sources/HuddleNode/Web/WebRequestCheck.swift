import NIOHTTP1

/// What the page's server lets in, before anything else (docs/WEB.md, "What the server refuses").
/// Pure, so the rules are tested without a socket.
///
/// - **Host**: an IP address (v4, or v6 in brackets), `localhost`, or one of the machine's own
///   names, with or without a port. A name someone else's DNS answers for is refused: that is
///   how DNS rebinding would turn a web page on the internet into a client of this server.
/// - **Origin** (WebSockets): exactly `http://` + the Host the request came with. A page of
///   another site, open on the same phone, cannot talk to the node.
/// - **One Host**: a request with two is refused (400): which one a proxy or a cache in between
///   went by is anyone's guess.
enum WebRequestCheck {
    enum Refusal: Equatable, Sendable {
        /// `421`: the Host is a name this machine does not answer to.
        case host(String?)
        /// `403`: a WebSocket from another origin.
        case origin(String?)
        /// `400`: two Host headers.
        case twoHosts

        var status: Int {
            switch self {
            case .host: 421
            case .origin: 403
            case .twoHosts: 400
            }
        }

        var reason: String {
            switch self {
            case .host(let host): "the Host \(host.map { "\"\($0)\"" } ?? "header is missing and") is not this machine's address"
            case .origin(let origin): "a WebSocket from \(origin ?? "no origin") is not this page's"
            case .twoHosts: "a request names one Host"
            }
        }
    }

    /// Why `request` is refused, from its Host headers (and, for a WebSocket, its Origin).
    static func refusal(of request: HTTPRequestHead, isWebSocket: Bool, names: Set<String>) -> Refusal? {
        let hosts = request.headers["Host"]
        return refusal(
            host: hosts.first, secondHost: hosts.dropFirst().first,
            origin: isWebSocket ? request.headers["Origin"].first : nil, isWebSocket: isWebSocket, names: names)
    }

    /// Why a request with this `Host` (and, for a WebSocket, `Origin`) is refused; `nil` lets it in.
    /// `secondHost`: a Host header after the first, if any. `names`: the machine's own host names,
    /// lower case (its hostname, and that with `.local`).
    static func refusal(host: String?, secondHost: String? = nil, origin: String?, isWebSocket: Bool, names: Set<String>)
        -> Refusal?
    {
        guard secondHost == nil else { return .twoHosts }
        guard let host, hostIsThisMachine(host, names: names) else { return .host(host) }
        if isWebSocket, origin?.lowercased() != "http://" + host.lowercased() {
            return .origin(origin)
        }
        return nil
    }

    static func hostIsThisMachine(_ host: String, names: Set<String>) -> Bool {
        let name = hostWithoutPort(host.lowercased())
        guard let name, !name.isEmpty else { return false }
        if name.hasPrefix("[") { return name.hasSuffix("]") && name.dropFirst().dropLast().allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." } }
        return isIPv4(name) || name == "localhost" || names.contains(name)
    }

    /// `host` without `:PORT` (a port must be digits); `nil` if what follows the colon is not one.
    static func hostWithoutPort(_ host: String) -> String? {
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            guard rest.isEmpty || (rest.first == ":" && rest.count > 1 && rest.dropFirst().allSatisfy(\.isASCIIDigit)) else {
                return nil
            }
            return String(host[...close])
        }
        let parts = host.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1: return host
        case 2 where !parts[1].isEmpty && parts[1].allSatisfy(\.isASCIIDigit): return String(parts[0])
        default: return nil
        }
    }

    static func isIPv4(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCIIDigit) && Int(part)! <= 255
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
