//! One fio option as iotrial reads it ([`Opt`]): its names, how it sets a job when iotrial
//! honours it, and what iotrial does with it ([`Status`]); made by [`honoured`], [`ignored`]
//! and [`refused`], the words every option table is written in.

use super::values::Arg;
use crate::workload::job::spec::JobSpec;

/// The fio release whose options (its HOWTO) iotrial follows.
pub const FIO_VERSION: &str = "3.33";

/// How an option sets a job.
pub type Setter = fn(&mut JobSpec, &Arg) -> Result<(), String>;

/// What iotrial does with one fio option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Honoured as fio honours it.
    Honoured,
    /// Honoured, with this difference.
    Differs(&'static str),
    /// Accepted and ignored: why that is harmless.
    Ignored(&'static str),
    /// Refused: why.
    Refused(&'static str),
}

impl Status {
    /// The status's word in the table.
    pub fn word(self) -> &'static str {
        match self {
            Status::Honoured => "honoured",
            Status::Differs(_) => "honoured, differs",
            Status::Ignored(_) => "ignored",
            Status::Refused(_) => "refused",
        }
    }

    /// The difference, or why it is ignored or refused.
    pub fn why(self) -> &'static str {
        match self {
            Status::Honoured => "",
            Status::Differs(w) | Status::Ignored(w) | Status::Refused(w) => w,
        }
    }
}

/// One fio option: its names (the first is the option's, the rest aliases), how it sets a job
/// (honoured ones), what iotrial does with it, the engines it belongs to, and whether it is a
/// listed in fio [`FIO_VERSION`]'s HOWTO.
pub struct Opt {
    pub names: &'static [&'static str],
    pub set: Option<Setter>,
    pub status: Status,
    /// fio's engines the option is an option of; empty: every job's.
    pub engines: &'static [&'static str],
    /// Not in fio [`FIO_VERSION`]'s HOWTO: a later fio's option, an older one's, or one the
    /// HOWTO leaves out.
    pub unlisted: bool,
    /// Where iotrial's default differs from fio's: what it is and why.
    pub default: Option<&'static str>,
}

/// An option iotrial honours as fio does.
pub const fn honoured(names: &'static [&'static str], set: Setter) -> Opt {
    Opt {
        names,
        set: Some(set),
        status: Status::Honoured,
        engines: &[],
        unlisted: false,
        default: None,
    }
}

/// An option iotrial accepts and ignores, with why that is harmless.
pub const fn ignored(names: &'static [&'static str], why: &'static str) -> Opt {
    Opt {
        names,
        set: None,
        status: Status::Ignored(why),
        engines: &[],
        unlisted: false,
        default: None,
    }
}

/// An option iotrial refuses, with why.
pub const fn refused(names: &'static [&'static str], why: &'static str) -> Opt {
    Opt {
        names,
        set: None,
        status: Status::Refused(why),
        engines: &[],
        unlisted: false,
        default: None,
    }
}

impl Opt {
    /// Honoured with this difference.
    pub const fn differs(self, how: &'static str) -> Opt {
        Opt {
            status: Status::Differs(how),
            ..self
        }
    }

    /// An option of these engines.
    pub const fn of(self, engines: &'static [&'static str]) -> Opt {
        Opt { engines, ..self }
    }

    /// An option fio [`FIO_VERSION`]'s HOWTO does not list.
    pub const fn unlisted(self) -> Opt {
        Opt {
            unlisted: true,
            ..self
        }
    }

    /// iotrial's default differs from fio's: how.
    pub const fn default_differs(self, how: &'static str) -> Opt {
        Opt {
            default: Some(how),
            ..self
        }
    }

    /// The option's name.
    pub fn name(&self) -> &'static str {
        self.names[0]
    }
}
