/// Every bound the wire format enforces, in one place.
///
/// The decoder checks each length and count against these *before* it reads or allocates
/// anything, so a hostile peer cannot make a node allocate more than the bytes it actually sent.
/// The encoder writes whatever it is given; a value outside these limits encodes to bytes that
/// every decoder rejects (see ``WireMessage/validate()``), so check user input against them first.
///
/// | Limit                        | Value     | Why                                               |
/// |------------------------------|-----------|---------------------------------------------------|
/// | ``maxDatagramBytes``         | 60 000    | one UDP datagram (IPv4 max payload is 65 507)     |
/// | ``maxFrameBytes``            | 4 MiB     | one TCP frame (a sync response)                   |
/// | ``maxSyncRequestBytes``      | 41 066    | the largest sync request: what a server reads     |
/// | ``maxNickBytes``             | 64        | a person's display name                           |
/// | ``maxRoomBytes``             | 64        | a room name                                       |
/// | ``maxLabelBytes``            | 64        | a calibration label ("kickoff")                   |
/// | ``maxChatTextBytes``         | 4 096     | one chat message                                  |
/// | ``maxHostBytes``             | 255       | a DNS name or an address literal                  |
/// | ``maxVersionVectorEntries``  | 1 024     | origins in one room                               |
/// | ``maxEventsPerBatch``        | 1 024     | events in one push or sync response               |
/// | ``maxPeersPerList``          | 256       | peers gossiped in one probe or ack                |
/// | ``maxRoomsPerNode``          | 32        | rooms a node advertises                           |
///
/// String limits count UTF-8 bytes, not characters.
public enum WireLimits {
    /// Largest message (envelope + payload) a node sends in one UDP datagram. Below the IPv4
    /// maximum of 65 507 so one event of the largest possible size (``maxEventBytes``) always fits.
    public static let maxDatagramBytes = 60_000
    /// Largest TCP frame payload (envelope + message, not counting the 4-byte length prefix).
    /// A frame header announcing more is rejected before anything is buffered for it.
    public static let maxFrameBytes = 4 * 1024 * 1024
    /// Largest sync request (envelope + message): a full version vector in the longest room
    /// name. A node serving pulls takes frames of at most this size, so a peer cannot make it
    /// buffer megabytes it will only refuse.
    public static let maxSyncRequestBytes =
        WireProtocol.envelopeByteCount + NodeID.byteCount + (2 + maxRoomBytes)
        + (2 + maxVersionVectorEntries * versionVectorEntryBytes) + 2
    /// Largest nick, in UTF-8 bytes.
    public static let maxNickBytes = 64
    /// Largest room name, in UTF-8 bytes.
    public static let maxRoomBytes = 64
    /// Largest calibration label, in UTF-8 bytes.
    public static let maxLabelBytes = 64
    /// Largest chat message text, in UTF-8 bytes.
    public static let maxChatTextBytes = 4096
    /// Largest host (DNS name or address literal) in a peer record, in UTF-8 bytes.
    public static let maxHostBytes = 255
    /// Most entries in one version vector, i.e. most origins a room can have.
    public static let maxVersionVectorEntries = 1024
    /// Most events in one ``WireMessage/events(_:)`` push or ``SyncResponse``.
    public static let maxEventsPerBatch = 1024
    /// Most peers in the peer list of one ``Probe`` or ``Ack``.
    public static let maxPeersPerList = 256
    /// Most rooms a node advertises in one ``Probe`` or ``Ack``.
    public static let maxRoomsPerNode = 32

    /// Size of the smallest encoded event: a `leave` in a room with an empty name and an empty
    /// context. Used to bound event counts by the bytes left.
    public static let minEventBytes =
        NodeID.byteCount + 8 + EventDigest.byteCount + 2 + 8 + 2 + 1 + Event.signatureByteCount

    /// Size of the largest encoded event: a sealed chat of ``maxChatTextBytes`` in a room of
    /// ``maxRoomBytes`` with a full context of ``maxVersionVectorEntries`` entries (45 302 bytes).
    public static let maxEventBytes =
        NodeID.byteCount + 8 + EventDigest.byteCount + (2 + maxRoomBytes) + 8
        + (2 + maxVersionVectorEntries * versionVectorEntryBytes)
        + (1 + 2 + maxSealedBytes) + Event.signatureByteCount

    /// Bytes a sealed body adds to the body inside: a 12-byte nonce and a 16-byte tag.
    public static let sealOverheadBytes = 12 + 16
    /// Smallest sealed body: the overhead around a one-byte `leave`.
    public static let minSealedBytes = sealOverheadBytes + 1
    /// Largest sealed body: the overhead around the largest chat body (4 127 bytes).
    public static let maxSealedBytes = sealOverheadBytes + 1 + 2 + maxChatTextBytes

    /// Most frames in one sound window: 10 s of sound, 4 153 bytes of data sealed.
    public static let maxSoundFrames = 1_000

    /// Size of a `heard` body after its tag: peer, at, lag, sigma, confidence.
    public static let heardBodyBytes = NodeID.byteCount + 8 + 8 + 4 + 2

    /// Size of an X25519 public key in a probe or ack.
    public static let agreementKeyBytes = 32
    /// The agreement key of a node that offers none.
    public static let noAgreementKey = [UInt8](repeating: 0, count: agreementKeyBytes)
    /// Size of one private room's name check in a probe or ack.
    public static let roomTagBytes = 16
    /// The name check of a room that has none (a public room, a direct message).
    public static let noRoomTag = [UInt8](repeating: 0, count: roomTagBytes)

    /// Size of one encoded version-vector entry: origin and sequence number.
    static let versionVectorEntryBytes = NodeID.byteCount + 8

    /// Size of the smallest encoded peer record (empty nick and host).
    static let minPeerRecordBytes = NodeID.byteCount + 2 + 2 + 2 + 1 + 8
}
