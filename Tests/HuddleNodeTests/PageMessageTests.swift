import HuddleCore
import Testing

@testable import HuddleNode

/// The page's messages as docs/WEB.md writes them: each one a page sends decodes to its case
/// (a field left out is `nil`, a newer page's type is `unknown`), and each the node sends
/// encodes to what the page reads.
@Suite struct PageMessageTests {
    func decoded(_ json: String) -> FromPage? { FromPage(json: Array(json.utf8)) }

    @Test func whatAPageSaysDecodesToItsCase() {
        #expect(decoded(#"{"t":"pair","code":"typed","sid":"c2lk","pub":"cHVi","name":"phone"}"#)
            == .pair(code: "typed", sid: "c2lk", pub: "cHVi", name: "phone"))
        #expect(decoded(#"{"t":"pair","code":"qr"}"#) == .pair(code: "qr", sid: nil, pub: nil, name: nil))
        #expect(decoded(#"{"t":"proof","tag":"dGFn"}"#) == .proof(tag: "dGFn"))
        #expect(decoded(#"{"t":"hello","device":"00ff"}"#) == .hello(device: "00ff"))
        #expect(decoded(#"{"t":"open","since":41}"#) == .open(since: 41))
        #expect(decoded(#"{"t":"line","text":"touchdown!"}"#) == .line("touchdown!"))
        #expect(decoded(#"{"t":"now"}"#) == .now(label: nil))
        #expect(decoded(#"{"t":"now","label":"kickoff"}"#) == .now(label: "kickoff"))
        #expect(decoded(#"{"t":"pause"}"#) == .pause)
        #expect(decoded(#"{"t":"resume"}"#) == .resume)
        #expect(decoded(#"{"t":"listen","on":false}"#) == .listen(on: false))
        #expect(decoded(#"{"t":"passphrase","text":null}"#) == .passphrase(nil))
        #expect(decoded(#"{"t":"ping","id":7}"#) == .ping(id: 7))
        #expect(decoded(#"{"t":"pong","id":7}"#) == .pong(id: 7))
        #expect(decoded(#"{"t":"photo_part","n":0,"data":"AAEC"}"#) == .photoPart(n: 0, data: "AAEC"))
        #expect(decoded(#"{"t":"photo","parts":3,"caption":"the TV"}"#) == .photo(parts: 3, caption: "the TV"))
        #expect(decoded(#"{"t":"get_picture","root":"ab"}"#) == .getPicture(root: "ab"))
        #expect(decoded(#"{"t":"confetti","colour":"green"}"#) == .unknown("confetti"))
    }

    @Test func whatIsNoMessageIsNil() {
        #expect(decoded(#"{"text":"no type"}"#) == nil)
        #expect(decoded(#"{"t":"ping","id":"seven"}"#) == nil, "a field of the wrong type")
        #expect(decoded("not json") == nil)
        #expect(decoded(#"["t","ping"]"#) == nil)
    }

    @Test func whatTheNodeSaysEncodesAsThePageReadsIt() {
        #expect(ToPage.pair(pub: [1, 2, 3]).json == #"{"t":"pair","pub":"AQID"}"#)
        #expect(ToPage.paired(device: "00ff", name: "phone", tag: [0xFF]).json
            == #"{"t":"paired","device":"00ff","name":"phone","tag":"_w"}"#)
        #expect(ToPage.error("wrong or expired code").json == #"{"t":"error","message":"wrong or expired code"}"#)
        #expect(ToPage.unpaired.json == #"{"t":"unpaired"}"#)
        #expect(ToPage.challenge(nonce: [0, 0, 0]).json == #"{"t":"challenge","nonce":"AAAA"}"#)
        #expect(ToPage.line(seq: 3, json: #"{"type":"info","message":"hi"}"#).json
            == #"{"t":"line","seq":3,"line":{"type":"info","message":"hi"}}"#)
        #expect(ToPage.askPassphrase(room: "poker").json == #"{"t":"ask_passphrase","room":"poker"}"#)
        #expect(ToPage.ping(id: 5).json == #"{"t":"ping","id":5}"#)
        #expect(ToPage.pong(id: 5).json == #"{"t":"pong","id":5}"#)
        #expect(ToPage.bye(reason: "revoked").json == #"{"t":"bye","reason":"revoked"}"#)
        #expect(ToPage.pictureMissing(root: "ab").json == #"{"t":"picture","root":"ab","missing":true}"#)
    }
}
