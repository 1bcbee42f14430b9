//! The core's top-level modules form layers: no module reaches, through
//! others, back to itself.
//!
//! A cycle hides which rule decides: with grace reading the plan and the
//! plan reading grace, a change to either silently changes the other, and
//! neither can be read (or tested) alone. This test reads `src/**/*.rs`,
//! collects every `crate::module` a top-level module names outside
//! comments, literals and `#[cfg(test)]` items (a name re-exported at the
//! crate root counts as the module it comes from), and fails on a cycle,
//! printing it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

#[test]
fn the_core_modules_form_no_cycle() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graph.len() > 10, "too few modules found: {graph:?}");
    // The layers the code relies on; if one of these goes, the reader
    // below has stopped seeing references.
    for (from, to) in [
        ("snapshot", "time"),
        ("grace", "snapshot"),
        ("plan", "grace"),
        ("verdict", "sweep"),
        ("grace_update", "sweep"),
    ] {
        assert!(
            graph[from].contains(to),
            "{from} -> {to} not seen: {graph:?}"
        );
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "the core's modules form a cycle: {}\n{}",
            cycle.join(" -> "),
            show(&graph)
        );
    }
}

fn show(graph: &Graph) -> String {
    graph
        .iter()
        .map(|(m, to)| {
            let to: Vec<&str> = to.iter().map(String::as_str).collect();
            format!("  {m} -> {}\n", to.join(", "))
        })
        .collect()
}

/// A cycle of `graph` as the path around it (its first module repeated
/// at the end), or `None` when it has none.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &Graph,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let start = path.iter().position(|n| n == node).unwrap_or(0);
                let mut cycle = path[start..].to_vec();
                cycle.push(node.to_owned());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node.to_owned(), Mark::Open);
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, marks, path) {
                return Some(cycle);
            }
        }
        path.pop();
        marks.insert(node.to_owned(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut marks, &mut Vec::new()))
}

/// Which top-level module names which, from the sources under `src`.
fn module_graph(src: &Path) -> Graph {
    let lib = code_of(&fs::read_to_string(src.join("lib.rs")).unwrap());
    let modules = declared_modules(&lib);
    let reexports = root_reexports(&lib, &modules);
    let mut graph: Graph = modules
        .iter()
        .map(|m| (m.clone(), BTreeSet::new()))
        .collect();
    for file in rust_files(src) {
        let rel = file.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_owned();
        if module == "lib" {
            continue;
        }
        assert!(
            modules.contains(&module),
            "{} is not in a module lib.rs declares",
            rel.display()
        );
        let code = code_of(&fs::read_to_string(&file).unwrap());
        for name in crate_references(&code) {
            let target = if modules.contains(&name) {
                name
            } else if let Some(m) = reexports.get(&name) {
                m.clone()
            } else {
                panic!(
                    "{}: crate::{name} names neither a module nor a re-export of lib.rs",
                    rel.display()
                )
            };
            if target != module {
                graph.get_mut(&module).unwrap().insert(target);
            }
        }
    }
    graph
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The modules `lib.rs` declares (`mod x;`, `pub mod x;`).
fn declared_modules(lib: &str) -> BTreeSet<String> {
    let mut modules = BTreeSet::new();
    let words: Vec<&str> = lib.split_whitespace().collect();
    for pair in words.windows(2) {
        if pair[0] == "mod" {
            if let Some(name) = pair[1].strip_suffix(';') {
                modules.insert(name.to_owned());
            }
        }
    }
    modules
}

/// What `lib.rs` re-exports at the root, by name, and the module each comes
/// from: `crate::Snapshot` is a reference to `snapshot`.
fn root_reexports(lib: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for statement in lib.split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let (module, rest) = path.split_once("::").expect("a path");
        assert!(modules.contains(module), "pub use {path}");
        for name in rest.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if !name.is_empty() && !modules.contains(name) {
                names.insert(name.to_owned(), module.to_owned());
            }
        }
    }
    names
}

/// The first name after every `crate::` in `code`, and every first name of
/// a `crate::{a::x, b}` group.
fn crate_references(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        // `pub(crate)` and such are followed by `)`, never by `::`.
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let tail = rest.trim_start();
        if let Some(group) = tail.strip_prefix('{') {
            let group = &group[..matching_close(group)];
            for item in top_level_items(group) {
                if let Some(name) = first_ident(item) {
                    names.insert(name);
                }
            }
        } else if let Some(name) = first_ident(tail) {
            names.insert(name);
        }
    }
    names
}

fn first_ident(text: &str) -> Option<String> {
    let name: String = text
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty() && name != "self").then_some(name)
}

/// The index of the `}` closing a group whose text starts after its `{`.
fn matching_close(text: &str) -> usize {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return i,
            '}' => depth -= 1,
            _ => {}
        }
    }
    panic!("an unclosed group: {text}")
}

/// The comma-separated items of a group, nested groups kept whole.
fn top_level_items(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    items
}

/// `source` without comments, without the contents of string and char
/// literals (so that braces and paths inside them do not count), and
/// without the items under `#[cfg(test)]`: tests may reach anywhere.
fn code_of(source: &str) -> String {
    without_test_items(&without_comments_and_literals(source))
}

fn without_comments_and_literals(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            loop {
                if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else if i >= chars.len() {
                    break;
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r'
            && (at(i + 1) == '"' || at(i + 1) == '#')
            && !at(i.wrapping_sub(1)).is_alphanumeric()
            && raw_string_hashes(&chars, i + 1).is_some()
        {
            let hashes = raw_string_hashes(&chars, i + 1).unwrap_or(0);
            i += 2 + hashes;
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            while i < chars.len() && !chars[i..].starts_with(&close) {
                i += 1;
            }
            i += close.len();
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && at(i + 1) == '\\' {
            // An escaped char literal: '\n', '\'', '\u{..}'.
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else if c == '\'' && at(i + 2) == '\'' {
            i += 3;
            out.push_str("' '");
        } else {
            // Anything else, a lifetime's quote included, is code.
            out.push(c);
            i += 1;
        }
    }
    out
}

/// With `chars[at]` after an `r`: the number of `#` before the opening
/// quote of a raw string, or `None` when it is not one.
fn raw_string_hashes(chars: &[char], at: usize) -> Option<usize> {
    let hashes = chars[at..].iter().take_while(|c| **c == '#').count();
    (chars.get(at + hashes) == Some(&'"')).then_some(hashes)
}

/// `code` less every item under `#[cfg(test)]`: up to the end of its
/// braced body, or its `;` when it has none.
fn without_test_items(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        rest = &rest[at + "#[cfg(test)]".len()..];
        let body = rest.find('{');
        let end = rest.find(';');
        rest = match (body, end) {
            (Some(b), Some(e)) if e < b => &rest[e + 1..],
            (Some(b), _) => {
                let inner = &rest[b + 1..];
                &inner[matching_close(inner) + 1..]
            }
            (None, Some(e)) => &rest[e + 1..],
            (None, None) => "",
        };
    }
    out.push_str(rest);
    out
}

fn graph(edges: &[(&str, &str)]) -> Graph {
    let mut g = Graph::new();
    for (from, to) in edges {
        g.entry(from.to_string())
            .or_default()
            .insert(to.to_string());
        g.entry(to.to_string()).or_default();
    }
    g
}

#[test]
fn the_cycle_finder_finds_a_cycle_and_names_it() {
    let acyclic = graph(&[("a", "b"), ("b", "c"), ("a", "c"), ("d", "a")]);
    assert_eq!(find_cycle(&acyclic), None);
    let cyclic = graph(&[("a", "b"), ("b", "c"), ("c", "d"), ("d", "b"), ("e", "a")]);
    assert_eq!(
        find_cycle(&cyclic).unwrap(),
        ["b", "c", "d", "b"].map(String::from)
    );
    let to_itself = graph(&[("a", "a")]);
    assert_eq!(
        find_cycle(&to_itself).unwrap(),
        ["a", "a"].map(String::from)
    );
}

#[test]
fn references_are_read_from_code_only() {
    let source = r###"
        //! A doc link to [`crate::doc_only`].
        use crate::{alpha::A, beta, gamma::{x, y}};
        use crate::delta::D;
        pub(crate) fn f() -> crate::Epsilon { let _ = "crate::in_a_string {"; let _ = '{'; }
        let _ = r#"crate::in_a_raw_string }"#;
        /* crate::in_a_block_comment */
        fn g<'a>(x: &'a str) -> &'a str { crate::zeta::z(x) }
        #[cfg(test)]
        mod tests {
            use crate::only_in_tests;
            const T: &str = "}";
        }
        use crate::eta;
    "###;
    let names = crate_references(&code_of(source));
    let want: BTreeSet<String> = ["alpha", "beta", "gamma", "delta", "Epsilon", "zeta", "eta"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(names, want);
}

#[test]
fn root_reexports_count_as_their_module() {
    let lib = code_of(
        "pub mod plan;\nmod names;\npub use plan::{plan, Hold, SweepPlan};\npub use names::Name;\n",
    );
    let modules = declared_modules(&lib);
    assert_eq!(modules, ["names", "plan"].map(String::from).into());
    let names = root_reexports(&lib, &modules);
    assert_eq!(names["SweepPlan"], "plan");
    assert_eq!(names["Name"], "names");
    assert!(!names.contains_key("plan"), "a module stays a module");
}
