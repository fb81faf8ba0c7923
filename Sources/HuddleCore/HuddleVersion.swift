/// The release of this build, shown by `huddle --version`.
public enum HuddleVersion {
    /// Semantic version of the program.
    public static let release = "0.1.0"
}
