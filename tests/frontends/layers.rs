//! The layers point one way — engine ← render ← ui ← web, with the query layer under every
//! front end (cli, worker, api, Python) and no front end calling another — and src/web's modules import each other without a cycle, its root (mod.rs)
//! importing them and none importing it (#20). Read from the sources, so a new import that
//! breaks either rule fails here.

use std::collections::BTreeMap;
use std::fs;

fn sources(dir: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(sources(p.to_str().unwrap()));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push((p.display().to_string(), fs::read_to_string(&p).unwrap()));
        }
    }
    out
}

/// Code lines only (comments and doc comments mention other layers freely).
fn code(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn each_layer_imports_only_the_layers_below() {
    let below: [(&str, &[&str]); 3] = [
        (
            "src/engine",
            &[
                "crate::render",
                "crate::ui",
                "crate::web",
                "crate::cli",
                "crate::api",
            ],
        ),
        (
            "src/render",
            &["crate::ui", "crate::web", "crate::cli", "crate::api"],
        ),
        ("src/ui", &["crate::web", "crate::cli", "crate::api"]),
    ];
    for (dir, forbidden) in below {
        for (path, text) in sources(dir) {
            let text = code(&text);
            for f in forbidden {
                assert!(
                    !text.contains(f),
                    "{path} imports {f}: the layers point one way"
                );
            }
        }
    }
}

/// One query layer under every front end (issue 60): the query layer imports no front end;
/// no front end but the command line's own files and its binary names `cli::`; and the
/// worker prints no answer as JSON to parse it back (it reads the query layer's fields).
#[test]
fn every_front_end_stands_on_the_query_layer_alone() {
    let front_ends = ["crate::cli", "crate::worker", "crate::api", "crate::web"];
    for (path, text) in sources("src/query") {
        for f in front_ends {
            assert!(
                !code(&text).contains(f),
                "{path} imports {f}: the query layer is under the front ends"
            );
        }
    }
    let mut others = sources("src/api");
    others.extend(sources("python/src"));
    others.extend(sources("src/web"));
    for p in ["src/api.rs", "src/worker.rs"] {
        others.push((p.into(), fs::read_to_string(p).unwrap()));
    }
    for (path, text) in &others {
        let text = code(text);
        assert!(
            !text.contains("cli::"),
            "{path} calls the command line: front ends stand on the query layer"
        );
    }
    // The worker runs no words and parses no printed answer outside its tests.
    let worker = fs::read_to_string("src/worker.rs").unwrap();
    let body = code(&worker[..worker.find("#[cfg(test)]").unwrap()]);
    assert!(
        !body.contains("from_str"),
        "src/worker.rs parses printed JSON"
    );
}

#[test]
fn src_web_has_no_import_cycle() {
    let files = sources("src/web");
    let name = |p: &str| {
        std::path::Path::new(p)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    let modules: Vec<String> = files
        .iter()
        .map(|(p, _)| name(p))
        .filter(|n| n != "mod")
        .collect();
    let mut uses: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (path, text) in &files {
        let me = name(path);
        if me == "mod" {
            continue;
        }
        let text = code(text);
        assert!(
            !text.contains("crate::web"),
            "{path} reaches into the page's root (crate::web)"
        );
        let mut deps = Vec::new();
        for (i, _) in text.match_indices("super::") {
            let rest = &text[i + 7..];
            let word: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '{')
                .collect();
            // `use super::{a, b}`: every name in the braces.
            let names: Vec<String> = if word.starts_with('{') {
                rest[1..rest.find('}').unwrap()]
                    .split(',')
                    .map(|s| s.trim().split("::").next().unwrap().to_string())
                    .collect()
            } else {
                vec![word]
            };
            for n in names {
                assert!(
                    modules.contains(&n),
                    "{path} uses super::{n}: only sibling modules, never the root's items"
                );
                if n != me && !deps.contains(&n) {
                    deps.push(n);
                }
            }
        }
        uses.insert(me, deps);
    }
    // Acyclic: repeatedly remove modules whose imports are all removed.
    let mut left = uses.clone();
    while !left.is_empty() {
        let ready: Vec<String> = left
            .iter()
            .filter(|(_, d)| d.iter().all(|x| !left.contains_key(x)))
            .map(|(m, _)| m.clone())
            .collect();
        assert!(!ready.is_empty(), "import cycle among {:?}", left);
        for m in ready {
            left.remove(&m);
        }
    }
    assert!(uses.len() >= 8, "{uses:?}");
}

/// The web layer is DOM adapters only (#20): the page's state is the page model in
/// `ui::session` (one `thread_local!` holds the mounted page), and src/web stays within
/// 2.8k lines — decisions, texts and protocol live in `ui`, where they are tested natively.
#[test]
fn web_is_adapters_with_one_thread_local() {
    let web = sources("src/web");
    let locals: usize = web
        .iter()
        .map(|(_, t)| code(t).matches("thread_local!").count())
        .sum();
    assert_eq!(locals, 1, "src/web keeps its state in one thread-local");
    let lines: usize = web.iter().map(|(_, t)| t.lines().count()).sum();
    assert!(lines <= 2800, "src/web is {lines} lines (at most 2800)");
}

/// No source file is a warehouse: none in src/ over 1,250 lines (issue 60's "no file in
/// src/ over ~1,200 lines"; the tight accountant's driver was one file of 3,230). A file that
/// grows past it is split by concern, its tests in a file of their own.
#[test]
fn no_source_file_over_1250_lines() {
    let big: Vec<(String, usize)> = sources("src")
        .into_iter()
        .map(|(p, t)| (p, t.lines().count()))
        .filter(|(_, n)| *n > 1250)
        .collect();
    assert!(big.is_empty(), "{big:?}");
}

/// One version (issue 66 #5), set in one place: Cargo.toml's `[workspace.package]`. The crate
/// and the Python crate inherit it, the wheel reads it (pyproject.toml: `dynamic`), `make dist`
/// stamps dist/package.json with it (www/package.json holds a placeholder), the page, the
/// exports and `--version` show `CARGO_PKG_VERSION`; CHANGELOG.md's newest release is it.
#[test]
fn one_version_set_in_one_place() {
    let root = env!("CARGO_MANIFEST_DIR");
    let read = |p: &str| std::fs::read_to_string(format!("{root}/{p}")).unwrap();
    let v = env!("CARGO_PKG_VERSION");
    let cargo = read("Cargo.toml");
    assert!(cargo.contains(&format!("[workspace.package]\nversion = \"{v}\"")));
    assert!(cargo.contains("version.workspace = true"));
    assert!(read("python/Cargo.toml").contains("version.workspace = true"));
    let py = read("python/pyproject.toml");
    assert!(
        py.contains("dynamic = [\"version\"]") && !py.lines().any(|l| l.starts_with("version"))
    );
    assert!(read("www/package.json").contains("\"version\": \"0.0.0-dev\""));
    let log = read("CHANGELOG.md");
    // (Changes not yet released are listed above it, under "## Unreleased".)
    let newest = log
        .lines()
        .find(|l| l.starts_with("## ") && *l != "## Unreleased")
        .unwrap_or_default();
    assert!(
        newest.starts_with(&format!("## {v} ")),
        "CHANGELOG.md's newest release: {newest}"
    );
}
