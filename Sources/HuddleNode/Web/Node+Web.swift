import HuddleCore
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The page a phone opens (docs/WEB.md): the node serves it when asked (`--web`, `/web`), shows
/// the viewer how to pair, and takes what a paired page says as the viewer's own input.
struct WebFace {
    let hub: WebHub
    /// The server's task, and its service group to stop it gracefully; `nil` once it stopped.
    var server: Task<Void, Never>?
    var group: ServiceGroup?
    /// Where a phone on the network opens the page, once the server listens.
    var address: String?
}

extension Node {
    /// Serves the page (if it is not served yet), then shows a fresh code to pair a phone.
    func startWeb() {
        if let address = web?.address {
            showPairing(at: address)
            return
        }
        guard web == nil else { return }  // starting: the codes show once it listens
        let hub: WebHub
        do {
            hub = try WebHub(store: store, logger: logger) { [weak self] input in await self?.webInput(input) }
        } catch {
            showError("cannot serve the page: \(error)")
            return
        }
        let server = WebServer(hub: hub, host: configuration.listenHost, port: configuration.webPort, clock: clock, logger: logger)
        let lanAddress = Self.lanAddress(listeningOn: configuration.listenHost)
        let group = server.serviceGroup { port in await self.webListening(at: "\(lanAddress):\(port)") }
        web = WebFace(hub: hub, group: group)
        // A page opened mid-game starts with the conversation so far, as /history lists it.
        for output in machine.shownHistory(Self.historyOnOpening) {
            if let line = rendered(output, by: Self.pageRenderer) { hub.publish(line) }
        }
        web?.server = Task {
            do {
                try await group.run()
            } catch {
                self.webFailed(error, port: self.configuration.webPort)
            }
        }
    }

    private func webListening(at address: String) {
        web?.address = address
        showPairing(at: address)
    }

    private func webFailed(_ error: any Error, port: Int) {
        guard web?.server != nil, !Task.isCancelled else { return }
        web = nil
        let reason = "\(error)".contains("in use") || "\(error)".contains("EADDRINUSE")
            ? "port \(port) is in use (choose another with --web-port)" : "\(error)"
        showError("the page is not served: \(reason)")
    }

    /// Stops serving: every page hears `bye`, and the server finishes what is in flight.
    func stopWeb() {
        guard let group = web?.group else { return }
        web?.hub.stop()
        web?.server = nil
        web?.group = nil
        Task { await group.triggerGracefulShutdown() }
    }

    /// The QR code, the address and the short code, for the viewer at the terminal only (never
    /// to a page).
    private func showPairing(at address: String) {
        guard let hub = web?.hub else { return }
        let offer = hub.offerCodes(now: clock.monotonic())
        let page = "http://\(address)/"
        let link = page + "#pair=" + offer.secret.letters
        let minutes = WebPairing.codeLifetime.milliseconds / 60_000
        if renderer.json {
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
        case .devices:
            let devices = web?.hub.devices ?? ((try? store.webDevices()) ?? [])
            guard !devices.isEmpty else {
                showInfo("no phone is paired: /web shows a code to pair one")
                return
            }
            showInfo(
                (["paired with this node's page:"]
                    + devices.map { "  \($0.name), since \(HumanFormat.clock($0.pairedAt))" }).joined(separator: "\n"))
        case .revoke(let name):
            if let hub = web?.hub {
                if hub.revoke(name: name) != nil {
                    showInfo("\(name) is no longer paired: its page is closed, and opens only with a new code")
                } else {
                    showError("no paired device is called \(name) (/web devices lists them)")
                }
            } else if let device = ((try? store.webDevices()) ?? []).first(where: { $0.name == name }) {
                try? store.deleteWebDevice(id: device.id)
                showInfo("\(name) is no longer paired")
            } else {
                showError("no paired device is called \(name) (/web devices lists them)")
            }
        }
    }

    /// What a paired page asked for: as if the viewer did it at the console.
    func webInput(_ input: WebInput) async {
        switch input {
        case .line(let text, let at):
            if case .quit? = try? ConsoleCommand(parsing: text) {
                web?.hub.publish(Self.pageRenderer.error("/quit stops the node from its console, not from a phone"))
                return
            }
            await lineArrived(text, at: at, fromPage: true)
        case .mark(let label, let at):
            // A tap on Now without a label marks the moment on offer, as Enter does at the console.
            await feed(.markOffered(label ?? machine.consoleView(now: now).offer?.label.normalized, at: at))
        case .pause(let at):
            await feed(.pause(at: at))
        case .resume(let at):
            await feed(.resume(at: at))
        case .listen(let on, let at):
            await feed(.consoleLine(on ? "/listen" : "/listen off", at: at))
        case .passphrase(let passphrase):
            // Answered on the page: the console's hidden prompt for it comes down.
            if machine.passphraseWanted != nil { console?.withdrawSecret() }
            await passphraseEntered(passphrase)
        case .paired(let name):
            showInfo("\(name) is paired: it shows this node's rooms (/web revoke \(name) unpairs it)")
        case .opened:
            refreshPages(force: true)
        }
    }

    /// How many of the current room's messages a page served mid-game starts with.
    static let historyOnOpening = 50

    /// Lines to pages: JSON, as `huddle run --json` writes them.
    static let pageRenderer = OutputRenderer(json: true, colors: false)

    /// Tells open pages the view, if it changed (or always, with `force`, for a page that just opened).
    func refreshPages(force: Bool = false) {
        guard let hub = web?.hub, force || hub.isWatched else { return }
        hub.update(view: WebView.json(machine.consoleView(now: now), nick: configuration.nick, listening: listening != nil))
    }

    /// The address a phone on the network reaches this machine at: the one the node listens on,
    /// or the first IPv4 address of an interface that is up and not loopback.
    nonisolated static func lanAddress(listeningOn host: String) -> String {
        if host != "0.0.0.0", !host.isEmpty { return host }
        let devices = (try? System.enumerateDevices()) ?? []
        for device in devices {
            guard case .v4 = device.address, let ip = device.address?.ipAddress, !ip.hasPrefix("127.") else { continue }
            return ip
        }
        return "127.0.0.1"
    }
}
