//! A workload outcome for tests' own workloads: its verdict is whatever JSON the test counted,
//! and the parameters such a workload takes are none that matter.

use iotrial::params::{Kind, ParamSpec};
use iotrial::present::Rows;
use iotrial::workload::Outcome;
use serde_json::Value;

/// Parameters of a test's workload: one that nothing reads.
pub static UNUSED_PARAMS: &[ParamSpec] = &[ParamSpec::new("unused", Kind::Count, "0", "nothing")];

/// An outcome whose verdict is the JSON a test counted.
pub struct Counted(pub Value);

impl Outcome for Counted {
    fn streams_json(&self) -> Vec<Value> {
        Vec::new()
    }
    fn verdict_json(&self) -> Value {
        self.0.clone()
    }
    fn stream_rows(&self) -> Rows {
        Rows::default()
    }
    fn verdict_line(&self) -> String {
        self.0.to_string()
    }
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
}
