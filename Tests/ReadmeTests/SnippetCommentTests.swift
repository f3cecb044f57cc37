import Testing

/// How blocks are read from markdown and made into programs: names, `after`, and what is refused.
@Suite("Snippet comments")
struct SnippetCommentTests {
    static let file = "Sources/Defaults/Defaults.docc/Example.md"

    static let article = """
        # Example

        <!-- snippet: keys -->
        ```swift
        let a = 1
        ```

        ```sh
        # not a heading
        ```

        <!-- snippet: after keys -->
        ```swift
        print(a)
        ```
        """

    @Test func aBlockComesAfterTheBlockItNames() throws {
        let found = ReadmeSnippet.all(in: Self.article, file: Self.file)
        #expect(found.problems == [])
        #expect(found.snippets.map(\.line) == [5, 14])
        #expect(found.snippets.map(\.name) == ["keys", nil])
        #expect(found.snippets.map(\.after) == [nil, "keys"])
        #expect(found.snippets[1].testDescription == "\(Self.file):14 (Example)")
        let program = try found.snippets[1].program(among: found.snippets)
        #expect(
            program == """
                import Defaults
                #sourceLocation(file: "\(Self.file)", line: 5)
                let a = 1
                #sourceLocation(file: "\(Self.file)", line: 14)
                print(a)
                #sourceLocation()

                """)
    }

    @Test func theReadmeImportsNothingItDoesNotSay() throws {
        let found = ReadmeSnippet.all(in: "# Use\n\n```swift\nimport Defaults\n```\n")
        #expect(found.snippets.first?.catalogModule == nil)
        #expect(try found.snippets.first?.program(among: found.snippets).hasPrefix("#sourceLocation") == true)
    }

    @Test(arguments: [
        "<!-- snippet: keys -->\n\nA paragraph.\n",
        "<!-- snippet: keys -->\n```sh\nls\n```\n",
        "<!-- snippet: keys -->\n",
        "<!-- snippet: two words -->\n```swift\nlet a = 1\n```\n",
        "<!-- snippet: keys -->\n<!-- snippet: more -->\n```swift\nlet a = 1\n```\n",
        "```swift\nlet a = 1\n",
    ])
    func aCommentOrBlockNotUnderstoodIsAProblem(_ text: String) {
        #expect(ReadmeSnippet.all(in: text, file: Self.file).problems.count == 1)
    }

    @Test(arguments: [
        "<!-- snippet: after nothing -->\n```swift\nlet a = 1\n```\n",
        "<!-- snippet: a -->\n<!-- snippet: after b -->\n```swift\n```\n"
            + "<!-- snippet: b -->\n<!-- snippet: after a -->\n```swift\n```\n",
        "<!-- snippet: a -->\n```swift\n```\n<!-- snippet: a -->\n```swift\n```\n"
            + "<!-- snippet: after a -->\n```swift\n```\n",
    ])
    func anAfterNamingNoOneBlockOrACycleIsRefused(_ text: String) {
        let found = ReadmeSnippet.all(in: text, file: Self.file)
        #expect(found.problems == [])
        let last = found.snippets[found.snippets.count - 1]
        #expect(throws: SnippetProblem.self) { try last.program(among: found.snippets) }
    }
}
