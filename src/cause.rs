//! Why something failed, as every error of the library says it by its type
//! ([`HasCause::why`]): the host cannot do it (a kernel feature or a tool is missing, not root),
//! the user's input is wrong, the run itself failed, or a signal ended it. The cause decides
//! what happens next: a study skips a trial the host cannot run and fails the others; a command
//! exits with the status each variant names.

/// Why something failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The host cannot do it (kernel feature, tool, privileges): a trial is skipped, with the
    /// reason; a command exits with status 1.
    Host,
    /// The user's input is wrong (a study file, a flag, a parameter): exit status 2.
    Input,
    /// The run itself failed: exit status 1.
    Run,
    /// Ended by Ctrl-C or SIGTERM: exit status 130.
    Interrupted,
}

/// An error that knows its cause.
pub trait HasCause {
    /// Why it failed (named so as not to meet `std::error::Error::cause`).
    fn why(&self) -> Cause;
}
