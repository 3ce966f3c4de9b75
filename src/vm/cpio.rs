//! The initramfs archive format: cpio "newc" (the kernel's initramfs format), written from a
//! list of entries. Uncompressed, so the guest kernel unpacks it without decompressing.

use std::io::{self, Write};

/// One entry of the archive.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Dir {
        path: String,
    },
    File {
        path: String,
        data: Vec<u8>,
        mode: u32,
    },
    Symlink {
        path: String,
        target: String,
    },
}

impl Entry {
    fn path(&self) -> &str {
        match self {
            Entry::Dir { path } | Entry::File { path, .. } | Entry::Symlink { path, .. } => path,
        }
    }
}

/// Writes `entries` (paths relative to the archive's root, parents before children) and the
/// trailer.
pub fn write(out: &mut impl Write, entries: &[Entry]) -> io::Result<()> {
    let mut offset = 0u64;
    for (ino, e) in entries.iter().enumerate() {
        let (mode, data): (u32, &[u8]) = match e {
            Entry::Dir { .. } => (0o040755, &[]),
            Entry::File { data, mode, .. } => (0o100000 | mode, data),
            Entry::Symlink { target, .. } => (0o120777, target.as_bytes()),
        };
        offset += header(out, ino as u32 + 1, mode, data.len(), e.path(), offset)?;
        out.write_all(data)?;
        offset += data.len() as u64;
        offset += pad(out, offset)?;
    }
    header(out, 0, 0, 0, "TRAILER!!!", offset)?;
    Ok(())
}

/// One newc header and its name, padded to 4 bytes; returns the bytes written.
fn header(
    out: &mut impl Write,
    ino: u32,
    mode: u32,
    size: usize,
    name: &str,
    offset: u64,
) -> io::Result<u64> {
    let nlink = if mode & 0o040000 != 0 { 2 } else { 1 };
    let fields = [
        ino,
        mode,
        0,
        0,
        nlink,
        0,
        size as u32,
        0,
        0,
        0,
        0,
        name.len() as u32 + 1,
        0,
    ];
    let mut h = String::from("070701");
    for f in fields {
        h.push_str(&format!("{f:08x}"));
    }
    out.write_all(h.as_bytes())?;
    out.write_all(name.as_bytes())?;
    out.write_all(&[0])?;
    let written = h.len() as u64 + name.len() as u64 + 1;
    Ok(written + pad(out, offset + written)?)
}

/// Pads to the next multiple of 4 from `offset`; returns the bytes written.
fn pad(out: &mut impl Write, offset: u64) -> io::Result<u64> {
    let n = (4 - offset % 4) % 4;
    out.write_all(&[0u8; 3][..n as usize])?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newc_headers_are_aligned_and_end_with_the_trailer() {
        let entries = vec![
            Entry::Dir { path: "bin".into() },
            Entry::File {
                path: "bin/x".into(),
                data: b"hello".to_vec(),
                mode: 0o755,
            },
            Entry::Symlink {
                path: "bin/y".into(),
                target: "x".into(),
            },
        ];
        let mut buf = Vec::new();
        write(&mut buf, &entries).unwrap();
        assert_eq!(buf.len() % 4, 0);
        assert!(buf.starts_with(b"070701"));
        // The second header starts 4-aligned after "bin\0" (110 + 4 bytes, padded to 116).
        assert_eq!(&buf[116..122], b"070701");
        let text = String::from_utf8_lossy(&buf);
        assert!(
            text.contains("bin/x\0")
                && text.contains("hello")
                && text.ends_with("TRAILER!!!\0\0\0\0")
        );
        // File mode 0100755 and size 5 in the second header.
        assert_eq!(&buf[116 + 14..116 + 22], b"000081ed");
        assert_eq!(&buf[116 + 54..116 + 62], b"00000005");
    }
}
