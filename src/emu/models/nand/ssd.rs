//! `ssd`: a preset of the [`super::flash`] model with the figures of a SATA-2 SSD of 2010, the
//! kind seed 001 put its logs on (an Intel X25-M G2 160 GB: about 250 MB/s sequential reads,
//! 100 MB/s sequential writes, 65 µs read and 85 µs write latency in its data sheet). The flash
//! model maps whole allocation units and keeps a few open, which suits what an SSD log device
//! sees (sequential, circular writes); scattered small writes cost a unit copy each, which is
//! pessimistic for a page-mapped SSD.

use super::flash::{expect, Flash, FlashParams, IN_ORDER, REORDER};
use super::model::ModelDescriptor;
use crate::params::{Kind, ParamSpec};

/// Parameters of `ssd`: those of `flash`, with an SSD's defaults.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::new("size", Kind::Size, "16GiB", "logical capacity"),
    ParamSpec::new(
        "au",
        Kind::Size,
        "1MiB",
        "allocation unit (mapping and erase granule)",
    ),
    ParamSpec::new(
        "open_units",
        Kind::Count,
        "16",
        "units open for writing at once (1-16)",
    ),
    ParamSpec::new(
        "access",
        Kind::Duration,
        "0.075ms",
        "command and page access time per request (65 µs read, 85 µs write in the data sheet)",
    ),
    ParamSpec::new("read_rate", Kind::Float, "250", "read transfer rate").in_unit("MB/s"),
    ParamSpec::new(
        "write_rate",
        Kind::Float,
        "100",
        "page program rate of writes",
    )
    .in_unit("MB/s"),
    ParamSpec::new(
        "copy_rate",
        Kind::Float,
        "200",
        "internal copy rate when a unit is closed",
    )
    .in_unit("MB/s"),
    ParamSpec::new("erase", Kind::Duration, "1.5ms", "erase time of one unit"),
    IN_ORDER,
    REORDER,
];

/// The `ssd` model.
pub static MODEL: ModelDescriptor = ModelDescriptor {
    name: "ssd",
    summary: "SATA-2 SSD (flash model preset): 250 MB/s reads, 100 MB/s writes, 75 µs access, 16 open 1 MiB units",
    params: &[PARAMS],
    build: |v| Ok(Box::new(Flash::new(&FlashParams::from_values(v))?)),
    expect: |v, seq_io| expect(&FlashParams::from_values(v), seq_io),
    presets: &[],
    preset_key: "drive",
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;

    #[test]
    fn the_preset_streams_at_its_data_sheet_rates() {
        let p = FlashParams::from_values(&Params::defaults(PARAMS));
        let e = expect(&p, 1 << 20).unwrap();
        // 1 MiB sequential writes: 75 µs + 10.5 ms of programming + 1.5 ms erase per unit.
        assert!((e.seq_write_mbs - 86.7).abs() < 0.5, "{e:?}");
        assert!((e.seq_read_outer_mbs - 245.2).abs() < 0.5, "{e:?}");
        assert!(e.random_read_ms < 0.1, "{e:?}");
    }
}
