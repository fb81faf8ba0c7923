#if os(Linux)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HuddleCore

/// Decodes a picture to RGBA pixels for a console preview, with the maintained libraries every
/// desktop has, loaded when the first preview is drawn (as listening loads libpulse): libjpeg-turbo
/// (`libturbojpeg.so.0`), libspng (`libspng.so.0`), libwebp (`libwebp.so.7`). A node that never
/// draws a preview maps none of them.
///
/// Never a picture over its limit: the header is read first (``PictureFile/header(of:)``), a JPEG
/// is decoded scaled down (libjpeg-turbo's IDCT scaling: 1/8 of 4000 × 3000 is 500 × 375), and a
/// PNG or WebP over ``maxFullDecodePixels`` is not decoded at all (its preview is not drawn).
///
/// ```swift
/// let image = try PictureDecoder.shared().rgba(bytes, type: .jpeg, fitting: 320)
/// ```
struct PictureDecoder: @unchecked Sendable {
    // @unchecked: function pointers into libraries that stay loaded for the life of the process.
    struct Image {
        var width: Int
        var height: Int
        /// `width × height × 4` bytes, RGBA, rows top to bottom.
        var pixels: [UInt8]
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Most pixels a PNG or WebP is decoded at for a preview (12 megapixels: a phone's photo).
    static let maxFullDecodePixels = 12_000_000

    typealias TJInit = @convention(c) () -> OpaquePointer?
    typealias TJHeader = @convention(c) (
        OpaquePointer?, UnsafePointer<UInt8>?, UInt, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?,
        UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?
    ) -> Int32
    typealias TJDecompress = @convention(c) (
        OpaquePointer?, UnsafePointer<UInt8>?, UInt, UnsafeMutablePointer<UInt8>?, Int32, Int32, Int32, Int32, Int32
    ) -> Int32
    typealias TJDestroy = @convention(c) (OpaquePointer?) -> Int32
    typealias SpngNew = @convention(c) (Int32) -> OpaquePointer?
    typealias SpngFree = @convention(c) (OpaquePointer?) -> Void
    typealias SpngBuffer = @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int) -> Int32
    typealias SpngLimits = @convention(c) (OpaquePointer?, UInt32, UInt32) -> Int32
    typealias SpngSize = @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<Int>?) -> Int32
    typealias SpngDecode = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int, Int32, Int32) -> Int32
    typealias WebPDecode = @convention(c) (
        UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?
    ) -> UnsafeMutablePointer<UInt8>?
    typealias WebPFree = @convention(c) (UnsafeMutableRawPointer?) -> Void

    // TJPF_RGBA; SPNG_FMT_RGBA8; SPNG_DECODE_TRNS.
    static let tjRGBA: Int32 = 7
    static let spngRGBA8: Int32 = 1
    static let spngTransparency: Int32 = 1

    var jpeg: (initialize: TJInit, header: TJHeader, decompress: TJDecompress, destroy: TJDestroy)?
    var png: (new: SpngNew, free: SpngFree, buffer: SpngBuffer, limits: SpngLimits, size: SpngSize, decode: SpngDecode)?
    var webp: (decode: WebPDecode, free: WebPFree)?

    static func shared() -> PictureDecoder { loaded }
    private static let loaded = load()

    private static func load() -> PictureDecoder {
        func open(_ names: [String]) -> UnsafeMutableRawPointer? {
            names.lazy.compactMap { dlopen($0, RTLD_NOW | RTLD_LOCAL) }.first
        }
        func symbol<Function>(_ handle: UnsafeMutableRawPointer, _ name: String, as _: Function.Type) -> Function? {
            dlsym(handle, name).map { unsafeBitCast($0, to: Function.self) }
        }
        var decoder = PictureDecoder()
        if let h = open(["libturbojpeg.so.0", "libturbojpeg.so", "libturbojpeg.dylib"]),
            let i = symbol(h, "tjInitDecompress", as: TJInit.self), let hd = symbol(h, "tjDecompressHeader3", as: TJHeader.self),
            let d = symbol(h, "tjDecompress2", as: TJDecompress.self), let x = symbol(h, "tjDestroy", as: TJDestroy.self)
        {
            decoder.jpeg = (i, hd, d, x)
        }
        if let h = open(["libspng.so.0", "libspng.so", "libspng.dylib"]),
            let n = symbol(h, "spng_ctx_new", as: SpngNew.self), let f = symbol(h, "spng_ctx_free", as: SpngFree.self),
            let b = symbol(h, "spng_set_png_buffer", as: SpngBuffer.self),
            let l = symbol(h, "spng_set_image_limits", as: SpngLimits.self),
            let s = symbol(h, "spng_decoded_image_size", as: SpngSize.self),
            let d = symbol(h, "spng_decode_image", as: SpngDecode.self)
        {
            decoder.png = (n, f, b, l, s, d)
        }
        if let h = open(["libwebp.so.7", "libwebp.so", "libwebp.dylib"]),
            let d = symbol(h, "WebPDecodeRGBA", as: WebPDecode.self), let f = symbol(h, "WebPFree", as: WebPFree.self)
        {
            decoder.webp = (d, f)
        }
        return decoder
    }

    /// The Debian package that brings a type's decoder, for a line saying why there is no preview.
    static func package(for type: PictureType) -> String {
        switch type {
        case .jpeg: "libturbojpeg0"
        case .png: "libspng0"
        case .webp: "libwebp7"
        }
    }

    /// The picture's pixels, a JPEG scaled down to the smallest size of at least `fitting` pixels
    /// on its long edge that libjpeg-turbo decodes to.
    func rgba(_ bytes: [UInt8], fitting edge: Int) throws(Failure) -> Image {
        let header: PictureHeader
        do { header = try PictureFile.header(of: bytes) } catch { throw Failure(description: error.description) }
        switch header.type {
        case .jpeg:
            guard let jpeg else { throw Failure(description: "no JPEG decoder (\(Self.package(for: .jpeg)))") }
            return try decodeJPEG(bytes, header: header, edge: edge, with: jpeg)
        case .png:
            guard let png else { throw Failure(description: "no PNG decoder (\(Self.package(for: .png)))") }
            guard header.width * header.height <= Self.maxFullDecodePixels else { throw Failure(description: "too large to preview") }
            return try decodePNG(bytes, header: header, with: png)
        case .webp:
            guard let webp else { throw Failure(description: "no WebP decoder (\(Self.package(for: .webp)))") }
            guard header.width * header.height <= Self.maxFullDecodePixels else { throw Failure(description: "too large to preview") }
            return try decodeWebP(bytes, with: webp)
        }
    }

    private func decodeJPEG(
        _ bytes: [UInt8], header: PictureHeader, edge: Int,
        with jpeg: (initialize: TJInit, header: TJHeader, decompress: TJDecompress, destroy: TJDestroy)
    ) throws(Failure) -> Image {
        guard let handle = jpeg.initialize() else { throw Failure(description: "libjpeg-turbo did not start") }
        defer { _ = jpeg.destroy(handle) }
        // The largest of libjpeg-turbo's scales (1/8 … 1) that is still at least `edge` long.
        let long = max(header.width, header.height)
        var eighths = 8
        while eighths > 1, (long * (eighths - 1) + 7) / 8 >= edge { eighths -= 1 }
        let width = (header.width * eighths + 7) / 8
        let height = (header.height * eighths + 7) / 8
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        let result = bytes.withUnsafeBufferPointer { source in
            pixels.withUnsafeMutableBufferPointer { target in
                jpeg.decompress(
                    handle, source.baseAddress, UInt(source.count), target.baseAddress, Int32(width), 0, Int32(height),
                    Self.tjRGBA, 0)
            }
        }
        guard result == 0 else { throw Failure(description: "libjpeg-turbo could not decode it") }
        return Image(width: width, height: height, pixels: pixels)
    }

    private func decodePNG(
        _ bytes: [UInt8], header: PictureHeader,
        with png: (new: SpngNew, free: SpngFree, buffer: SpngBuffer, limits: SpngLimits, size: SpngSize, decode: SpngDecode)
    ) throws(Failure) -> Image {
        guard let context = png.new(0) else { throw Failure(description: "libspng did not start") }
        defer { png.free(context) }
        let length = header.width * header.height * 4
        var pixels = [UInt8](repeating: 0, count: length)
        // libspng reads from the buffer it is given until the decode ends: all of it in one scope.
        let result: Int32 = bytes.withUnsafeBytes { source in
            var size = 0
            guard png.buffer(context, source.baseAddress, source.count) == 0,
                png.limits(context, UInt32(header.width), UInt32(header.height)) == 0,
                png.size(context, Self.spngRGBA8, &size) == 0, size == length
            else { return -1 }
            return pixels.withUnsafeMutableBytes { png.decode(context, $0.baseAddress, length, Self.spngRGBA8, Self.spngTransparency) }
        }
        guard result == 0 else { throw Failure(description: "libspng could not decode it") }
        return Image(width: header.width, height: header.height, pixels: pixels)
    }

    private func decodeWebP(_ bytes: [UInt8], with webp: (decode: WebPDecode, free: WebPFree)) throws(Failure) -> Image {
        var width: Int32 = 0
        var height: Int32 = 0
        guard let output = bytes.withUnsafeBufferPointer({ webp.decode($0.baseAddress, $0.count, &width, &height) }) else {
            throw Failure(description: "libwebp could not decode it")
        }
        defer { webp.free(output) }
        let count = Int(width) * Int(height) * 4
        return Image(width: Int(width), height: Int(height), pixels: Array(UnsafeBufferPointer(start: output, count: count)))
    }
}
