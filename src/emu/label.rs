//! What an emulated device is, said from its own values: the preset (a seed's twin) it
//! started from by name, then the mechanics or flash figures it runs with, so a report never
//! calls a 5400 rpm twin by its model's defaults.

use super::spec::ModelSpec;

impl ModelSpec {
    /// One line naming the device: `wd80emaz twin (WD 8 TB white label (WD80EMAZ, seed 000)):
    /// 5400 rpm hard disk, 17 ms average seek, 198-95 MB/s, 8 MiB write-back buffer`. Every
    /// figure comes from the spec's resolved values, so one a user overrode shows as set.
    pub fn label(&self) -> String {
        let what = self.what();
        match self.preset {
            Some(p) => {
                let title = p.summary.split(':').next().unwrap_or(p.summary).trim();
                format!("{} twin ({title}): {what}", p.name)
            }
            None => what,
        }
    }

    /// The device's kind and figures from its values.
    fn what(&self) -> String {
        let v = &self.values;
        let has = |n: &str| v.given_text(n).is_some();
        let text = |n: &str| v.given_text(n).unwrap_or_default();
        let ms = |n: &str| format!("{} ms", trim(v.f64(n) * 1e3));
        if has("rpm") {
            let kind = match self.model.name {
                "smr" => "drive-managed shingled disk",
                "array" => "disks",
                _ => "hard disk",
            };
            let mut parts = vec![format!("{} rpm {kind}", trim(v.f64("rpm")))];
            if self.model.name == "array" {
                parts[0] = format!("{} striped {}", trim(v.f64("drives")), parts[0]);
            }
            parts.push(format!("{} average seek", ms("avg_seek")));
            parts.push(format!(
                "{}-{} MB/s",
                trim(v.f64("outer_rate")),
                trim(v.f64("inner_rate"))
            ));
            if v.bool("write_back") {
                parts.push(format!("{} write-back buffer", text("write_buffer")));
            } else {
                parts.push("no write-back".into());
            }
            if self.model.name == "smr" {
                parts.push(format!(
                    "{} persistent cache, {} bands",
                    text("cache"),
                    text("band")
                ));
            }
            if self.model.name == "array" && v.f64("link_rate") > 0.0 {
                parts.push(format!("behind a {} MB/s link", trim(v.f64("link_rate"))));
            }
            return parts.join(", ");
        }
        if has("au") {
            let kind = if self.model.name == "ssd" {
                "SSD"
            } else {
                "flash card"
            };
            return format!(
                "{kind}, {} access, {} MB/s reads, {} MB/s writes, {} allocation units ({} open)",
                ms("access"),
                trim(v.f64("read_rate")),
                trim(v.f64("write_rate")),
                text("au"),
                trim(v.f64("open_units"))
            );
        }
        self.model.summary.to_string()
    }
}

/// A figure without a trailing `.0`.
fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wd_twin_is_named_and_said_at_5400_rpm() {
        let s = ModelSpec::parse("emu:hdd,drive=wd80emaz,size=4GiB").unwrap();
        let l = s.label();
        assert!(l.starts_with("wd80emaz twin (WD 8 TB white label"), "{l}");
        assert!(l.contains("5400 rpm hard disk"), "{l}");
        assert!(l.contains("17 ms average seek, 198-95 MB/s"), "{l}");
        assert!(!l.contains("7200"), "{l}");
    }

    #[test]
    fn an_overridden_value_shows_as_set() {
        let s = ModelSpec::parse("emu:hdd,drive=wd80emaz,rpm=7200,write_back=false").unwrap();
        let l = s.label();
        assert!(l.contains("7200 rpm") && l.contains("no write-back"), "{l}");
        let plain = ModelSpec::parse("emu:hdd").unwrap().label();
        assert!(
            plain.starts_with("7200 rpm hard disk, 8.5 ms average seek"),
            "{plain}"
        );
    }

    #[test]
    fn shingled_flash_and_arrays_say_their_own_figures() {
        let smr = ModelSpec::parse("emu:smr,drive=dm-smr-8tb")
            .unwrap()
            .label();
        assert!(
            smr.contains("drive-managed shingled disk") && smr.contains("bands"),
            "{smr}"
        );
        let card = ModelSpec::parse("emu:flash,card=duracell").unwrap().label();
        assert!(
            card.starts_with("duracell twin (") && card.contains("flash card, 0.509 ms access"),
            "{card}"
        );
        let array = ModelSpec::parse("emu:array,drive=sfa-38tb")
            .unwrap()
            .label();
        assert!(array.contains("19 striped 7200 rpm disks"), "{array}");
        let null = ModelSpec::parse("emu:null").unwrap().label();
        assert!(null.starts_with("no delay"), "{null}");
    }
}
