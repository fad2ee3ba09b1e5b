import XCTest
@testable import FleetTrustCore

/// Which files of an inventory directory, and which `group_vars/`/`host_vars/` files, are read:
/// Ansible's selection rules, on real directories.
final class InventoryDirectoryTests: XCTestCase {
    private var trees: [InventoryTree] = []

    override func tearDown() {
        trees.forEach { $0.remove() }
    }

    private func tree(_ files: [String: String] = [:], executables: [String: String] = [:]) throws -> InventoryTree {
        let made = try InventoryTree(files, executables: executables)
        trees.append(made)
        return made
    }

    func testAnsiblesIgnoreRulesSkipHiddenVarsDirectoriesAndIgnoredEndings() {
        for name in [".hidden", ".git", "group_vars", "host_vars", "vars_plugins", "site.retry", "inv.pyc", "inv.pyo",
                     "ansible.cfg", "hosts~", "hosts.bak", "hosts.swp", "README.md", "notes.txt", "doc.rst", "hosts.orig",
                     "pkg.rpm"] {
            XCTAssertTrue(AnsibleInventoryDirectory.isIgnored(name), name)
        }
        for name in ["hosts", "hosts.ini", "prod.yml", "prod.yaml", "cloud.json", "ec2.py", "retry", "txt", "group_vars.yml",
                     "hosts.cfg.d", "hosts.txt.ini", "inventory_cfg"] {
            XCTAssertFalse(AnsibleInventoryDirectory.isIgnored(name), name)
        }
    }

    func testPythonExtensionIgnoresLeadingDots() {
        XCTAssertEqual(AnsibleInventoryDirectory.pythonExtension("web.yml"), ".yml")
        XCTAssertEqual(AnsibleInventoryDirectory.pythonExtension("a.b.json"), ".json")
        XCTAssertEqual(AnsibleInventoryDirectory.pythonExtension("hosts"), "")
        XCTAssertEqual(AnsibleInventoryDirectory.pythonExtension(".profile"), "")
        XCTAssertEqual(AnsibleInventoryDirectory.pythonExtension("..x.yml"), ".yml")
    }

    func testYAMLIsTriedOnlyForFilesWithoutExtensionOrWithAYAMLOrJSONOne() {
        let yaml = "all:\n  hosts:\n    a:\n"
        XCTAssertEqual(AnsibleInventoryDirectory.format(ofFile: "d/hosts", contents: yaml, forced: nil), .ansibleYAML)
        XCTAssertEqual(AnsibleInventoryDirectory.format(ofFile: "d/x.yml", contents: yaml, forced: nil), .ansibleYAML)
        XCTAssertEqual(AnsibleInventoryDirectory.format(ofFile: "d/x.ini", contents: yaml, forced: nil), .ansibleINI,
                       "the YAML plugin declines other extensions; the INI plugin reads them")
        XCTAssertEqual(AnsibleInventoryDirectory.format(ofFile: "d/x.json", contents: "{\"all\": {}}", forced: nil), .ansibleJSON)
        XCTAssertEqual(AnsibleInventoryDirectory.format(ofFile: "d/hosts", contents: "web1\nweb2\n", forced: nil), .ansibleINI,
                       "a plain list reads as INI, as Ansible reads it")
        XCTAssertEqual(AnsibleInventoryDirectory.format(ofFile: "d/x.ini", contents: yaml, forced: .ansibleYAML), .ansibleYAML)
    }

    func testInventoryFilesAreListedRecursivelyInByteOrderWithoutIgnoredEntries() throws {
        let made = try tree(["b": "", "a.yml": "", "B": "", "sub/z": "", "sub/.hidden": "", "sub/group_vars/x": "",
                             "group_vars/all.yml": "", "host_vars/h.yml": "", ".git/config": "", "x.retry": "",
                             "notes.txt": "", "deep/er/est": ""])
        let (files, problems) = try AnsibleInventoryDirectory.inventoryFiles(in: made.root)
        XCTAssertEqual(files.map { String($0.dropFirst(made.root.count + 1)) }, ["B", "a.yml", "b", "deep/er/est", "sub/z"])
        XCTAssertEqual(problems, [])
    }

    func testASymbolicLinkLoopIsReadOnce() throws {
        let made = try tree(["hosts": "a\n"])
        try FileManager.default.createSymbolicLink(atPath: made.path("loop"), withDestinationPath: made.root)
        let inventory = try made.load()
        XCTAssertEqual(inventory.hosts.map(\.name), ["a"])
        XCTAssertTrue(inventory.diagnostics.contains { $0.message.contains("already read") }, "\(inventory.diagnostics)")
    }

    func testVarsFileIsTheFirstOfNameThenYmlYamlJson() throws {
        let made = try tree(["group_vars/web.yml": "", "group_vars/web.json": "", "group_vars/db.json": "",
                             "group_vars/app": "", "group_vars/app.yml": ""])
        let directory = made.path("group_vars")
        XCTAssertEqual(AnsibleVarsFiles.files(in: directory, named: "web"), [directory + "/web.yml"])
        XCTAssertEqual(AnsibleVarsFiles.files(in: directory, named: "db"), [directory + "/db.json"])
        XCTAssertEqual(AnsibleVarsFiles.files(in: directory, named: "app"), [directory + "/app"])
        XCTAssertEqual(AnsibleVarsFiles.files(in: directory, named: "none"), [])
    }

    func testVarsDirectoryIsReadWholeWithAnsiblesRulesAndHidesASiblingFile() throws {
        let made = try tree(["group_vars/web/b.yml": "", "group_vars/web/a": "", "group_vars/web/c.json": "",
                             "group_vars/web/sub/d.yaml": "", "group_vars/web/sub.d/e.yml": "",
                             "group_vars/web/.hidden.yml": "", "group_vars/web/f.yml~": "", "group_vars/web/g.txt": "",
                             "group_vars/web.yml": ""])
        let directory = made.path("group_vars")
        XCTAssertEqual(AnsibleVarsFiles.files(in: directory, named: "web").map { String($0.dropFirst(directory.count + 1)) },
                       ["web/a", "web/b.yml", "web/c.json", "web/sub/d.yaml"])
    }

    func testADirectoryWithoutInventoryFilesIsOneClearError() throws {
        let made = try tree(["README.md": "web1\n", ".hosts": "web2\n", "group_vars/all.yml": "ansible_user: x\n"])
        let error = try XCTUnwrap(made.loadError())
        XCTAssertEqual(error, .noInventoryFiles(path: made.root))
        XCTAssertTrue(error.description.hasPrefix("\(made.root): this directory holds no inventory file"), error.description)
    }

    func testMissingBinaryAndUnreadableInputsAreOneSentenceWithThePath() throws {
        let made = try tree(["blob": "abc\u{0}def"])
        XCTAssertEqual(made.loadError("absent")?.description, "\(made.path("absent")): no such file or directory")
        XCTAssertEqual(made.loadError("blob")?.description, "\(made.path("blob")): this is binary data, not an inventory")
        try made.write("locked", "web1\n")
        chmod(made.path("locked"), 0)
        if geteuid() != 0 {
            XCTAssertEqual(made.loadError("locked")?.description, "\(made.path("locked")): cannot read the inventory: Permission denied")
        }
        for error in [made.loadError("absent"), made.loadError("blob")] {
            XCTAssertFalse(error?.description.contains("Domain") ?? true)
        }
    }

    func testABinaryOrUnreadableFileInADirectoryIsReportedAndTheRestIsRead() throws {
        let made = try tree(["hosts": "[web]\nw1\n", "image.bin": "\u{0}\u{1}"])
        try FileManager.default.createSymbolicLink(atPath: made.path("dangling"), withDestinationPath: made.path("gone"))
        let inventory = try made.load()
        XCTAssertEqual(inventory.hosts.map(\.name), ["w1"])
        XCTAssertEqual(Set(inventory.errors.map { String($0.location.file.dropFirst(made.root.count + 1)) }), ["dangling", "image.bin"])
        XCTAssertTrue(inventory.errors.contains { $0.message.contains("binary data, not an inventory; skipped") })
        XCTAssertTrue(inventory.errors.contains { $0.message.contains("no such file or directory; skipped") })
    }

    func testTOMLAndPluginConfigurationsAreNamedNotMisread() throws {
        let made = try tree(["hosts.toml": "[web]\nhosts = { w1 = {} }\n", "aws_ec2.yml": "plugin: amazon.aws.aws_ec2\n",
                             "hosts": "w0\n"])
        let inventory = try made.load()
        XCTAssertEqual(inventory.hosts.map(\.name), ["w0"])
        XCTAssertTrue(inventory.errors.contains { $0.location.file.hasSuffix("hosts.toml") && $0.message.contains("TOML") })
        XCTAssertTrue(inventory.errors.contains { $0.location.file.hasSuffix("aws_ec2.yml") && $0.message.contains("inventory plugin 'amazon.aws.aws_ec2'") })
    }

    func testPlainAndSSHConfigFormatsCannotReadADirectory() throws {
        let made = try tree(["hosts": "w1\n"])
        XCTAssertEqual(made.loadError(format: .sshConfig), .formatNotForDirectory(path: made.root, format: .sshConfig))
        XCTAssertNil(made.loadError(format: .ansibleINI))
    }
}
