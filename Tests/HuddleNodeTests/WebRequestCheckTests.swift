import NIOHTTP1
import Testing

@testable import HuddleNode

@Suite struct WebRequestCheckTests {
    let names: Set<String> = ["livingroom", "livingroom.local"]

    @Test(arguments: [
        "192.168.1.20:7780", "192.168.1.20", "127.0.0.1:7780", "localhost:7780", "LOCALHOST", "[fe80::1]:7780", "[::1]",
        "livingroom.local:7780", "LivingRoom",
    ])
    func theMachinesOwnAddressesAndNamesAreLetIn(host: String) {
        #expect(WebRequestCheck.refusal(host: host, origin: nil, isWebSocket: false, names: names) == nil)
    }

    @Test(arguments: [
        "evil.example", "evil.example:7780", "192.168.1.20.nip.io", "1.2.3.4.evil.example", "192.168.1.256", "192.168.1",
        "localhost.evil.example", "127.0.0.1:", "127.0.0.1:80:80", "127.0.0.1:http", "[::1", "[::1]x", "",
    ])
    func aNameSomeoneElsesDNSAnswersIsRefused(host: String) {
        let refusal = WebRequestCheck.refusal(host: host, origin: nil, isWebSocket: false, names: names)
        #expect(refusal == .host(host))
        #expect(refusal?.status == 421)
    }

    @Test func noHostIsRefused() {
        #expect(WebRequestCheck.refusal(host: nil, origin: nil, isWebSocket: false, names: names) == .host(nil))
    }

    @Test func aWebSocketMustComeFromThePageItself() {
        let host = "192.168.1.20:7780"
        #expect(WebRequestCheck.refusal(host: host, origin: "http://192.168.1.20:7780", isWebSocket: true, names: names) == nil)
        for origin in ["http://evil.example", "null", "https://192.168.1.20:7780", "http://192.168.1.20", "http://192.168.1.20:7781"] {
            #expect(WebRequestCheck.refusal(host: host, origin: origin, isWebSocket: true, names: names) == .origin(origin))
        }
        #expect(WebRequestCheck.refusal(host: host, origin: nil, isWebSocket: true, names: names)?.status == 403)
    }

    @Test func twoHostsAreABadRequestWhicheverIsTheMachines() {
        for (first, second) in [("127.0.0.1:7780", "evil.example"), ("evil.example", "127.0.0.1:7780")] {
            let refusal = WebRequestCheck.refusal(host: first, secondHost: second, origin: nil, isWebSocket: false, names: names)
            #expect(refusal == .twoHosts && refusal?.status == 400)
        }
    }

    @Test func aRequestsHeadIsCheckedByItsHostsAndAWebSocketsOrigin() {
        func head(_ fields: [(String, String)]) -> HTTPRequestHead {
            HTTPRequestHead(version: .http1_1, method: .GET, uri: "/ws", headers: HTTPHeaders(fields))
        }
        let host = ("Host", "192.168.1.20:7780")
        #expect(WebRequestCheck.refusal(of: head([host]), isWebSocket: false, names: names) == nil)
        #expect(WebRequestCheck.refusal(of: head([host, ("Host", "evil.example")]), isWebSocket: false, names: names) == .twoHosts)
        #expect(WebRequestCheck.refusal(of: head([host]), isWebSocket: true, names: names) == .origin(nil))
        #expect(
            WebRequestCheck.refusal(of: head([host, ("Origin", "http://192.168.1.20:7780")]), isWebSocket: true, names: names)
                == nil)
    }
}
