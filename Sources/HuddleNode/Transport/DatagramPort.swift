import HuddleCore
import Synchronization

/// The node's UDP socket with what its path off the actor keeps: the per-address limits on
/// datagrams in (vouched peers exempt), and whom a goodbye goes to, at which incarnation, and
/// whether it was said (``Node/sayGoodbye()``). Both change when the machine tells the vouched
/// peers (``NodeEffect/vouchedPeers(_:incarnation:)``).
final class DatagramPort: Sendable {
    let endpoint: DatagramEndpoint
    let limits = Mutex(DatagramRateLimits())
    let goodbye = Mutex<(to: [PeerAddress], incarnation: UInt64, said: Bool)>(([], 0, false))

    init(_ endpoint: DatagramEndpoint) {
        self.endpoint = endpoint
    }
}
