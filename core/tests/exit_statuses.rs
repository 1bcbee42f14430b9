//! The exit status tables people read say what `verdict::Status` decides:
//! the verdict module's own table row for row, and the reference's table
//! (`docs/reference.md`) the same statuses in the same order, each with its
//! meaning. A status added, renumbered or reworded in one place and not
//! the other fails here, before a scheduler reads a wrong meaning.

use sweep_core::verdict::{Status, BAD_INPUT};

/// The rows `| `N` | cell | ...` of the first table after `heading` in
/// `text`, as (N, second cell).
fn status_rows<'a>(text: &'a str, heading: &str) -> Vec<(u8, &'a str)> {
    let start = text.find(heading).expect("the heading");
    text[start..]
        .lines()
        .map(|l| l.trim_start_matches("//!").trim())
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| {
            let mut cells = l.split('|').map(str::trim).skip(1);
            let code = cells.next()?.strip_prefix('`')?.strip_suffix('`')?;
            Some((code.parse().ok()?, cells.next()?))
        })
        .collect()
}

#[test]
fn the_statuses_are_numbered_in_order_and_each_once() {
    let codes: Vec<u8> = Status::ALL.iter().map(|s| s.code()).collect();
    assert_eq!(codes, [0, 1, 2, 3, 4]);
    for status in Status::ALL {
        assert_eq!(Status::from_code(status.code()), Some(status));
        assert!(!status.meaning().is_empty());
    }
    assert_eq!(Status::from_code(5), None);
    assert_eq!(Status::BadInput.code(), BAD_INPUT);
    // Ordered as the codes are: the greater of two verdicts is the worse.
    assert!(Status::ALL.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn the_verdict_module_documents_each_status_with_its_meaning() {
    let source = include_str!("../src/verdict.rs");
    let rows = status_rows(source, "| status | meaning |");
    let want: Vec<(u8, &str)> = Status::ALL
        .iter()
        .map(|s| (s.code(), s.meaning()))
        .collect();
    assert_eq!(rows, want);
}

#[test]
fn the_reference_documents_every_status_with_its_meaning() {
    let reference = include_str!("../../docs/reference.md");
    let begin = reference
        .find("<!-- exit-statuses:begin -->")
        .expect("the marked table");
    let end = reference
        .find("<!-- exit-statuses:end -->")
        .expect("its end");
    let rows = status_rows(&reference[begin..end], "| status |");
    let codes: Vec<u8> = rows.iter().map(|(code, _)| *code).collect();
    let decided: Vec<u8> = Status::ALL.iter().map(|s| s.code()).collect();
    assert_eq!(codes, decided);
    for ((_, cell), status) in rows.iter().zip(Status::ALL) {
        assert!(
            cell.contains(status.meaning()),
            "the reference says {cell:?} for {status:?}, not {:?}",
            status.meaning()
        );
    }
}
