//! Shell completions and the man page, generated from the clap
//! definitions ([`crate::cli::command`]) so that neither can offer a flag
//! the binary refuses or miss one it takes.

use clap_complete::Shell;

use crate::output::{emit, OutputError};

const BIN: &str = "swarm-sweep";

/// The completion script for `shell`, on stdout.
pub fn completions(shell: Shell) -> Result<(), OutputError> {
    emit(&completion_script(shell))
}

/// The completion script for `shell`.
pub fn completion_script(shell: Shell) -> String {
    let mut cmd = crate::cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, BIN, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The man page, on stdout.
pub fn man() -> Result<(), OutputError> {
    emit(&man_page().map_err(OutputError::Write)?)
}

/// The man page: the command's own sections, then one section per
/// subcommand with its synopsis and options (clap_mangen alone lists
/// subcommands by name only, which leaves their flags undocumented), then
/// the exit status table.
pub fn man_page() -> std::io::Result<String> {
    let mut cmd = crate::cli::command().disable_help_subcommand(true);
    cmd.build();
    let page = clap_mangen::Man::new(cmd.clone());
    let mut out = Vec::new();
    page.render_title(&mut out)?;
    page.render_name_section(&mut out)?;
    page.render_synopsis_section(&mut out)?;
    page.render_description_section(&mut out)?;
    page.render_options_section(&mut out)?;
    page.render_subcommands_section(&mut out)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("{BIN} {}", sub.get_name());
        // Built above, so its bin name is already `swarm-sweep SUB`.
        let sub_page = clap_mangen::Man::new(sub.clone());
        out.extend_from_slice(format!(".SH \"{}\"\n", name.to_uppercase()).as_bytes());
        let mut section = Vec::new();
        sub_page.render_description_section(&mut section)?;
        sub_page.render_synopsis_section(&mut section)?;
        if sub.get_arguments().any(|a| !a.is_hide_set()) {
            sub_page.render_options_section(&mut section)?;
        }
        out.extend_from_slice(&demote(&section));
    }
    page.render_extra_section(&mut out)?;
    page.render_version_section(&mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// A subcommand's sections as subsections of its own section.
fn demote(roff: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(roff);
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        match line.strip_prefix(".SH ") {
            Some(rest) => {
                out.push_str(".SS ");
                out.push_str(rest);
            }
            None => out.push_str(line),
        }
    }
    out.into_bytes()
}
