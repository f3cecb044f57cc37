/// The tests of the integrations (`@Default`, key groups, snapshots, launch arguments), grouped so
/// that `swift test --filter Integrations` runs them all.
enum Integrations {}
