/// What this node may send to addresses that have not proven themselves, by the address that
/// pays (`HOST:PORT`): never more bytes than arrived from that address, but for ``slack``
/// (docs/PROTOCOL.md, "Trust"). An address rather than a host: what one socket of a machine
/// earned once paid for datagrams to another port of it that a forger named (issue 45).
///
/// Anyone can name an address: a forged source, a gossip record, an unsigned digest. Without
/// this, a node answered a 170-byte probe with a forged source by 90 datagrams over 30 s, and
/// gossip naming a victim brought it 29 bytes for every byte the attacker sent. So a datagram to
/// an address that has not answered one of this node's probes (``Peer/addressProven``) spends
/// credit, and credit is earned only by bytes that arrived: from the address itself, or, for an
/// address gossip named, from the member that named it. A payer may run at most
/// ``slack`` bytes into debt, repaid before anything else goes to it: a newcomer's probe is
/// answered by a probe of this node's, which is longer when this node's nick is (without it,
/// "alice" answering "bob" waited a second for bob's next probe). A payer's credit is capped
/// at ``cap``; at most ``maximumTracked`` payers are kept (the smallest credits are forgotten
/// first: a forgotten one starts again at zero, which only sends less).
///
/// ```swift
/// var credit = SendCredit()
/// credit.earn(170, from: "192.0.2.66:7400")         // a probe arrived from there
/// credit.spend(150, payer: "192.0.2.66:7400")       // true: the ack may go
/// credit.spend(150, payer: "192.0.2.66:7400")       // false: 20 bytes left, 64 of slack
/// ```
public struct SendCredit: Sendable {
    /// The most credit one payer holds, in bytes.
    public static let cap = 64 << 10
    /// The most a payer may owe: what a probe of this node's may exceed the one it answers by (a
    /// nick of up to 64 bytes).
    public static let slack = 64
    /// The most payers whose credit is kept.
    public static let maximumTracked = 4_096

    private var balances: [String: Int] = [:]

    public init() {}

    /// `bytes` arrived from `address` (`HOST:PORT`).
    public mutating func earn(_ bytes: Int, from address: String) {
        guard bytes > 0 else { return }
        if balances[address] == nil, balances.count >= Self.maximumTracked {
            // Keep the half with the most credit: honest peers talk all the time.
            let kept = balances.sorted { $0.value > $1.value }.prefix(Self.maximumTracked / 2)
            balances = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
        }
        balances[address] = min(Self.cap, (balances[address] ?? 0) + bytes)
    }

    /// Takes `bytes` of `payer`'s credit if it holds that much, less ``slack``; false (nothing
    /// taken) if not.
    public mutating func spend(_ bytes: Int, payer: String) -> Bool {
        let balance = balances[payer] ?? 0
        guard balance - bytes >= -Self.slack else { return false }
        balances[payer] = balance - bytes
        return true
    }
}
