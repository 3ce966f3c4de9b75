//! fio's options of what a job reports: its log files (`write_lat_log`, `write_bw_log`,
//! `write_iops_log`, `log_avg_msec`, `log_max_value` / `log_window_value`, `log_offset`,
//! `log_issue_time`, `per_job_logs`) and `group_reporting`, which makes
//! fio's json+ report a reporting group as one job.

use crate::workload::job::options::Opt;
use crate::workload::job::spec::LogWindow;

/// A log's name: the value, or empty (the job's name) for a bare option.
fn log_name(v: Option<&str>) -> Option<String> {
    Some(v.map(str::trim).unwrap_or("").to_string())
}

/// The options of this module.
pub static OPTIONS: &[Opt] = &[
    opt!(["write_lat_log"], |j, a| j.logs.lat = log_name(a.value)).differs(
        "its lat and clat logs hold the same latency, issue to completion; no slat log is written; the priority column is 0 (see log_prio)",
    ),
    opt!(["write_bw_log"], |j, a| j.logs.bw = log_name(a.value))
        .differs("the priority column is 0 (see log_prio)"),
    opt!(["write_iops_log"], |j, a| j.logs.iops = log_name(a.value))
        .differs("the priority column is 0 (see log_prio)"),
    opt!(["log_avg_msec"], |j, a| j.logs.avg_msec = a.int()?),
    opt!(["log_offset"], |j, a| j.logs.offset = a.flag()?),
    opt!(["log_max_value", "log_window_value"], |j, a| {
        j.logs.window = match a.choice(&["0", "1", "2", "avg", "max", "both"])? {
            "1" | "max" => LogWindow::Max,
            "2" | "both" => LogWindow::Both,
            _ => LogWindow::Avg,
        }
    }),
    opt!(["log_issue_time"], |j, a| j.logs.issue_time = a.flag()?).unlisted(),
    opt!(["per_job_logs"], |j, a| j.logs.per_job = a.flag()?),
    opt!(["group_reporting"], |j, a| j.group_reporting = a.flag()?),
];
