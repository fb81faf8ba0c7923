#if canImport(CDNSSD)
import CDNSSD
#elseif canImport(dnssd)
import dnssd
#endif

/// What one dns_sd callback reported, copied out of its C arguments (valid only during the
/// callback).
enum DNSServiceReply: Sendable {
    case register(error: Int32, name: String)
    case browse(flags: UInt32, interface: UInt32, error: Int32, instance: String, domain: String)
    case resolve(interface: UInt32, error: Int32, host: String, port: UInt16, txt: [UInt8])
    case query(flags: UInt32, interface: UInt32, error: Int32, type: UInt16, rdata: [UInt8])
}

/// Where the callbacks of one `DiscoveryLoop` leave their replies. A callback does nothing
/// else: the loop reads the inbox after `DNSServiceProcessResult` (or the call that created the
/// ref) returns, so new refs are never made, nor old ones freed, inside a callback. Used on the
/// loop's thread only.
final class DNSServiceInbox {
    var replies: [(ref: UInt64, reply: DNSServiceReply)] = []
}

/// The `context` of one dns_sd ref: which ref replied, and where to. Retained (through
/// `Unmanaged`) for as long as the ref lives.
final class DNSServiceCallbackContext {
    let ref: UInt64
    let inbox: DNSServiceInbox

    init(ref: UInt64, inbox: DNSServiceInbox) {
        self.ref = ref
        self.inbox = inbox
    }
}

private func deliver(_ context: UnsafeMutableRawPointer?, _ reply: DNSServiceReply) {
    guard let context else { return }
    let box = Unmanaged<DNSServiceCallbackContext>.fromOpaque(context).takeUnretainedValue()
    box.inbox.replies.append((box.ref, reply))
}

private func string(_ pointer: UnsafePointer<CChar>?) -> String {
    pointer.map { String(cString: $0) } ?? ""
}

/// The four dns_sd calls discovery makes, each with a callback that only copies its reply into
/// the context's inbox. Flags are always 0 (Avahi's compat library supports nothing else);
/// `interface` is an interface's index, or 0 for every interface the daemon uses.
enum DNSServiceCalls {
    /// The `domain` discovery uses: the link, never wide-area domains.
    static let domain = "local."

    static func register(
        name: String, port: UInt16, txt: [UInt8], interface: UInt32, context: UnsafeMutableRawPointer
    ) -> (DNSServiceErrorType, DNSServiceRef?) {
        let callback: DNSServiceRegisterReply = { _, _, error, name, _, _, context in
            deliver(context, .register(error: error, name: string(name)))
        }
        var ref: DNSServiceRef?
        let error = txt.withUnsafeBytes { bytes in
            DNSServiceRegister(
                &ref, 0, interface, name, ServiceAdvertisement.serviceType, domain, nil, port.bigEndian,
                UInt16(bytes.count), bytes.baseAddress, callback, context)
        }
        return (error, ref)
    }

    static func updateTXT(_ ref: DNSServiceRef, txt: [UInt8]) -> DNSServiceErrorType {
        txt.withUnsafeBytes { bytes in
            DNSServiceUpdateRecord(ref, nil, 0, UInt16(bytes.count), bytes.baseAddress, 0)
        }
    }

    static func browse(interface: UInt32, context: UnsafeMutableRawPointer) -> (DNSServiceErrorType, DNSServiceRef?) {
        let callback: DNSServiceBrowseReply = { _, flags, interface, error, name, _, domain, context in
            deliver(
                context,
                .browse(
                    flags: flags, interface: interface, error: error, instance: string(name),
                    domain: string(domain)))
        }
        var ref: DNSServiceRef?
        let error = DNSServiceBrowse(&ref, 0, interface, ServiceAdvertisement.serviceType, domain, callback, context)
        return (error, ref)
    }

    static func resolve(
        _ sighting: ServiceSighting, context: UnsafeMutableRawPointer
    ) -> (DNSServiceErrorType, DNSServiceRef?) {
        let callback: DNSServiceResolveReply = { _, _, interface, error, _, host, port, txtLength, txt, context in
            let bytes = txt.map { Array(UnsafeBufferPointer(start: $0, count: Int(txtLength))) } ?? []
            deliver(
                context,
                .resolve(
                    interface: interface, error: error, host: string(host), port: UInt16(bigEndian: port),
                    txt: bytes))
        }
        var ref: DNSServiceRef?
        let error = DNSServiceResolve(
            &ref, 0, sighting.interface, sighting.instance, ServiceAdvertisement.serviceType, sighting.domain,
            callback, context)
        return (error, ref)
    }

    static func query(
        host: String, type: UInt16, interface: UInt32, context: UnsafeMutableRawPointer
    ) -> (DNSServiceErrorType, DNSServiceRef?) {
        let callback: DNSServiceQueryRecordReply = {
            _, flags, interface, error, _, type, _, length, rdata, _, context in
            let bytes = rdata.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
            deliver(context, .query(flags: flags, interface: interface, error: error, type: type, rdata: bytes))
        }
        var ref: DNSServiceRef?
        let error = DNSServiceQueryRecord(
            &ref, 0, interface, host, type, UInt16(kDNSServiceClass_IN), callback, context)
        return (error, ref)
    }
}
