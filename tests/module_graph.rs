//! The dependency graph of src/ has no circle: one direction per arrow, as DESIGN.md's data
//! flow says. The test reads every library source file (not main.rs nor the binary's cli/),
//! collects the paths into the crate it names (`crate::`, `super::`, `self::`, and a module's
//! own submodules, in `use` declarations and inline; comments, strings, `#[cfg(test)]` items and
//! files of tests left out), and builds two kinds of graph:
//!
//! - between top-level modules (`stack -> emu` when a file under src/stack/ names `crate::emu`);
//! - between the submodules of every directory module, nested ones included (`provision ->
//!   files` when src/stack/build/provision.rs names `super::files`,
//!   `crate::stack::build::files`, or an item that src/stack/build/mod.rs re-exports from
//!   `files`; `scaling -> figures` in workload/fsck/). The
//!   directory's own mod.rs is the parent of those submodules, not one of them: a path to an
//!   item defined in it is no edge.
//!
//! A circle in either graph fails the test, which prints it.
//!
//! Two more checks keep the house legible: inside workload/ no arrow runs back up (no file
//! below it names an item workload/mod.rs defines: the trait, the registry and the helpers
//! live in rooms of their own), and no folder of src/ holds more than 14 files at its top.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Directory modules the check must find (so a parsing fault that found none fails).
const GROUPS: &[&str] = &[
    "stack", "emu", "study", "report", "workload", "engine", "analysis",
];

/// Circles known and being cut on another branch: (graph, module, module), both directions of
/// the pair left out of that graph's check. Each entry must still be a circle: the test fails
/// when one is gone, so the entry is removed with the circle.
const ALLOWED: &[(&str, &str, &str)] = &[];

/// The name of the top-level graph in [`ALLOWED`].
const TOP: &str = "top-level modules";

type Graph = BTreeMap<String, BTreeSet<String>>;

#[test]
fn src_has_no_dependency_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let crate_ = Crate::read(&src);
    let mut failures = Vec::new();
    let mut graphs = vec![(TOP.to_string(), crate_.top_level_graph())];
    let dirs = crate_.directory_modules();
    for g in GROUPS {
        assert!(
            dirs.contains(&vec![g.to_string()]),
            "directory module {g} not found among {dirs:?}"
        );
    }
    for d in dirs {
        graphs.push((d.join("/"), crate_.group_graph(&d)));
    }
    for (name, mut graph) in graphs {
        for &(_, a, b) in ALLOWED.iter().filter(|e| e.0 == name) {
            let ab = graph.get_mut(a).is_some_and(|s| s.remove(b));
            let ba = graph.get_mut(b).is_some_and(|s| s.remove(a));
            if !(ab && ba) {
                failures.push(format!(
                    "{name}: allow-listed circle {a} <-> {b} is gone: remove it from ALLOWED"
                ));
            }
        }
        let what = if name == TOP {
            name.to_string()
        } else {
            format!("submodules of {name}/")
        };
        for circle in circles(&graph) {
            failures.push(format!("{what}: {}", circle.join(" -> ")));
        }
    }
    assert!(
        failures.is_empty(),
        "dependency circles in src/:\n{}",
        failures.join("\n")
    );
}

/// The check sees the edges it must: if parsing broke, it would find no circle in anything.
#[test]
fn the_graph_holds_known_edges() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let crate_ = Crate::read(&src);
    let top = crate_.top_level_graph();
    for (a, b) in [
        ("trial", "stack"),
        ("stack", "emu"),
        ("study", "workload"),
        ("probe", "engine"),
    ] {
        assert!(top[a].contains(b), "{a} -> {b} missing: {top:?}");
    }
    let stack = crate_.group_graph(&["stack".to_string()]);
    for (a, b) in [("build", "spec"), ("fs", "ledger"), ("build", "device")] {
        assert!(stack[a].contains(b), "stack: {a} -> {b} missing: {stack:?}");
    }
    let build = crate_.group_graph(&["stack".to_string(), "build".to_string()]);
    for (a, b) in [("provision", "files"), ("layout", "provision")] {
        assert!(
            build[a].contains(b),
            "stack/build: {a} -> {b} missing: {build:?}"
        );
    }
    let fsck = crate_.group_graph(&["workload".to_string(), "fsck".to_string()]);
    for (a, b) in [("scaling", "figures"), ("report", "scaling")] {
        assert!(
            fsck[a].contains(b),
            "workload/fsck: {a} -> {b} missing: {fsck:?}"
        );
    }
}

/// Inside workload/ no arrow runs back up: a kind names what a kind is (`kind`, `outcome`)
/// and the registry names the kinds, but nothing below workload/ names an item of
/// workload/mod.rs, which only declares the rooms and re-exports what callers outside use;
/// and so in every folder below it (a kind's mod.rs re-exports its phases from a room of
/// their own, job/options its `Opt` from opt.rs, job/gen its generator).
#[test]
fn no_arrow_runs_back_up_inside_workload() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let crate_ = Crate::read(&src);
    let mut failures = Vec::new();
    for dir in crate_.directory_modules() {
        if dir.first().map(String::as_str) != Some("workload") {
            continue;
        }
        let up = crate_.up_arrows(&dir);
        if !up.is_empty() {
            failures.push(format!("{}: {up:?}", dir.join("/")));
        }
    }
    assert!(
        failures.is_empty(),
        "arrows back up to a mod.rs inside workload/ (module, item it names):\n{}",
        failures.join("\n")
    );
    // The check sees an arrow back up where there is one.
    let workload = ["workload".to_string()];
    let kind = crate_.group_graph(&workload);
    assert!(
        kind["dvr"].contains("kind"),
        "dvr -> kind missing: {kind:?}"
    );
    assert!(kind["registry"].contains("dvr"), "registry -> dvr missing");
    let fake = Crate {
        files: BTreeMap::from([
            (vec!["w".to_string()], "pub trait T {}".to_string()),
            (
                vec!["w".to_string(), "a".to_string()],
                "use super::T; use crate::w::b::X;".to_string(),
            ),
            (
                vec!["w".to_string(), "b".to_string()],
                "pub struct X;".to_string(),
            ),
        ]),
    };
    assert_eq!(
        fake.up_arrows(&["w".to_string()]),
        vec![("w/a".to_string(), "T".to_string())]
    );
}

/// The most files a folder of src/ holds at its top (its subfolders' files not counted).
const MAX_FILES: usize = 14;

#[test]
fn no_folder_of_src_holds_more_than_14_files() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut over = Vec::new();
    let mut folders = 0;
    for dir in folders_under(&src) {
        let rel = dir.strip_prefix(&src).unwrap();
        folders += 1;
        let files = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .count();
        if files > MAX_FILES {
            over.push(format!("src/{}: {files} files", rel.display()));
        }
    }
    assert!(folders > 20, "found only {folders} folders under src/");
    assert!(
        over.is_empty(),
        "folders of src/ with more than {MAX_FILES} files at their top (split them by \
         lifecycle or kind):\n{}",
        over.join("\n")
    );
}

/// `dir` and every folder below it.
fn folders_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(folders_under(&e.path()));
        }
    }
    out
}

#[test]
fn circles_are_found_and_printed() {
    fn edge(g: &mut Graph, a: &str, b: &str) {
        g.entry(a.into()).or_default().insert(b.into());
        g.entry(b.into()).or_default();
    }
    let mut g = Graph::new();
    edge(&mut g, "a", "b");
    edge(&mut g, "b", "c");
    edge(&mut g, "c", "d");
    assert_eq!(find_circle(&g), None);
    edge(&mut g, "d", "b");
    edge(&mut g, "x", "y");
    edge(&mut g, "y", "x");
    assert_eq!(circles(&g).len(), 2);
    assert_eq!(
        find_circle(&g).unwrap(),
        vec!["b", "c", "d", "b"]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>()
    );
}

#[test]
fn use_trees_and_inline_paths_are_read() {
    let text = r#"
        use super::{fs, sys::{self, run as go}, StackError};
        pub use crate::emu::{EmuServer, ModelSpec}; // crate::nothing
        fn f() { let s = "crate::not_a_path"; crate::units::trim_float(1.0); }
        #[cfg(test)]
        mod tests { use crate::report::json; }
    "#;
    let paths = paths_in(text);
    let want: Vec<Vec<&str>> = vec![
        vec!["super", "fs"],
        vec!["super", "sys"],
        vec!["super", "sys", "run"],
        vec!["super", "StackError"],
        vec!["crate", "emu", "EmuServer"],
        vec!["crate", "emu", "ModelSpec"],
        vec!["crate", "units", "trim_float"],
    ];
    assert_eq!(paths, want);
}

/// The library's source files, by module path.
struct Crate {
    files: BTreeMap<Vec<String>, String>,
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let mut files = BTreeMap::new();
        for path in rust_files(src) {
            let rel = path.strip_prefix(src).unwrap();
            // The binary's own files (main.rs and its cli/ modules) are not the library's.
            if rel == Path::new("main.rs") || rel.starts_with("bin") || rel.starts_with("cli") {
                continue;
            }
            // A file of tests (`hdd_tests.rs`, `tests.rs`, `tests/`) is a `#[cfg(test)]` module
            // kept in a file of its own: not the library's flow either.
            let name = rel.file_name().unwrap().to_string_lossy();
            if name.ends_with("_tests.rs")
                || name == "tests.rs"
                || rel.components().any(|c| c.as_os_str() == "tests")
            {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            files.insert(module_of(rel), text);
        }
        assert!(
            files.len() > 20,
            "found only {} files under src/",
            files.len()
        );
        Crate { files }
    }

    fn is_module(&self, m: &[String]) -> bool {
        self.files.contains_key(m)
    }

    /// Every path a file uses, made absolute (`crate` dropped).
    fn absolute_paths(&self, module: &[String], text: &str) -> Vec<Vec<String>> {
        paths_in(text)
            .into_iter()
            .filter_map(|p| self.resolve(module, &p))
            .collect()
    }

    /// `path` as an absolute module path, from inside `module`: paths starting with `crate`,
    /// `super` or `self`, or with the name of one of `module`'s own submodules. None for
    /// anything else (std, other crates, local names).
    fn resolve(&self, module: &[String], path: &[String]) -> Option<Vec<String>> {
        let first = path.first()?.as_str();
        let (mut base, mut rest) = match first {
            "crate" => (Vec::new(), &path[1..]),
            "self" => (module.to_vec(), &path[1..]),
            "super" => (module.to_vec(), path),
            _ => {
                let mut child = module.to_vec();
                child.push(first.to_string());
                if !self.is_module(&child) {
                    return None;
                }
                (module.to_vec(), path)
            }
        };
        while rest.first().map(String::as_str) == Some("super") {
            base.pop()?;
            rest = &rest[1..];
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    fn top_level_graph(&self) -> Graph {
        let mut g = Graph::new();
        for (m, text) in &self.files {
            let Some(top) = m.first() else { continue };
            g.entry(top.clone()).or_default();
            for p in self.absolute_paths(m, text) {
                if let Some(to) = p.first() {
                    if to != top && self.is_module(std::slice::from_ref(to)) {
                        g.get_mut(top).unwrap().insert(to.clone());
                    }
                }
            }
        }
        g
    }

    /// Every directory module (one with submodules), nested ones included: `stack`,
    /// `workload/fsck`, ...
    fn directory_modules(&self) -> Vec<Vec<String>> {
        let mut dirs = BTreeSet::new();
        for m in self.files.keys() {
            for n in 1..m.len() {
                dirs.insert(m[..n].to_vec());
            }
        }
        dirs.into_iter().collect()
    }

    /// What `group`'s mod.rs re-exports: item name -> submodule it comes from.
    fn reexports(&self, group: &[String]) -> BTreeMap<String, String> {
        let n = group.len();
        let mut out = BTreeMap::new();
        let Some(text) = self.files.get(group) else {
            return out;
        };
        let text = strip(text);
        for decl in use_decls(&tokens(&text)) {
            if !decl.public {
                continue;
            }
            for p in decl.paths {
                if let Some(abs) = self.resolve(group, &p) {
                    if abs.len() >= n + 2 && abs[..n] == *group && self.is_module(&abs[..n + 1]) {
                        out.insert(abs.last().unwrap().clone(), abs[n].clone());
                    }
                }
            }
        }
        out
    }

    /// The arrows that run back up inside the directory module `group`: a file below it that
    /// names `group` itself or an item its mod.rs defines (rather than a submodule, or an item
    /// re-exported from one), as (the file's module, what it names).
    fn up_arrows(&self, group: &[String]) -> Vec<(String, String)> {
        let n = group.len();
        let reexports = self.reexports(group);
        let mut out = Vec::new();
        for (m, text) in &self.files {
            if m.len() <= n || m[..n] != *group {
                continue;
            }
            for p in self.absolute_paths(m, text) {
                if p.len() < n || p[..n] != *group {
                    continue;
                }
                let up = p.len() == n
                    || (!self.is_module(&p[..n + 1]) && !reexports.contains_key(&p[n]));
                if up {
                    let named = p.get(n).cloned().unwrap_or_else(|| "self".into());
                    out.push((m.join("/"), named));
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// The graph between the submodules of the directory module `group` (a path: `["stack"]`,
    /// `["workload", "fsck"]`).
    fn group_graph(&self, group: &[String]) -> Graph {
        let n = group.len();
        let reexports = self.reexports(group);
        let mut g = Graph::new();
        for (m, text) in &self.files {
            // A file of a directory submodule (stack/server/client.rs) counts as that
            // submodule (server).
            if m.len() <= n || m[..n] != *group {
                continue;
            }
            let from = m[n].clone();
            g.entry(from.clone()).or_default();
            for p in self.absolute_paths(m, text) {
                if p.len() <= n || p[..n] != *group {
                    continue;
                }
                let to = if self.is_module(&p[..n + 1]) {
                    Some(p[n].clone())
                } else {
                    reexports.get(&p[n]).cloned()
                };
                if let Some(to) = to.filter(|t| *t != from) {
                    g.get_mut(&from).unwrap().insert(to);
                }
            }
        }
        g
    }
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out
}

/// `stack/fs.rs` -> [stack, fs]; `stack/mod.rs` -> [stack]; `lib.rs` -> [].
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// Source text without comments, string and character literals, and `#[cfg(test)]` items.
fn strip(text: &str) -> String {
    let without = strip_literals(text);
    strip_test_items(&without)
}

fn strip_literals(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == b'/' && next == Some(b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && next == Some(b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == b'r' && (next == Some(b'"') || next == Some(b'#')) && !ident_before(b, i) {
            let hashes = b[i + 1..].iter().take_while(|&&x| x == b'#').count();
            if b.get(i + 1 + hashes) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            i += 2 + hashes;
            while i < b.len() && !b[i..].starts_with(&close) {
                i += 1;
            }
            i += close.len();
            out.push_str("\"\"");
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == b'\'' {
            // A character literal ('a', '\n', '\u{1F600}') or a lifetime ('a).
            if next == Some(b'\\') {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
                out.push_str("' '");
            } else {
                let ch_len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                if b.get(i + 1 + ch_len) == Some(&b'\'') {
                    i += 2 + ch_len;
                    out.push_str("' '");
                } else {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn ident_before(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// Removes every item marked `#[cfg(test)]` (up to its closing brace or semicolon).
fn strip_test_items(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at + "#[cfg(test)]".len()..];
        let mut depth = 0usize;
        let mut end = item.len();
        for (j, c) in item.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = j + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = j + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Punct(char),
}

fn tokens(text: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c.is_alphabetic() || c == '_' {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if d.is_alphanumeric() || d == '_' {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(Tok::Ident(text[i..end].to_string()));
        } else if c.is_numeric() {
            while chars
                .peek()
                .is_some_and(|&(_, d)| d.is_alphanumeric() || d == '_')
            {
                chars.next();
            }
            out.push(Tok::Punct('0'));
        } else if c == ':' && chars.peek().is_some_and(|&(_, d)| d == ':') {
            chars.next();
            out.push(Tok::PathSep);
        } else if !c.is_whitespace() {
            out.push(Tok::Punct(c));
        }
    }
    out
}

/// One `use` declaration: whether it is public (a re-export) and the paths it names.
struct UseDecl {
    public: bool,
    paths: Vec<Vec<String>>,
    /// Token range, to skip when reading inline paths.
    range: std::ops::Range<usize>,
}

fn use_decls(toks: &[Tok]) -> Vec<UseDecl> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if toks[i] != Tok::Ident("use".into()) {
            i += 1;
            continue;
        }
        let public = i > 0 && is_visibility_end(toks, i);
        let start = i;
        i += 1;
        let mut paths = Vec::new();
        i = use_tree(toks, i, &mut Vec::new(), &mut paths);
        while i < toks.len() && toks[i] != Tok::Punct(';') {
            i += 1;
        }
        out.push(UseDecl {
            public,
            paths,
            range: start..i,
        });
    }
    out
}

/// Whether the tokens before `use` at `i` are `pub` or `pub(...)`.
fn is_visibility_end(toks: &[Tok], i: usize) -> bool {
    match &toks[i - 1] {
        Tok::Ident(s) => s == "pub",
        Tok::Punct(')') => {
            let open = toks[..i].iter().rposition(|t| *t == Tok::Punct('('));
            open.is_some_and(|o| o > 0 && toks[o - 1] == Tok::Ident("pub".into()))
        }
        _ => false,
    }
}

/// Reads one use tree from `i` under `prefix`, pushing the full paths it names; returns the
/// index after it.
fn use_tree(
    toks: &[Tok],
    mut i: usize,
    prefix: &mut Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    let depth = prefix.len();
    while let (Some(Tok::Ident(s)), Some(Tok::PathSep)) = (toks.get(i), toks.get(i + 1)) {
        prefix.push(s.clone());
        i += 2;
    }
    match toks.get(i) {
        Some(Tok::Ident(s)) => {
            if s != "self" {
                prefix.push(s.clone());
            }
            out.push(prefix.clone());
            i += 1;
            if toks.get(i) == Some(&Tok::Ident("as".into())) {
                i += 2;
            }
        }
        Some(Tok::Punct('{')) => {
            i += 1;
            while toks.get(i).is_some_and(|t| *t != Tok::Punct('}')) {
                i = use_tree(toks, i, prefix, out);
                if toks.get(i) == Some(&Tok::Punct(',')) {
                    i += 1;
                }
            }
            i += 1;
        }
        Some(Tok::Punct('*')) => {
            out.push(prefix.clone());
            i += 1;
        }
        _ => {}
    }
    prefix.truncate(depth);
    i
}

/// The paths `text` names, in order: those of `use` declarations (every one), then the inline
/// ones starting with `crate` or `super`.
fn paths_in(text: &str) -> Vec<Vec<String>> {
    let toks = tokens(&strip(text));
    let decls = use_decls(&toks);
    let mut out: Vec<Vec<String>> = Vec::new();
    for d in &decls {
        out.extend(d.paths.iter().filter(|p| p.len() > 1).cloned());
    }
    let mut i = 0;
    while i < toks.len() {
        if let Some(d) = decls.iter().find(|d| d.range.contains(&i)) {
            i = d.range.end;
            continue;
        }
        let starts = matches!(&toks[i], Tok::Ident(s) if s == "crate" || s == "super")
            && toks.get(i + 1) == Some(&Tok::PathSep)
            && (i == 0 || toks[i - 1] != Tok::PathSep);
        if !starts {
            i += 1;
            continue;
        }
        let mut path = Vec::new();
        while let Some(Tok::Ident(s)) = toks.get(i) {
            path.push(s.clone());
            i += 1;
            if toks.get(i) != Some(&Tok::PathSep) {
                break;
            }
            i += 1;
        }
        if path.len() > 1 {
            out.push(path);
        }
    }
    out
}

/// One circle through each group of nodes that reach each other (each strongly connected
/// component with more than one node).
fn circles(g: &Graph) -> Vec<Vec<String>> {
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(n) = todo.pop() {
            for m in g.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    todo.push(m.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> = g.keys().map(|n| (n, reach(n))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for n in g.keys() {
        if done.contains(n) || !reaches[n].contains(n) {
            continue;
        }
        let component: BTreeSet<String> = reaches[n]
            .iter()
            .filter(|m| reaches.get(m).is_some_and(|r| r.contains(n)))
            .cloned()
            .collect();
        let sub: Graph = component
            .iter()
            .map(|m| (m.clone(), g[m].intersection(&component).cloned().collect()))
            .collect();
        out.extend(find_circle(&sub));
        done.extend(component);
    }
    out
}

/// A circle in `g` as a path whose first and last node are the same, if there is one.
fn find_circle(g: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    fn visit(
        g: &Graph,
        n: &str,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        marks.insert(n.to_string(), Mark::OnPath);
        path.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            match marks.get(m).copied().unwrap_or(Mark::New) {
                Mark::OnPath => {
                    let start = path.iter().position(|p| p == m).unwrap();
                    let mut c = path[start..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                Mark::New => {
                    if let Some(c) = visit(g, m, marks, path) {
                        return Some(c);
                    }
                }
                Mark::Done => {}
            }
        }
        path.pop();
        marks.insert(n.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for n in g.keys() {
        if marks.get(n).copied().unwrap_or(Mark::New) == Mark::New {
            if let Some(c) = visit(g, n, &mut marks, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}
