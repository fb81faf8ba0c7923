#if canImport(CDNSSD)
import CDNSSD
#elseif canImport(dnssd)
import dnssd
#endif

/// An error code returned by the dns_sd API (Avahi's compat library on Linux, Bonjour on
/// macOS), with the words a user needs: what failed and what to do about it.
///
/// ```swift
/// let error = DNSServiceError(code: -65563)
/// error.isDaemonMissing   // true
/// print(error)            // "no mDNS daemon answered (on Debian/Ubuntu: sudo apt-get install avahi-daemon, or sudo systemctl start avahi-daemon)"
/// ```
public struct DNSServiceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The raw `DNSServiceErrorType`.
    public let code: Int32

    public init(code: Int32) {
        self.code = code
    }

    /// Bonjour's `kDNSServiceErr_ServiceNotRunning`; Avahi's header does not define it.
    static let serviceNotRunning: Int32 = -65563

    /// Whether the call failed because no mDNS responder answered: discovery is off until one runs.
    /// Bonjour says so with `ServiceNotRunning`; Avahi's compat layer reports a client that cannot
    /// reach avahi-daemon over D-Bus as `kDNSServiceErr_Unknown`.
    public var isDaemonMissing: Bool {
        code == Self.serviceNotRunning || code == Int32(kDNSServiceErr_Unknown)
    }

    public var description: String {
        switch Int(code) {
        case Int(Self.serviceNotRunning), Int(kDNSServiceErr_Unknown):
            "no mDNS daemon answered (on Debian/Ubuntu: sudo apt-get install avahi-daemon, or sudo systemctl start avahi-daemon)"
        case Int(kDNSServiceErr_NameConflict):
            "the service name is already taken on this network"
        case Int(kDNSServiceErr_BadParam):
            "dns_sd rejected a parameter"
        case Int(kDNSServiceErr_NoMemory):
            "dns_sd ran out of memory"
        case Int(kDNSServiceErr_Unsupported):
            "this dns_sd implementation does not support the call"
        case Int(kDNSServiceErr_Refused):
            "the mDNS daemon refused the request"
        default:
            "dns_sd error \(code)"
        }
    }
}
