//! NAND flash devices: the allocation-unit model of CompactFlash and SD cards (`flash`), the
//! seeds' cards as its presets, and the SATA SSD preset.

pub mod cards;
pub mod flash;
pub mod ssd;

use super::model;
