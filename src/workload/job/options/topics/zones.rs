//! fio's zone options: `zonemode` (none, strided, zbd), `zonesize`, `zonerange`, `zoneskip`,
//! `max_open_zones` (`job_max_open_zones`), `zone_reset_threshold`, `zone_reset_frequency`,
//! `read_beyond_wp`. Sizes and offsets in zones (`offset=524z`) count `zonesize` bytes each.

use crate::workload::job::options::Opt;
use crate::workload::job::spec::ZoneMode;

/// The options of this module.
pub static OPTIONS: &[Opt] = &[
    opt!(["zonemode"], |j, a| {
        j.zones.mode = match a.choice(&["none", "strided", "zbd"])? {
            "strided" => ZoneMode::Strided,
            "zbd" => ZoneMode::Zbd,
            _ => ZoneMode::None,
        }
    }),
    opt!(["zonesize"], |j, a| j.zones.size = a.bytes()?),
    opt!(["zonerange"], |j, a| j.zones.range = a.bytes()?),
    opt!(["zoneskip"], |j, a| j.zones.skip = a.bytes()?),
    opt!(["max_open_zones", "job_max_open_zones"], |j, a| j
        .zones
        .max_open =
        a.int()?),
    opt!(["zone_reset_threshold"], |j, a| {
        let v = a.float()?;
        if !(0.0..=1.0).contains(&v) {
            return Err(format!("{}={v}: a fraction, 0 to 1", a.key));
        }
        j.zones.reset_threshold = v;
    }),
    opt!(["zone_reset_frequency"], |j, a| {
        let v = a.float()?;
        if !(0.0..=1.0).contains(&v) {
            return Err(format!("{}={v}: a fraction, 0 to 1", a.key));
        }
        j.zones.reset_frequency = v;
    }),
    opt!(["read_beyond_wp"], |j, a| j.zones.read_beyond_wp =
        a.flag()?),
];
