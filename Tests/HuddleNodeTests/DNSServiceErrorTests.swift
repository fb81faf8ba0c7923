import Testing

@testable import HuddleNode

@Suite struct DNSServiceErrorTests {
    /// -65563 is kDNSServiceErr_ServiceNotRunning in every dns_sd.h (Bonjour's and Avahi's).
    @Test func missingDaemonTellsHowToStartIt() {
        let error = DNSServiceError(code: -65563)
        #expect(error.isDaemonMissing)
        #expect(error.description.contains("avahi-daemon"))
    }

    @Test func otherCodesAreNotAMissingDaemon() {
        let conflict = DNSServiceError(code: -65548)
        #expect(!conflict.isDaemonMissing)
        #expect(conflict.description.contains("already taken"))
        #expect(DNSServiceError(code: -1).description == "dns_sd error -1")
    }
}
