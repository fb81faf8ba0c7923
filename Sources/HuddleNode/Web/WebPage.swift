import NIOCore
import NIOHTTP1

/// The page's files, embedded in the binary (Package.swift: `.embedInCode`), and every answer the
/// page's server gives over plain HTTP: the same to everyone, since the files hold nothing of the
/// node's (all of that comes over the sealed WebSocket, to a paired device only), and with headers
/// that keep other sites out.
enum WebPage {
    struct File: Sendable {
        let path: String
        let contentType: String
        let bytes: [UInt8]
    }

    static let files = [
        File(path: "/", contentType: "text/html; charset=utf-8", bytes: PackageResources.index_html),
        File(path: "/style.css", contentType: "text/css; charset=utf-8", bytes: PackageResources.style_css),
        File(path: "/app.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.app_js),
        File(path: "/crypto.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.crypto_js),
    ]

    /// Where the page opens its WebSocket (``WebConnection``).
    static let webSocketPath = "/ws"

    /// No script, style or connection from anywhere else (pictures are the page's own `blob:` URLs,
    /// made from bytes that came over its sealed channel); no framing by another site; no
    /// referrer (the pairing secret lives in the fragment, which is never one, but still).
    static let securityHeaders = [
        ("Content-Security-Policy",
         "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data: blob:; media-src blob:; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-store"),
    ]

    /// One answer: its status, its `Content-Type` and its bytes.
    struct Answer: Equatable, Sendable {
        var status: Int
        var contentType: String
        var body: [UInt8]

        static func refusal(_ status: Int, _ reason: String) -> Answer {
            Answer(status: status, contentType: "text/plain; charset=utf-8", body: Array((reason + "\n").utf8))
        }

        /// The head to send, with the security headers, the length, and whether the connection
        /// stays open for another request.
        func head(version: HTTPVersion, keepAlive: Bool) -> HTTPResponseHead {
            var headers = HTTPHeaders(WebPage.securityHeaders)
            if status != 204 {  // "No Content" has neither
                headers.add(name: "Content-Type", value: contentType)
                headers.add(name: "Content-Length", value: String(body.count))
            }
            if !keepAlive { headers.add(name: "Connection", value: "close") }
            return HTTPResponseHead(version: version, status: HTTPResponseStatus(statusCode: status), headers: headers)
        }
    }

    /// The answer to a request that is no WebSocket upgrade (a refused upgrade is answered by
    /// ``AnswerRefusedUpgrades``): first whether its Host is this machine (``WebRequestCheck``),
    /// then its method, then its path (a query is ignored).
    /// `names`: the machine's own host names (``WebRequestCheck/refusal(host:secondHost:origin:isWebSocket:names:)``).
    static func answer(to request: HTTPRequestHead, names: Set<String>) -> Answer {
        let path = request.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        if let refusal = WebRequestCheck.refusal(of: request, isWebSocket: false, names: names) {
            return .refusal(refusal.status, refusal.reason)
        }
        guard request.method == .GET else { return .refusal(405, "the page's server answers GET only") }
        if let file = files.first(where: { $0.path == path }) {
            return Answer(status: 200, contentType: file.contentType, body: file.bytes)
        }
        switch path {
        case "/favicon.ico": return Answer(status: 204, contentType: "text/plain; charset=utf-8", body: [])  // browsers ask
        case webSocketPath: return .refusal(400, "this is the page's WebSocket: open / instead")
        default: return .refusal(404, "not found: the page is at /")
        }
    }
}
