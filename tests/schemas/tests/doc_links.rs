//! Every link in the repository's Markdown resolves.
//!
//! The documentation is split over README.md, CONTRIBUTING.md and docs/,
//! and the files link to each other's sections. A renamed heading or a
//! moved file silently breaks such a link, and an operator following the
//! guide lands nowhere. So every relative link must name a file or folder
//! that exists inside the repository, and every `#anchor` a heading of the
//! Markdown file it points at, slugged as GitHub slugs headings. External
//! links are never fetched (tests send no traffic off the machine), but
//! must be well-formed `http(s)` URLs.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// Folders never walked: build output, fuzzing's generated corpora and
/// crashes, and anything hidden (`.git`, `.ci`).
const SKIPPED_DIRS: &[&str] = &["target", "node_modules"];
const SKIPPED_PATHS: &[&str] = &["fuzz/corpus", "fuzz/artifacts", "fuzz/target"];

/// What is wrong with one link.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Broken {
    /// A relative link to a path that does not exist.
    MissingFile { file: String, link: String },
    /// A relative link that leaves the repository.
    OutsideRepository { file: String, link: String },
    /// An anchor that no heading of the target file has.
    MissingAnchor { file: String, link: String },
    /// An anchor into a file that has no headings to slug (not Markdown),
    /// other than GitHub's line anchors (`#L10`, `#L10-L20`).
    AnchorIntoNonMarkdown { file: String, link: String },
    /// An external link that is not a well-formed http(s) URL.
    MalformedExternal { file: String, link: String },
}

impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, file, link) = match self {
            Broken::MissingFile { file, link } => ("no such file", file, link),
            Broken::OutsideRepository { file, link } => ("outside the repository", file, link),
            Broken::MissingAnchor { file, link } => ("no heading has this anchor", file, link),
            Broken::AnchorIntoNonMarkdown { file, link } => {
                ("anchor into a file that is not Markdown", file, link)
            }
            Broken::MalformedExternal { file, link } => ("malformed external link", file, link),
        };
        write!(f, "{file}: {link}: {what}")
    }
}

/// The Markdown files checked, by path relative to the repository root
/// (with `/` separators), and their text.
type Docs = BTreeMap<String, String>;

/// The text of `text` with fenced code blocks blanked out (line count
/// kept): a `#` or `[x](y)` inside a code block is neither a heading nor a
/// link.
fn without_fences(text: &str) -> Vec<&str> {
    let mut fence: Option<(char, usize)> = None;
    text.lines()
        .map(|line| {
            let trimmed = line.trim_start();
            let indent = line.len() - trimmed.len();
            let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
            let run = marker.map_or(0, |c| trimmed.chars().take_while(|x| *x == c).count());
            match (fence, marker) {
                (None, Some(c)) if indent <= 3 && run >= 3 => {
                    fence = Some((c, run));
                    ""
                }
                (Some((c, n)), Some(m))
                    if m == c && run >= n && trimmed[run * c.len_utf8()..].trim().is_empty() =>
                {
                    fence = None;
                    ""
                }
                (Some(_), _) => "",
                (None, _) => line,
            }
        })
        .collect()
}

/// `block` with every code span removed, a run of n backticks closing
/// only at a run of exactly n; an unmatched run stays literal.
fn without_code_spans(block: &str) -> String {
    let chars: Vec<char> = block.chars().collect();
    let mut out = String::with_capacity(block.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let open = chars[i..].iter().take_while(|c| **c == '`').count();
        let mut j = i + open;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let run = chars[j..].iter().take_while(|c| **c == '`').count();
                if run == open {
                    close = Some(j + run);
                    break;
                }
                j += run;
            } else {
                j += 1;
            }
        }
        match close {
            Some(end) => {
                out.push(' ');
                i = end;
            }
            None => {
                out.extend(&chars[i..i + open]);
                i += open;
            }
        }
    }
    out
}

/// The anchor GitHub gives a heading whose source text is `heading`:
/// inline code keeps its text, a link its label; lower-cased; every
/// character but letters, digits, `_`, `-` and spaces dropped; spaces
/// become `-`.
fn slug(heading: &str) -> String {
    let rendered = render_inline(heading);
    rendered
        .chars()
        .flat_map(char::to_lowercase)
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c),
            _ => None,
        })
        .collect()
}

/// A heading's text as rendered: backticks dropped, `[label](dest)` as
/// its label.
fn render_inline(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let Some((label, dest)) = after.split_once("](") else {
            break;
        };
        let Some(close) = dest.find(')') else { break };
        out.push_str(&rest[..open]);
        out.push_str(label);
        rest = &dest[close + 1..];
    }
    out.push_str(rest);
    out.replace('`', "")
}

/// Every anchor a Markdown text defines: its ATX headings' slugs (a
/// repeated slug gets `-1`, `-2`, ... as on GitHub), and explicit
/// `id="..."` or `name="..."` attributes of HTML tags.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for line in without_fences(text) {
        let trimmed = line.trim_start();
        if line.len() - trimmed.len() <= 3 {
            let level = trimmed.chars().take_while(|c| *c == '#').count();
            let rest = &trimmed[level..];
            if (1..=6).contains(&level) && (rest.is_empty() || rest.starts_with([' ', '\t'])) {
                let text = rest.trim().trim_end_matches('#').trim_end();
                let base = slug(text);
                let n = seen.entry(base.clone()).or_insert(0);
                out.insert(if *n == 0 {
                    base.clone()
                } else {
                    format!("{base}-{n}")
                });
                *n += 1;
            }
        }
        for attr in ["id=\"", "name=\""]
            .into_iter()
            .filter(|_| line.contains('<'))
        {
            let mut rest = line;
            while let Some(at) = rest.find(attr) {
                let value = &rest[at + attr.len()..];
                if let Some(end) = value.find('"') {
                    out.insert(value[..end].to_owned());
                }
                rest = value;
            }
        }
    }
    out
}

/// Every link destination in a Markdown text: inline links and images
/// (`[x](dest)`, `![x](dest)`), autolinks (`<https://...>`) and reference
/// definitions (`[x]: dest`), outside code blocks and code spans.
fn links(text: &str) -> Vec<String> {
    let lines = without_fences(text);
    let mut out = Vec::new();
    for block in lines.join("\n").split("\n\n") {
        let block = without_code_spans(block);
        let mut rest = block.as_str();
        while let Some(at) = rest.find("](") {
            let dest = &rest[at + 2..];
            let mut depth = 0usize;
            let end = dest
                .char_indices()
                .find(|&(_, c)| match c {
                    '(' => {
                        depth += 1;
                        false
                    }
                    ')' if depth == 0 => true,
                    ')' => {
                        depth -= 1;
                        false
                    }
                    _ => false,
                })
                .map_or(dest.len(), |(i, _)| i);
            out.push(destination(&dest[..end]));
            rest = &dest[end..];
        }
        let mut rest = block.as_str();
        while let Some(at) = rest.find("<http") {
            let url = &rest[at + 1..];
            let end = url.find('>').unwrap_or(url.len());
            // `[x](<https://...>)` was taken as an inline link above.
            if !rest[..at].ends_with('(') {
                out.push(url[..end].to_owned());
            }
            rest = &url[end..];
        }
        for line in block.lines() {
            let trimmed = line.trim_start();
            if line.len() - trimmed.len() <= 3 && trimmed.starts_with('[') {
                if let Some((_, dest)) = trimmed.split_once("]: ") {
                    out.push(destination(dest));
                }
            }
        }
    }
    out
}

/// A link's destination without its title (`dest "title"`) or angle
/// brackets (`<dest>`).
fn destination(raw: &str) -> String {
    let raw = raw.trim();
    if let Some(inner) = raw.strip_prefix('<') {
        return inner.split('>').next().unwrap_or_default().to_owned();
    }
    raw.split_whitespace().next().unwrap_or_default().to_owned()
}

/// Whether `url` is a well-formed http(s) URL: a scheme, a host of
/// letters, digits, dots and dashes (with an optional port), and no
/// whitespace or control character anywhere.
fn well_formed_external(url: &str) -> bool {
    let Some(rest) = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
    else {
        return false;
    };
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return false;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    };
    !host.is_empty()
        && !host.starts_with(['.', '-'])
        && !host.ends_with(['.', '-'])
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && port.is_none_or(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// `path` (relative to the repository root, `/`-separated) joined to a
/// link's relative `target`, normalised; `None` when it leaves the root.
fn resolve(from_dir: &str, target: &str) -> Option<String> {
    let joined = if let Some(abs) = target.strip_prefix('/') {
        PathBuf::from(abs)
    } else {
        Path::new(from_dir).join(target)
    };
    let mut parts: Vec<String> = Vec::new();
    for c in joined.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    Some(parts.join("/"))
}

/// Whether an anchor into a file that is not Markdown is one GitHub
/// gives every line: `L10` or `L10-L20`.
fn is_line_anchor(anchor: &str) -> bool {
    let line = |s: &str| {
        s.strip_prefix('L')
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    match anchor.split_once('-') {
        Some((a, b)) => line(a) && line(b),
        None => line(anchor),
    }
}

/// Every broken link of `docs`. `exists` says whether a path relative to
/// the repository root (`""` is the root) is a file or folder there.
fn check(docs: &Docs, exists: &dyn Fn(&str) -> bool) -> Vec<Broken> {
    let anchors_of: BTreeMap<&str, BTreeSet<String>> = docs
        .iter()
        .map(|(path, text)| (path.as_str(), anchors(text)))
        .collect();
    let mut broken = Vec::new();
    for (file, text) in docs {
        let dir = file.rsplit_once('/').map_or("", |(dir, _)| dir);
        for link in links(text) {
            let err = |make: fn(String, String) -> Broken| make(file.clone(), link.clone());
            if link.starts_with("http://") || link.starts_with("https://") {
                if !well_formed_external(&link) {
                    broken.push(err(|file, link| Broken::MalformedExternal { file, link }));
                }
                continue;
            }
            if link.starts_with("mailto:") {
                continue;
            }
            if link.contains("://") || link.chars().any(char::is_whitespace) || link.is_empty() {
                broken.push(err(|file, link| Broken::MalformedExternal { file, link }));
                continue;
            }
            let (path, anchor) = match link.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (link.as_str(), None),
            };
            let path = path.split('?').next().unwrap_or_default();
            let target = if path.is_empty() {
                file.clone()
            } else {
                match resolve(dir, &path.replace("%20", " ")) {
                    Some(target) => target,
                    None => {
                        broken.push(err(|file, link| Broken::OutsideRepository { file, link }));
                        continue;
                    }
                }
            };
            if !docs.contains_key(&target) && !exists(&target) {
                broken.push(err(|file, link| Broken::MissingFile { file, link }));
                continue;
            }
            let Some(anchor) = anchor.filter(|a| !a.is_empty()) else {
                continue;
            };
            match anchors_of.get(target.as_str()) {
                Some(known) if known.contains(anchor) => {}
                Some(_) => broken.push(err(|file, link| Broken::MissingAnchor { file, link })),
                None if target.ends_with(".md") => {
                    broken.push(err(|file, link| Broken::MissingAnchor { file, link }));
                }
                None if is_line_anchor(anchor) => {}
                None => {
                    broken.push(err(|file, link| Broken::AnchorIntoNonMarkdown {
                        file,
                        link,
                    }));
                }
            }
        }
    }
    broken
}

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every Markdown file of the repository outside build output, fuzzing's
/// generated files and hidden folders.
fn markdown_files(root: &Path) -> Docs {
    let mut docs = Docs::new();
    let mut stack = vec![String::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
        for entry in entries {
            let entry = entry.unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let kind = entry
                .file_type()
                .unwrap_or_else(|e| panic!("cannot stat {path}: {e}"));
            if kind.is_dir() {
                if !name.starts_with('.')
                    && !SKIPPED_DIRS.contains(&name.as_str())
                    && !SKIPPED_PATHS.contains(&path.as_str())
                {
                    stack.push(path);
                }
            } else if name.ends_with(".md") {
                let text = std::fs::read_to_string(entry.path())
                    .unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
                docs.insert(path, text);
            }
        }
    }
    docs
}

#[test]
fn every_link_of_the_documentation_resolves() {
    let root = repository_root();
    let docs = markdown_files(&root);
    // The walk itself must have found the documentation, or an empty walk
    // would pass.
    for expected in [
        "README.md",
        "CONTRIBUTING.md",
        "CHANGELOG.md",
        "docs/guide.md",
        "docs/reference.md",
        "docs/embedding.md",
        "docs/ARCHITECTURE.md",
        "fuzz/README.md",
    ] {
        assert!(docs.contains_key(expected), "{expected} was not walked");
    }
    let total: usize = docs.values().map(|t| links(t).len()).sum();
    assert!(
        total > 100,
        "only {total} links found: the parser lost them"
    );

    let broken = check(&docs, &|path| root.join(path).exists());
    let list: Vec<String> = broken.iter().map(ToString::to_string).collect();
    assert!(broken.is_empty(), "broken links:\n{}", list.join("\n"));
}

#[test]
fn the_readme_stays_short() {
    let readme =
        std::fs::read_to_string(repository_root().join("README.md")).expect("README.md reads");
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; the guide and reference in docs/ hold the rest"
    );
}

mod checker {
    use super::*;

    fn docs(files: &[(&str, &str)]) -> Docs {
        files
            .iter()
            .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
            .collect()
    }

    fn only<'a>(files: &'a [&'a str]) -> impl Fn(&str) -> bool + 'a {
        move |path| path.is_empty() || files.contains(&path)
    }

    #[test]
    fn slugs_are_githubs() {
        assert_eq!(
            slug("Which swarm, without `--config`"),
            "which-swarm-without---config"
        );
        assert_eq!(
            slug("Planning from another language (WebAssembly)"),
            "planning-from-another-language-webassembly"
        );
        assert_eq!(
            slug("Reaching every node's volumes"),
            "reaching-every-nodes-volumes"
        );
        assert_eq!(slug("What `apply` does"), "what-apply-does");
        assert_eq!(slug("[Unreleased](https://x.invalid/)"), "unreleased");
        assert_eq!(slug("snake_case and 2.0"), "snake_case-and-20");
    }

    #[test]
    fn repeated_headings_are_numbered_and_code_blocks_hold_none() {
        let text = "# A\n\n## A\n\n```sh\n# not a heading\n```\n\n## B ##\n";
        let found = anchors(text);
        let want: BTreeSet<String> = ["a", "a-1", "b"].iter().map(|s| (*s).to_owned()).collect();
        assert_eq!(found, want);
    }

    #[test]
    fn links_in_code_are_not_links() {
        let text =
            "[a](x.md) `[b](y.md)`\n\n```\n[c](z.md)\n```\n\n<https://e.invalid/p>\n\n[r]: w.md\n";
        assert_eq!(links(text), ["x.md", "https://e.invalid/p", "w.md"]);
    }

    #[test]
    fn good_links_pass() {
        let d = docs(&[
            ("README.md", "# Top\n\n[guide](docs/guide.md#the-part) [self](#top) [code](core/src/lib.rs#L3) [dir](docs/) [out](https://example.invalid/a?b#c)\n"),
            ("docs/guide.md", "# Guide\n\n## The part\n\n[back](../README.md#top)\n"),
        ]);
        assert_eq!(check(&d, &only(&["core/src/lib.rs", "docs"])), []);
    }

    #[test]
    fn a_missing_file_fails() {
        let d = docs(&[("README.md", "[gone](docs/gone.md)\n")]);
        assert_eq!(
            check(&d, &only(&[])),
            [Broken::MissingFile {
                file: "README.md".into(),
                link: "docs/gone.md".into()
            }]
        );
    }

    #[test]
    fn a_missing_anchor_fails_in_the_same_file_and_in_another() {
        let d = docs(&[
            (
                "README.md",
                "# Top\n\n[x](#nowhere) [y](docs/guide.md#old-name)\n",
            ),
            ("docs/guide.md", "# Guide\n\n## New name\n"),
        ]);
        assert_eq!(
            check(&d, &only(&[])),
            [
                Broken::MissingAnchor {
                    file: "README.md".into(),
                    link: "#nowhere".into()
                },
                Broken::MissingAnchor {
                    file: "README.md".into(),
                    link: "docs/guide.md#old-name".into()
                },
            ]
        );
    }

    #[test]
    fn leaving_the_repository_fails() {
        let d = docs(&[("docs/a.md", "[up](../../etc/passwd)\n")]);
        assert!(matches!(
            check(&d, &|_| true).as_slice(),
            [Broken::OutsideRepository { .. }]
        ));
    }

    #[test]
    fn an_anchor_into_source_must_be_a_line() {
        let d = docs(&[("README.md", "[a](src/x.rs#L2-L9) [b](src/x.rs#main)\n")]);
        assert_eq!(
            check(&d, &only(&["src/x.rs"])),
            [Broken::AnchorIntoNonMarkdown {
                file: "README.md".into(),
                link: "src/x.rs#main".into()
            }]
        );
    }

    #[test]
    fn malformed_external_links_fail() {
        for bad in [
            "https://",
            "https://exa mple.invalid/",
            "https://-bad.invalid/",
            "https://host.invalid:port/",
            "ftp://host.invalid/",
        ] {
            let d = docs(&[("README.md", &format!("[x](<{bad}>)\n"))]);
            assert!(
                matches!(
                    check(&d, &only(&[])).as_slice(),
                    [Broken::MalformedExternal { .. }]
                ),
                "{bad} passed"
            );
        }
        assert!(well_formed_external("https://docs.rs/sweep-core"));
        assert!(well_formed_external("http://127.0.0.1:9090/metrics"));
    }
}
