import Foundation
import HuddleCore
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The page a phone opens (docs/WEB.md): the node serves it when asked (`--web`, `/web`), shows
/// the viewer how to pair, and takes what a paired page says as the viewer's own input.
struct WebFace {
    /// The run's web service, where the page's server runs (``WebService``).
    let service: WebService
    /// The page's side of the node, while it is served (from `/web` or `--web`).
    var hub: WebHub?
    /// Where a phone on the network opens the page, once the server listens.
    var address: String?
    /// The port asked for, when the page had to take the next free one instead.
    var wanted: Int?

    init(service: WebService) {
        self.service = service
    }
}

extension Node {
    /// Serves the page (if it is not served yet), then shows a fresh code to pair a phone. A
    /// port in use (`--web-port`, or 7780) is said, and the next free one of the ten after it
    /// taken: `wanted` is the port first asked for.
    func startWeb(port: Int? = nil, wanted: Int? = nil) {
        if let address = web.address {
            showPairing(at: address)
            return
        }
        guard web.hub == nil else { return }  // starting: the codes show once it listens
        let port = port ?? configuration.webPort
        let hub: WebHub
        do {
            hub = try WebHub(writer: writer, logger: logger) { [weak self] input in await self?.webInput(input) }
        } catch {
            showError("cannot serve the page: \(error)")
            return
        }
        let server = WebServer(hub: hub, host: configuration.listenHost, port: port, clock: clock, logger: logger)
        let lanAddress = Self.lanAddress(listeningOn: configuration.listenHost, interface: configuration.interface)
        web.hub = hub
        web.wanted = wanted
        // A page opened mid-game starts with the conversation so far, as /history lists it.
        for output in machine.shownHistory(Self.historyOnOpening) {
            if let line = rendered(output, by: Self.pageRenderer) { hub.publish(line) }
        }
        web.service.serve(
            server, ready: { [weak self] port in await self?.webListening(at: "\(lanAddress):\(port)", hub: hub) },
            failed: { [weak self] error in await self?.webFailed(error, port: port, hub: hub) })
    }

    private func webListening(at address: String, hub: WebHub) {
        guard web.hub === hub else { return }  // stopped meanwhile
        web.address = address
        if let wanted = web.wanted {
            showAtConsole(
                info: "port \(wanted) is in use (another program, or another node on this machine): the page is at "
                    + "\(address) instead; a phone paired with the page on \(wanted) pairs again here "
                    + "(/web port \(wanted) tries that port again)")
        }
        showPairing(at: address)
    }

    /// How many ports after the one asked for the page tries when it is in use.
    static let webPortsTried = 10

    private func webFailed(_ error: any Error, port: Int, hub: WebHub) {
        guard web.hub === hub else { return }  // stopped meanwhile
        let wanted = web.wanted ?? port
        stopWeb()
        let inUse = "\(error)".contains("in use") || "\(error)".contains("EADDRINUSE")
        if inUse, port < wanted + Self.webPortsTried, port < 65_535 {
            return startWeb(port: port + 1, wanted: wanted)
        }
        let reason = inUse
            ? "ports \(wanted) to \(port) are in use (/web port N tries another, or --web-port N at start)" : "\(error)"
        showAtConsole(error: "the page is not served: \(reason)")
    }

    /// Stops serving: every page hears `bye`, and the server finishes what is in flight.
    func stopWeb() {
        guard web.hub != nil else { return }
        web.service.stop()
        web = WebFace(service: web.service)
    }

    /// The QR code, the address and the short code, for the viewer at the terminal only (never
    /// to a page).
    private func showPairing(at address: String) {
        guard let hub = web.hub else { return }
        let offer = hub.offerCodes(now: clock.monotonic())
        let page = "http://\(address)/"
        let link = page + "#pair=" + offer.secret.letters
        let minutes = WebPairing.codeLifetime.milliseconds / 60_000
        if renderer.isJSON {
            show(
                JSONLine.object([
                    ("type", "web"), ("url", .string(page)), ("pair_url", .string(link)), ("code", .string(offer.typed.grouped)),
                    ("expires_in_s", .int(WebPairing.codeLifetime.milliseconds / 1000)),
                ]).render())
            return
        }
        var lines = QRCode(encoding: link)?.terminalLines() ?? []
        lines.append("Scan it with a phone on this Wi-Fi, or open \(page) and type the code \(offer.typed.grouped)")
        lines.append("(good once, for \(minutes) minutes; /web shows a new one, /web devices lists the paired ones)")
        show(lines.joined(separator: "\n"))
    }

    /// `/web`, `/web devices`, `/web revoke NAME`.
    func webCommand(_ command: ConsoleCommand.WebCommand) {
        switch command {
        case .pair:
            startWeb()
        case .port(let port):
            // Serving elsewhere already: stop that first, then serve on the port asked for.
            stopWeb()
            startWeb(port: port)
        case .devices:
            let devices = web.hub?.devices ?? ((try? writer.store.webDevices()) ?? [])
            guard !devices.isEmpty else {
                showAtConsole(info: "no phone is paired: /web shows a code to pair one")
                return
            }
            let lines = ["paired with this node's page:"] + devices.map { "  \($0.name), since \(HumanFormat.clock($0.pairedAt))" }
            showAtConsole(info: lines.joined(separator: "\n"))
        case .revoke(let name):
            if let hub = web.hub {
                if hub.revoke(name: name) != nil {
                    showAtConsole(info: "\(name) is no longer paired: its page is closed, and opens only with a new code")
                } else {
                    showAtConsole(error: "no paired device is called \(name) (/web devices lists them)")
                }
            } else if let device = ((try? writer.store.webDevices()) ?? []).first(where: { $0.name == name }) {
                writer.enqueue([.webDeviceRevoked(id: device.id)])
                showAtConsole(info: "\(name) is no longer paired")
            } else {
                showAtConsole(error: "no paired device is called \(name) (/web devices lists them)")
            }
        }
    }

    /// What a paired page asked for: as if the viewer did it at the console.
    func webInput(_ input: WebInput) async {
        switch input {
        case .line(let text, let at):
            await lineArrived(text, at: at, from: .page)
        case .mark(let label, let at, let linkDelay):
            await feed(.markOffered(label, at: at, from: .page, linkDelay: linkDelay))
        case .pause(let at):
            await feed(.pause(at: at, from: .page))
        case .resume(let at):
            await feed(.resume(at: at, from: .page))
        case .listen(let on, let at):
            await feed(.consoleLine(on ? "/listen" : "/listen off", at: at, from: .page))
        case .passphrase(let passphrase):
            // Answered on the page: the console's hidden prompt for it comes down.
            if machine.passphraseWanted != nil { console?.withdrawSecret() }
            await passphraseEntered(passphrase)
        case .paired(let name):
            // The page hears it in its own words: unpairing is the console's.
            showAtConsole(info: "\(name) is paired: it shows this node's rooms (/web revoke \(name) unpairs it)")
            web.hub?.publish(Self.pageRenderer.info("\(name) is paired: it shows this node's rooms, held back as the node shows them"))
        case .codeWornOut:
            showAtConsole(
                error: "the typed code was guessed wrong \(WebPairing.wrongGuessesPerCode) times (someone on the network is "
                    + "trying codes): it no longer pairs; the QR code still does, and /web shows a new code")
        case .opened:
            refreshPages(force: true)
        case .photo(let bytes, let caption):
            await feed(.pictureOffered(.bytes(bytes), caption: caption, from: .page))
        case .picture(let root, let session):
            if let frame = pictureFrame(root: root) {
                web.hub?.send(bytes: frame, to: session)
            } else {
                web.hub?.send(ToPage.pictureMissing(root: root).json, to: session)
            }
        case .photoRefused(let why, let session):
            web.hub?.send(Self.pageRenderer.error("picture not sent: \(why.words)"), to: session)
        }
    }

    /// A picture this node has shown, for a page (docs/WEB.md, "Pictures"): `0x00`, the root's 32
    /// bytes, the type's byte (a still's or a clip's), then the file, sealed as one frame. `nil` when its file is not on
    /// disk: it is written only from its message's moment on.
    func pictureFrame(root: String) -> [UInt8]? {
        guard root.count == 64, let rootBytes = PictureStore.bytes(hex: root) else { return nil }
        for type in MediaType.allCases {
            let path = "\(pictures.directory)/\(root).\(type.fileExtension)"
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            return [0] + rootBytes + [type.rawValue] + Array(data)
        }
        return nil
    }

    /// A message's picture goes to open pages right after its line, so the page draws it without
    /// asking (a late joiner's block is not pushed: its page asks for what it draws).
    func pushPictures(of output: NodeOutput) {
        guard let hub = web.hub else { return }
        switch output {
        case .room(.message(let message), _) where !message.pictureMissing && !message.pictureUnreadable,
            .room(.pictureArrived(let message), _) where !message.pictureUnreadable:
            if let picture = message.picture, let frame = pictureFrame(root: picture.rootHex) { hub.broadcast(bytes: frame) }
        default: break
        }
    }

    /// How many of the current room's messages a page served mid-game starts with.
    static let historyOnOpening = 50

    /// Lines to pages: JSON, as `huddle run --json` writes them.
    static let pageRenderer = JSONRenderer()

    /// Tells open pages the view, if it changed (or always, with `force`, for a page that just opened).
    func refreshPages(force: Bool = false) {
        guard let hub = web.hub, force || hub.isWatched else { return }
        hub.update(view: ToPage.view(machine.consoleView(now: now), nick: configuration.nick, listening: listening.session != nil).json)
    }

    /// The address a phone on the network reaches this machine at: the one the node listens on,
    /// or this machine's Wi-Fi or Ethernet address (``MachineNetwork/preferredAddress(in:defaultRoute:chosen:)``:
    /// `--interface`'s first). Before, the first interface's: a VPN's or Docker's put an address
    /// no phone reaches in the QR code.
    nonisolated static func lanAddress(listeningOn host: String, interface: String?) -> String {
        if host != "0.0.0.0", !host.isEmpty { return host }
        return MachineNetwork.preferredAddress(
            in: MachineNetwork.interfaces(), defaultRoute: MachineNetwork.defaultRoute(), chosen: interface) ?? "127.0.0.1"
    }
}
