//! result.json as earlier iotrials wrote it, migrated to the current format when read so
//! results of earlier studies still report. Format 0 (before `format_version` existed):
//! `workload` held the workload's kind, and there was no `kind`. Format 1: no `phases`.

use serde_json::{json, Value as Json};

/// Migrates a document of format 0 or 1 in place; the error says what it lacks.
pub fn migrate(doc: &mut Json) -> Result<(), String> {
    if doc.get("format_version").is_none() {
        migrate_0(doc)?;
    }
    let Some(obj) = doc.as_object_mut() else {
        return Err("not a JSON object".into());
    };
    // Format 1 had no phases: its trials were one phase, which its samples.csv does not name.
    obj.entry("phases").or_insert(json!([]));
    obj.insert("format_version".into(), json!(super::FORMAT_VERSION));
    Ok(())
}

/// Migrates a format-0 document to format 1.
fn migrate_0(doc: &mut Json) -> Result<(), String> {
    let Some(obj) = doc.as_object_mut() else {
        return Err("not a JSON object".into());
    };
    let Some(kind) = obj
        .get("workload")
        .and_then(Json::as_str)
        .map(str::to_string)
    else {
        return Err(
            "no format_version and no workload: not a result.json written by iotrial".into(),
        );
    };
    let always = [
        "iotrial_version",
        "params",
        "target",
        "started_utc",
        "duration_s",
        "warnings",
        "streams",
        "verdict",
    ];
    for key in always {
        if !obj.contains_key(key) {
            return Err(format!(
                "written by an iotrial before result.json had a format_version, and it lacks `{key}`; run the trial again"
            ));
        }
    }
    // Format 0 named the workload by its kind only.
    obj.insert("kind".into(), json!(kind));
    // The earliest format-0 documents had neither: directory trials on real time.
    obj.entry("time_scale").or_insert(json!(1.0));
    if !obj.contains_key("stack") {
        let target = obj["target"].clone();
        obj.insert("stack".into(), target);
    }
    obj.insert("format_version".into(), json!(1));
    Ok(())
}
