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
            await doctorDone(Diagnosis(facts), answering: face)
        }
    }

    /// The diagnosis on `face`: its text (the console's JSON: one `{"type":"doctor",…}` line).
    private func doctorDone(_ diagnosis: Diagnosis, answering face: Face) {
        if face == .console, renderer.json, let json = try? diagnosis.jsonText(type: "doctor") {
            show(json)
        } else {
            answer(face, info: diagnosis.text)
        }
    }

    /// An answer in words on one face: the console, or the paired pages.
    private func answer(_ face: Face, info text: String) {
        switch face {
        case .console: showAtConsole(info: text)
        case .page: web?.hub.publish(Self.pageRenderer.info(text))
        case .control: break  // refused by the machine: `huddle doctor` is that face's
        }
    }
}
