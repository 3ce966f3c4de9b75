//! The command line's error kinds and the exit status each one gives: a usage error (2), an
//! interruption (130), anything else (1); and the one-line message printed for an error.

use iotrial::cause::{Cause, HasCause};

/// An error caused by the user's input: exit status 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UsageError {}

/// Ended by Ctrl-C or SIGTERM: exit status 130.
#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted; files made by the run were removed and no result was written")
    }
}
impl std::error::Error for Interrupted {}

/// A usage error (exit status 2) with this text.
pub fn usage(e: impl std::fmt::Display) -> anyhow::Error {
    UsageError(e.to_string()).into()
}

/// A library error, ending the command with the exit status its cause says.
pub fn failed<E>(e: E) -> anyhow::Error
where
    E: HasCause + std::error::Error + Send + Sync + 'static,
{
    match e.why() {
        Cause::Input => usage(e),
        Cause::Interrupted => Interrupted.into(),
        Cause::Host | Cause::Run => e.into(),
    }
}

/// A flag's value the library refused: its message prefixed with the flag.
pub fn refused_flag<E: HasCause + std::fmt::Display>(flag: &str, e: E) -> anyhow::Error {
    let message = format!("{flag}: {e}");
    match e.why() {
        Cause::Input => usage(message),
        _ => anyhow::anyhow!(message),
    }
}

/// The exit status an error ends the command with.
pub fn exit_status(e: &anyhow::Error) -> u8 {
    if e.downcast_ref::<UsageError>().is_some() {
        2
    } else if e.downcast_ref::<Interrupted>().is_some() {
        130
    } else {
        1
    }
}

/// The error and its causes on one line, `outer: cause: ...`, leaving out a cause whose text the
/// line already holds (an error whose message quotes its source).
pub fn message(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::message;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot start in /dev/loop1: {source}")]
    struct Quoting {
        source: std::io::Error,
    }

    #[test]
    fn a_cause_the_message_already_quotes_is_said_once() {
        let e = anyhow::Error::new(Quoting {
            source: std::io::Error::other("not a directory"),
        });
        assert_eq!(message(&e), "cannot start in /dev/loop1: not a directory");
        let e = anyhow::Error::new(std::io::Error::other("gone")).context("reading x");
        assert_eq!(message(&e), "reading x: gone");
    }
}
