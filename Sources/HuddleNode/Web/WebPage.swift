import HTTPTypes
import Hummingbird
import NIOCore

/// The page's files, embedded in the binary (Package.swift: `.embedInCode`), and how they are
/// served: the same to everyone, since they hold nothing of the node's (all of that comes over
/// the sealed WebSocket, to a paired device only), and with headers that keep other sites out.
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

    /// No script, style or connection from anywhere else (pictures are the page's own `blob:` URLs,
    /// made from bytes that came over its sealed channel); no framing by another site; no
    /// referrer (the pairing secret lives in the fragment, which is never one, but still).
    static let securityHeaders: HTTPFields = [
        .contentSecurityPolicy:
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data: blob:; media-src blob:; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        .xContentTypeOptions: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "no-referrer",
        .cacheControl: "no-store",
    ]

    static func response(_ file: File) -> Response {
        var headers = securityHeaders
        headers[.contentType] = file.contentType
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: file.bytes)))
    }

    static func refuse(status: Int, _ reason: String) -> Response {
        var headers = securityHeaders
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(
            status: HTTPResponse.Status(code: status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: reason + "\n")))
    }
}
