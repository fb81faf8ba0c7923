/// Whatever one UDP datagram carries but a relay (kind 10, ``RelayMessage``): a ``WireMessage``
/// (kinds 1–9) or a ``SoundWindow`` (kind 11), told apart by the envelope's kind byte before
/// anything else is read.
///
/// ```swift
/// switch try Datagram(decoding: bytes) {
/// case .message(let message): handle(message)
/// case .sound(let window): listening.received(window)
/// }
/// ```
public enum Datagram: Hashable, Sendable {
    case message(WireMessage)
    case sound(SoundWindow)

    /// Decodes a datagram; the errors are ``WireMessage/init(decoding:)``'s.
    public init(decoding bytes: some Collection<UInt8>) throws(WireError) {
        if Self.isSoundWindow(bytes) {
            self = .sound(try SoundWindow(decoding: bytes))
        } else {
            self = .message(try WireMessage(decoding: bytes))
        }
    }

    /// The datagram's bytes.
    public func encoded() -> [UInt8] {
        switch self {
        case .message(let message): message.encoded()
        case .sound(let window): window.encoded()
        }
    }

    /// Whether the bytes are a well-formed envelope of this version with kind 11.
    public static func isSoundWindow(_ bytes: some Collection<UInt8>) -> Bool {
        WireProtocol.kind(of: bytes) == SoundWindow.kind
    }
}
