//! docs/seeds.md is what `cargo bench --bench seed_tables` makes: every generated block of the
//! page is rendered again from the committed summaries (docs/seeds/000.json to 004.json) and
//! must be the same, so the page cannot be edited by hand where the command writes it.

#[allow(dead_code)]
#[path = "../bench/seeds/mod.rs"]
mod seeds;

use seeds::blocks;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_page_is_what_the_summaries_make() {
    let made = seeds::render_all(&root().join("docs/seeds")).unwrap();
    assert_eq!(
        made.len(),
        2 * seeds::SEEDS.len(),
        "every seed has its summary"
    );
    let page = std::fs::read_to_string(root().join("docs/seeds.md")).unwrap();
    let stale = blocks::stale(&page, &made).unwrap();
    assert!(
        stale.is_empty(),
        "docs/seeds.md's blocks {stale:?} are not what docs/seeds/*.json make: run `SEED_TABLES_WRITE=docs/seeds.md cargo bench --bench seed_tables`"
    );
    assert_eq!(blocks::replace(&page, &made).unwrap(), page);
    for seed in seeds::SEEDS {
        assert!(
            page.contains(&format!("<!-- end of seed {} conclusion -->", seed.id)),
            "seed {} has a conclusion block",
            seed.id
        );
    }
}
