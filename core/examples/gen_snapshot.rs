//! Writes a snapshot file of RELEASES releases spread evenly over SWARMS
//! swarms, in the JSON `swarm-sweep snapshot` writes and `plan --snapshot`
//! reads, without the indentation: pretty-printed, a million releases with
//! the facts a gather records would pass the 1 GiB a snapshot file may
//! take. The input of `bench/plan-vs-read`.
//!
//! `cargo run --release -p sweep-core --example gen_snapshot -- RELEASES SWARMS FILE`

use std::io::{BufWriter, Write};

#[path = "../benches/support/fixture.rs"]
mod fixture;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [releases, swarms, file] = &args[..] else {
        eprintln!("usage: gen_snapshot RELEASES SWARMS FILE");
        std::process::exit(2);
    };
    let (Ok(releases), Ok(swarms)) = (releases.parse::<usize>(), swarms.parse::<usize>()) else {
        eprintln!("gen_snapshot: RELEASES and SWARMS are counts");
        std::process::exit(2);
    };
    if swarms == 0 || releases % swarms != 0 {
        eprintln!("gen_snapshot: RELEASES must be a multiple of SWARMS");
        std::process::exit(2);
    }
    let snapshot = fixture::snapshot(swarms, releases / swarms);
    let written = std::fs::File::create(file).and_then(|f| {
        let mut out = BufWriter::new(f);
        serde_json::to_writer(&mut out, &snapshot)?;
        out.write_all(b"\n")?;
        out.flush()
    });
    if let Err(e) = written {
        eprintln!("gen_snapshot: {file}: {e}");
        std::process::exit(1);
    }
}
