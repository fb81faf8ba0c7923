/// Where `key` is a key of a dictionary or a member of a set, anywhere in `value`, walked by
/// reflection (so a map added later is walked too): the paths to it, e.g. `peers.entries[…]`.
/// For tests that show a departed peer or a forgotten room leaves nothing behind.
func places<Key: Hashable>(of key: Key, in value: Any, path: String = "") -> [String] {
    let mirror = Mirror(reflecting: value)
    var found: [String] = []
    switch mirror.displayStyle {
    case .dictionary:
        for child in mirror.children {
            let pair = Mirror(reflecting: child.value).children.map(\.value)
            guard pair.count == 2 else { continue }
            if (pair[0] as? Key) == key { found.append("\(path)[…]") }
            found += places(of: key, in: pair[1], path: "\(path)[…]")
        }
    case .set:
        if mirror.children.contains(where: { ($0.value as? Key) == key }) { found.append("\(path) ∋ …") }
    default:
        for child in mirror.children {
            let label = child.label.map { path.isEmpty ? $0 : "\(path).\($0)" } ?? path
            found += places(of: key, in: child.value, path: label)
        }
    }
    return found
}
