//! smallrand's stages, one phase each: their names, ops and offsets in the plan, and iozone's
//! names for them in the report.

use crate::engine::Op;

/// The phases in order: (phase name, op, random offsets), and iozone's name for the test.
pub const STAGES: [(&str, Op, bool); 6] = [
    ("write", Op::Write, false),
    ("rewrite", Op::Write, false),
    ("read", Op::Read, false),
    ("reread", Op::Read, false),
    ("random_read", Op::Read, true),
    ("random_write", Op::Write, true),
];

/// iozone's names of the tests, in [`STAGES`] order.
pub const IOZONE_NAMES: [&str; 6] = [
    "initial writers",
    "rewriters",
    "readers",
    "re-readers",
    "random readers",
    "random writers",
];
