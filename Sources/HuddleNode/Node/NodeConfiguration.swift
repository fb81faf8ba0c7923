public import HuddleCore

/// Everything `huddle run` was asked for.
public struct NodeConfiguration: Sendable {
    /// The nick other viewers see.
    public var nick: String
    /// A room to join at start (kept across restarts once joined).
    public var room: String?
    /// The passphrase of `room`, which makes it a private room (see ``RoomKey``).
    public var passphrase: String?
    /// Store and control socket live here.
    public var dataDir: String
    /// UDP and TCP port; 0 picks a free one.
    public var port: Int
    /// `HOST:PORT` of peers to contact at start; the peer lists they gossip find the rest.
    public var seeds: [String]
    /// Advertise this node and look for peers over mDNS (DNS-SD).
    public var mdns: Bool
    /// One JSON object per line on stdout instead of text for people.
    public var json: Bool
    /// Read commands and messages from stdin.
    public var console: Bool
    /// ANSI colours in text output.
    public var colors: Bool
    /// Address to listen on.
    public var listenHost: String
    /// What to hear the screen through, to find offsets from the sound: nothing by default.
    public var listen: Hearing?
    /// How long a message from a writer this viewer is not placed with waits after it was
    /// written (`nil`: shown at once). `--shield`.
    public var shield: TimeSpan? = HoldBackSchedule.defaultShield
    /// Whether the status line counts held-back messages. `--show-waiting`.
    public var showWaiting = false
    /// What of its sound a listening node shares, and when. `--sound-recheck`.
    public var soundSharing = SoundSharing.Rules()
    /// Most bytes of pictures kept on disk, every room together: past it, the oldest go (their
    /// messages stay). `--pictures-quota`.
    public var picturesQuota = NodeConfiguration.defaultPicturesQuota
    public static let defaultPicturesQuota = 256 * 1024 * 1024
    /// Serve the phone's page from the start (`--web`; `/web` starts it later).
    public var web = false
    /// The page's TCP port (`--web-port`; 0 picks a free one).
    public var webPort = NodeConfiguration.defaultWebPort
    /// The one interface to announce and look for peers on over mDNS, and whose address the
    /// page's QR code gives (`--interface`); `nil`, every interface the mDNS daemon uses.
    public var interface: String?

    /// The page's port unless told otherwise: fixed, so a paired phone finds the node again.
    public static let defaultWebPort = 7780

    /// Where a listening node's sound comes from.
    public enum Hearing: Sendable, Equatable {
        /// The default input device (`--listen`).
        case device
        /// A WAV file played in real time from the node's start (`--audio-file`).
        case file(String)
    }

    public init(
        nick: String, room: String? = nil, passphrase: String? = nil, dataDir: String, port: Int = 0, seeds: [String] = [],
        mdns: Bool = true, json: Bool = false, console: Bool = true, colors: Bool = false,
        listenHost: String = "0.0.0.0", listen: Hearing? = nil
    ) {
        self.nick = nick
        self.room = room
        self.passphrase = passphrase
        self.dataDir = dataDir
        self.port = port
        self.seeds = seeds
        self.mdns = mdns
        self.json = json
        self.console = console
        self.colors = colors
        self.listenHost = listenHost
        self.listen = listen
    }
}
