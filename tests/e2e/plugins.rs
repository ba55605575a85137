//! The plugin host: bundled readers, a third-party reader built from the
//! guide, and bad plugins that must be reported without stopping the others.

use serde_json::Value;

use crate::common::{install_plugin, lib_name, set_mode, test_plugins, Sandbox};

fn plugin<'a>(list: &'a Value, field: &str, value: &str) -> &'a Value {
    list["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p[field] == value)
        .unwrap_or_else(|| panic!("no plugin with {field} = {value} in {list:#}"))
}

fn by_file<'a>(list: &'a Value, file: &str) -> &'a Value {
    list["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["path"].as_str().unwrap().ends_with(file))
        .unwrap_or_else(|| panic!("no plugin file {file} in {list:#}"))
}

#[test]
fn bundled_readers_are_loaded() {
    let sb = Sandbox::new();
    let list = sb.ok(&["plugins", "--json"]).json();
    assert_eq!(list["abi"], "1.3");
    for harness in ["aider", "gemini", "claude", "codex", "qwen"] {
        let p = plugin(&list, "harness", harness);
        assert_eq!(p["status"], "loaded", "{p:#}");
        assert_eq!(p["abi"], "1.3");
        assert_eq!(p["origin"], "bundled");
        assert_eq!(p["name"], harness);
    }
    let text = sb.ok(&["plugins"]).stdout;
    assert!(text.contains("aider") && text.contains("loaded"), "{text}");
}

#[test]
fn third_party_plugin_from_the_readme_is_used() {
    let sb = Sandbox::new();
    install_plugin(
        &test_plugins().join(lib_name("deja_plugin_hello")),
        &sb.plugin_dir(),
    );
    let list = sb.ok(&["plugins", "--json"]).json();
    let hello = plugin(&list, "harness", "hello");
    assert_eq!(hello["status"], "loaded", "{hello:#}");
    assert_eq!(hello["origin"], "user");
    assert_eq!(hello["version"], "0.1.0");
    // The bundled readers still load beside it.
    assert_eq!(plugin(&list, "harness", "aider")["status"], "loaded");

    let file = sb.write(
        "notes/standup.hello",
        "user: why does the tenant filter vanish?\nnot a message\nassistant: the predicate is dropped in the join\n",
    );
    // Detected by the plugin itself, and forced with --harness.
    for args in [
        vec!["parse", "--json"],
        vec!["parse", "--harness", "hello", "--json"],
    ] {
        let mut args = args.clone();
        args.insert(1, file.to_str().unwrap());
        let out = sb.ok(&args).json();
        let sessions = out["sessions"].as_array().unwrap();
        assert_eq!(sessions.len(), 1, "{out:#}");
        let s = &sessions[0];
        assert_eq!(s["id"], "hello-standup");
        assert_eq!(s["harness"], "hello");
        let messages = s["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0]["role"], "user");
        assert_eq!(messages[0]["text"], "why does the tenant filter vanish?");
        assert_eq!(messages[1]["role"], "assistant");
        assert_eq!(messages[1]["id"], "hello-standup#1");
        assert!(messages[1]["timestamp"].as_str().unwrap().ends_with('Z'));
    }
}

#[test]
fn bad_plugins_are_reported_and_the_others_keep_working() {
    let sb = Sandbox::new();
    let dir = sb.plugin_dir();
    for name in [
        "deja_plugin_test_panicky",
        "deja_plugin_test_abi_two",
        "deja_plugin_test_abi_newer_minor",
        "deja_plugin_test_not_a_plugin",
    ] {
        install_plugin(&test_plugins().join(lib_name(name)), &dir);
    }
    let garbage = dir.join(lib_name("deja_plugin_garbage"));
    std::fs::write(&garbage, "this is not a shared library").unwrap();
    set_mode(&garbage, 0o644);

    let list = sb.ok(&["plugins", "--json"]).json();
    let panicky = plugin(&list, "harness", "panicky");
    assert_eq!(panicky["status"], "loaded");

    let two = by_file(&list, &lib_name("deja_plugin_test_abi_two"));
    assert_eq!(two["status"], "incompatible");
    let reason = two["reason"].as_str().unwrap();
    assert!(
        reason.contains("ABI 2.0") && reason.contains("rebuild"),
        "{reason}"
    );

    let newer = by_file(&list, &lib_name("deja_plugin_test_abi_newer_minor"));
    assert_eq!(newer["status"], "incompatible");
    assert!(
        newer["reason"].as_str().unwrap().contains("upgrade deja"),
        "{newer:#}"
    );

    let not = by_file(&list, &lib_name("deja_plugin_test_not_a_plugin"));
    assert_eq!(not["status"], "invalid");
    assert!(
        not["reason"]
            .as_str()
            .unwrap()
            .contains("not a deja plugin"),
        "{not:#}"
    );

    let bad = by_file(&list, &lib_name("deja_plugin_garbage"));
    assert_eq!(bad["status"], "invalid");
    assert!(
        bad["reason"]
            .as_str()
            .unwrap()
            .contains("cannot load library"),
        "{bad:#}"
    );

    for harness in ["aider", "gemini"] {
        assert_eq!(plugin(&list, "harness", harness)["status"], "loaded");
    }

    // The text listing explains every failure too.
    let text = sb.ok(&["plugins"]).stdout;
    assert!(
        text.contains("incompatible") && text.contains("not a deja plugin"),
        "{text}"
    );

    // A panic inside the plugin is reported as an error; deja survives.
    let file = sb.write("x.txt", "anything");
    let out = sb.run(&["parse", file.to_str().unwrap(), "--harness", "panicky"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("plugin panicked in parse"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("index out of bounds"), "{}", out.stderr);

    // Other readers work while the panicking one is loaded (its detector panics too).
    let history = sb.write(
        "proj/.aider.chat.history.md",
        "\n# aider chat started at 2026-07-17 09:00:00\n\n#### Show me the failing query  \n\nThe query misses the tenant predicate.\n",
    );
    let out = sb
        .ok(&["parse", history.to_str().unwrap(), "--json"])
        .json();
    assert_eq!(out["sessions"][0]["harness"], "aider", "{out:#}");
}

#[test]
fn writable_plugin_files_and_folders_are_refused() {
    let sb = Sandbox::new();
    let hello = test_plugins().join(lib_name("deja_plugin_hello"));

    // A world-writable folder.
    let open_dir = sb.home.join("open-plugins");
    std::fs::create_dir_all(&open_dir).unwrap();
    install_plugin(&hello, &open_dir);
    set_mode(&open_dir, 0o777);
    // A group-writable file in a safe folder.
    let safe_dir = sb.home.join("safe-plugins");
    std::fs::create_dir_all(&safe_dir).unwrap();
    set_mode(&safe_dir, 0o755);
    let loose = install_plugin(
        &test_plugins().join(lib_name("deja_plugin_test_panicky")),
        &safe_dir,
    );
    set_mode(&loose, 0o664);
    sb.config(&format!(
        "[plugins]\npaths = [{:?}, {:?}]\n",
        open_dir.to_str().unwrap(),
        safe_dir.to_str().unwrap()
    ));

    let list = sb.ok(&["plugins", "--json"]).json();
    let refused_dir = by_file(&list, &lib_name("deja_plugin_hello"));
    assert_eq!(refused_dir["status"], "refused");
    let reason = refused_dir["reason"].as_str().unwrap();
    assert!(
        reason.contains("writable by") && reason.contains("chmod go-w"),
        "{reason}"
    );
    assert!(reason.contains("open-plugins"), "{reason}");

    let refused_file = by_file(&list, &lib_name("deja_plugin_test_panicky"));
    assert_eq!(refused_file["status"], "refused");
    assert!(
        refused_file["reason"]
            .as_str()
            .unwrap()
            .contains("its group"),
        "{refused_file:#}"
    );

    assert_eq!(plugin(&list, "harness", "aider")["status"], "loaded");

    // Fixed permissions: loaded, from the config paths.
    set_mode(&open_dir, 0o755);
    let list = sb.ok(&["plugins", "--json"]).json();
    let hello = plugin(&list, "harness", "hello");
    assert_eq!(hello["status"], "loaded");
    assert_eq!(hello["origin"], "config");
}

#[test]
fn a_second_plugin_for_one_harness_is_refused() {
    let sb = Sandbox::new();
    // A user copy of the aider reader replaces the bundled one.
    let bundled = crate::common::deja_bin()
        .parent()
        .unwrap()
        .join(lib_name("deja_plugin_aider"));
    let user_copy = install_plugin(&bundled, &sb.plugin_dir());
    let list = sb.ok(&["plugins", "--json"]).json();
    let aiders: Vec<&Value> = list["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["harness"] == "aider")
        .collect();
    assert_eq!(aiders.len(), 2, "{list:#}");
    assert_eq!(aiders[0]["status"], "loaded");
    assert_eq!(aiders[0]["path"], user_copy.to_str().unwrap());
    assert_eq!(aiders[1]["status"], "refused");
    let reason = aiders[1]["reason"].as_str().unwrap();
    assert!(reason.contains("duplicate harness `aider`"), "{reason}");
    assert!(reason.contains(user_copy.to_str().unwrap()), "{reason}");
}

#[test]
fn an_installed_deja_does_not_load_plugins_beside_it() {
    // `~/.local/bin` is where pip, pipx and npm drop files: an installed deja
    // reads its readers from `~/.local/lib/deja/plugins` only.
    let sb = Sandbox::new();
    let bin = sb.home.join(".local/bin");
    let lib = sb.home.join(".local/lib/deja/plugins");
    for dir in [&bin, &lib] {
        std::fs::create_dir_all(dir).unwrap();
        set_mode(dir, 0o755);
    }
    let deja = install_plugin(&crate::common::deja_bin(), &bin);
    let dropped = install_plugin(&test_plugins().join(lib_name("deja_plugin_hello")), &bin);
    let bundled = crate::common::deja_bin()
        .parent()
        .unwrap()
        .join(lib_name("deja_plugin_aider"));
    let reader = install_plugin(&bundled, &lib);

    let out = sb
        .command_of(&deja)
        .args(["plugins", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let paths: Vec<&str> = list["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert!(
        !paths.contains(&dropped.to_str().unwrap()),
        "a file beside the installed program was tried: {list:#}"
    );
    assert_eq!(paths, [reader.to_str().unwrap()], "{list:#}");
    let aider = plugin(&list, "harness", "aider");
    assert_eq!(aider["status"], "loaded", "{aider:#}");
    assert_eq!(aider["origin"], "bundled");
}

#[test]
fn a_plugin_under_a_folder_others_can_change_is_refused_with_a_warning() {
    let sb = Sandbox::new();
    // The plugin's own folder is fine; one further up is group-writable.
    let shared = sb.home.join("shared");
    let dir = shared.join("plugins");
    std::fs::create_dir_all(&dir).unwrap();
    set_mode(&dir, 0o755);
    set_mode(&shared, 0o775);
    let hello = install_plugin(&test_plugins().join(lib_name("deja_plugin_hello")), &dir);
    sb.config(&format!(
        "[embed]\nenabled = false\n[plugins]\npaths = [{:?}]\n",
        dir.to_str().unwrap()
    ));

    let out = sb.ok(&["plugins", "--json"]);
    let list = out.json();
    let refused = by_file(&list, &lib_name("deja_plugin_hello"));
    assert_eq!(refused["status"], "refused", "{refused:#}");
    let reason = refused["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("`{}`", shared.display()))
            && reason.contains("writable by its group")
            && reason.contains("chmod go-w"),
        "{reason}"
    );
    // Any command says so on stderr, naming the file.
    let warning = format!("warning: plugin `{}` not loaded: ", hello.display());
    assert!(out.stderr.contains(&warning), "{}", out.stderr);
    let out = sb.ok(&["index", "--json"]);
    assert!(out.stderr.contains(&warning), "{}", out.stderr);
    assert_eq!(plugin(&list, "harness", "aider")["status"], "loaded");

    set_mode(&shared, 0o755);
    let out = sb.ok(&["plugins", "--json"]);
    assert_eq!(plugin(&out.json(), "harness", "hello")["status"], "loaded");
    assert!(!out.stderr.contains("not loaded"), "{}", out.stderr);
}
