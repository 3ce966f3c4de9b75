//! `iotrial completions SHELL` and `iotrial man [SUBCOMMAND]`: shell completion scripts
//! (clap_complete) and roff man pages (clap_mangen), made from the one clap definition of the
//! command line, so they name every subcommand, flag and value the parser takes.

use super::errors::usage;
use anyhow::Result;
use clap::CommandFactory;

/// The shells completions are written for.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// Prints the completion script of `shell` (source it, or put it where the shell loads
/// completions from).
pub fn completions(shell: Shell) -> Result<()> {
    let mut cmd = super::Cli::command();
    let shell = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "iotrial", &mut out);
    print(&out)
}

/// Lets a listing end quietly when its reader stops early (`iotrial list models | head`), as
/// other commands that only print do: SIGPIPE back to its default, which Rust's runtime had
/// set to be ignored. Only for subcommands that print and hold nothing to release.
pub fn quiet_on_closed_pipe() {
    // SAFETY: setting a signal's disposition to its default has no preconditions; it runs
    // before any thread of this process is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Writes `bytes` to stdout; a reader that stopped early (`| head`) is no error.
fn print(bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    match std::io::stdout().write_all(bytes) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}

/// The page with its `.TH` request first (clap_mangen opens with the definition of a string
/// its text uses, which roff takes as well after the title).
fn title_first(page: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(page);
    let (th, rest): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| l.starts_with(".TH "));
    let mut out = th.join("\n");
    for l in rest {
        out.push('\n');
        out.push_str(l);
    }
    out.push('\n');
    out.into_bytes()
}

/// Prints iotrial(1) as roff (its subcommands listed), or iotrial-SUBCOMMAND(1) with the
/// subcommand's own synopsis and options.
pub fn man(subcommand: Option<String>) -> Result<()> {
    let cmd = super::Cli::command();
    let page = match subcommand {
        None => cmd,
        Some(name) => {
            let Some(sub) = cmd
                .get_subcommands()
                .find(|s| s.get_name() == name && !s.is_hide_set())
            else {
                let known: Vec<&str> = cmd
                    .get_subcommands()
                    .filter(|s| !s.is_hide_set())
                    .map(|s| s.get_name())
                    .collect();
                return Err(usage(format!(
                    "man: no subcommand '{name}'; iotrial has: {}",
                    known.join(", ")
                )));
            };
            let full = format!("iotrial-{name}");
            sub.clone()
                .name(full.clone())
                .display_name(full)
                .bin_name(format!("iotrial {name}"))
                .version(env!("CARGO_PKG_VERSION"))
        }
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(page).render(&mut out)?;
    print(&title_first(&out))
}
