import HuddleCore

/// `/doctor` at the console or on a paired page: the checks of `huddle doctor`, with this node's
/// own view of its peers, answered on the face that asked.
extension Node {
    /// How long `/doctor` browses for other nodes.
    static let doctorBrowse = Duration.seconds(2)

    /// Starts the checks and answers `face` when they are done (a browse of ``doctorBrowse``,
    /// the firewall's tools as processes); the node runs on meanwhile.
    func runDoctor(answering face: Face) {
        answer(face, info: "checking this computer and the network (\(Self.doctorBrowse.components.seconds) s)…")
        let node = DoctorFacts.Node(status: status())
        Task {
            let facts = await Task.detached {
                await DoctorFacts.gather(node: node, port: node.port, browsing: Self.doctorBrowse)
            }.value
            doctorDone(Diagnosis(facts), answering: face)
        }
    }

    /// The diagnosis on `face`: its text (the console's JSON: one `{"type":"doctor",…}` line; a
    /// page: ``Diagnosis/listText``).
    private func doctorDone(_ diagnosis: Diagnosis, answering face: Face) {
        if face == .console, renderer.isJSON, let json = try? diagnosis.jsonText(type: "doctor") {
            show(json)
        } else if face == .console {
            // Wrapped at words to the terminal it shows on (a pipe: one line a check).
            answer(face, info: diagnosis.text(width: TerminalWidth.ofStandardOutput().map { $0 - 1 }))
        } else {
            answer(face, info: diagnosis.listText)
        }
    }

    /// What in this machine's network keeps friends from finding it, said once at start when
    /// mDNS is on (issue 47): a VPN holding the default route, a container bridge beside the
    /// Wi-Fi, two networks at once; in `huddle doctor`'s words (JSON: `"kind":"network"`).
    func tellOfTheNetwork() {
        let check = Diagnosis.interfaces(
            MachineNetwork.interfaces(), defaultRoute: MachineNetwork.defaultRoute(), chosen: configuration.interface)
        // (No Wi-Fi address at all fails here too: the node says it when nobody is found.)
        guard check.verdict == .warn else { return }
        let words = check.detail + (check.fix.map { ": " + $0 } ?? "")
        if renderer.isJSON {
            show(JSONLine.object([("type", "info"), ("kind", "network"), ("message", .string(words))]).render())
        } else {
            show(renderer.notice(words))
        }
    }

    /// An answer in words on one face: the console, or the paired pages.
    private func answer(_ face: Face, info text: String) {
        switch face {
        case .console: showAtConsole(info: text)
        case .page: web.hub?.publish(Self.pageRenderer.info(text))
        case .control: break  // refused by the machine: `huddle doctor` is that face's
        }
    }
}
