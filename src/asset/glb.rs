//! The binary glTF container (glTF 2.0 spec §4.4 "GLB File Format Specification"), parsed by hand
//! so that every length is checked against the bytes actually present.
//!
//! Layout: a 12-byte header (`magic = "glTF"`, `version = 2`, `length` of the whole file), then
//! chunks, each `chunkLength: u32, chunkType: u32, chunkData[chunkLength]`. The first chunk must be
//! JSON; an optional second chunk is the binary buffer (BIN). Unknown chunk types are skipped, as
//! the spec asks.

/// `"glTF"` read as a little-endian u32.
pub const MAGIC: u32 = 0x4654_6C67;
/// `"JSON"` chunk type.
pub const CHUNK_JSON: u32 = 0x4E4F_534A;
/// `"BIN\0"` chunk type.
pub const CHUNK_BIN: u32 = 0x004E_4942;

/// The two chunks of a GLB file, borrowed from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Glb<'a> {
    pub json: &'a [u8],
    pub bin: Option<&'a [u8]>,
}

/// Does the data start like a GLB file (rather than JSON text)?
pub fn looks_like_glb(bytes: &[u8]) -> bool {
    bytes.starts_with(b"glTF")
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Splits a GLB file into its JSON and BIN chunks. The error is a sentence describing the problem
/// (the caller prefixes the file name).
pub fn parse(bytes: &[u8]) -> Result<Glb<'_>, String> {
    if bytes.len() < 12 {
        return Err(format!(
            "GLB header truncated: the file has {} bytes, the header alone needs 12",
            bytes.len()
        ));
    }
    let magic = u32_at(bytes, 0).unwrap_or(0);
    if magic != MAGIC {
        return Err(format!(
            "not a GLB file: magic is {:02x?}, expected \"glTF\"",
            &bytes[..4]
        ));
    }
    let version = u32_at(bytes, 4).unwrap_or(0);
    if version != 2 {
        return Err(format!(
            "GLB version {version} is not supported (only glTF 2.0)"
        ));
    }
    let declared = u32_at(bytes, 8).unwrap_or(0) as u64;
    if declared > bytes.len() as u64 {
        return Err(format!(
            "GLB truncated: the header declares {declared} bytes but the file has {}",
            bytes.len()
        ));
    }
    if declared < 12 {
        return Err(format!(
            "GLB header declares a length of {declared} bytes, less than the header"
        ));
    }
    // Trailing bytes after the declared length are ignored (some tools pad files).
    let bytes = &bytes[..declared as usize];

    let mut json: Option<&[u8]> = None;
    let mut bin: Option<&[u8]> = None;
    let mut at = 12usize;
    let mut chunk = 0usize;
    while at < bytes.len() {
        let (Some(len), Some(kind)) = (u32_at(bytes, at), u32_at(bytes, at + 4)) else {
            return Err(format!(
                "GLB chunk {chunk} header at byte {at} is truncated ({} bytes left, 8 needed)",
                bytes.len() - at
            ));
        };
        let start = at + 8;
        let end = (start as u64) + len as u64;
        if end > bytes.len() as u64 {
            return Err(format!(
                "GLB chunk {chunk} at byte {at} declares {len} bytes but only {} remain",
                bytes.len().saturating_sub(start)
            ));
        }
        let end = end as usize;
        let data = &bytes[start..end];
        match (chunk, kind) {
            (0, CHUNK_JSON) => json = Some(data),
            (0, other) => {
                return Err(format!(
                    "the first GLB chunk must be JSON, found chunk type 0x{other:08x}"
                ))
            }
            (_, CHUNK_JSON) => return Err("GLB has more than one JSON chunk".into()),
            (_, CHUNK_BIN) if bin.is_none() => bin = Some(data),
            (_, CHUNK_BIN) => return Err("GLB has more than one BIN chunk".into()),
            _ => {} // unknown chunk: skip (spec §4.4.3.1)
        }
        chunk += 1;
        // Chunks are 4-byte aligned; a writer that forgot the padding is tolerated by not
        // rounding up past the end.
        at = end
            .checked_add(3)
            .map(|e| e & !3)
            .unwrap_or(end)
            .min(bytes.len())
            .max(end);
    }
    let json = json.ok_or_else(|| "GLB has no JSON chunk".to_string())?;
    Ok(Glb { json, bin })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glb(json: &[u8], bin: Option<&[u8]>) -> Vec<u8> {
        let pad = |v: &mut Vec<u8>, b: u8| {
            while !v.len().is_multiple_of(4) {
                v.push(b)
            }
        };
        let mut j = json.to_vec();
        pad(&mut j, b' ');
        let mut out = Vec::new();
        out.extend_from_slice(b"glTF");
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&(j.len() as u32).to_le_bytes());
        out.extend_from_slice(&CHUNK_JSON.to_le_bytes());
        out.extend_from_slice(&j);
        if let Some(b) = bin {
            let mut b = b.to_vec();
            pad(&mut b, 0);
            out.extend_from_slice(&(b.len() as u32).to_le_bytes());
            out.extend_from_slice(&CHUNK_BIN.to_le_bytes());
            out.extend_from_slice(&b);
        }
        let n = out.len() as u32;
        out[8..12].copy_from_slice(&n.to_le_bytes());
        out
    }

    #[test]
    fn round_trip_and_every_truncation_is_an_error() {
        let f = glb(b"{\"asset\":{\"version\":\"2.0\"}}", Some(&[1, 2, 3, 4, 5]));
        let g = parse(&f).unwrap();
        assert!(g.json.starts_with(b"{\"asset\""));
        assert_eq!(&g.bin.unwrap()[..5], &[1, 2, 3, 4, 5]);
        for n in 0..f.len() {
            assert!(parse(&f[..n]).is_err(), "truncated at {n} must fail");
        }
    }

    #[test]
    fn chunk_length_beyond_file() {
        let mut f = glb(b"{}", None);
        f[12..16].copy_from_slice(&1000u32.to_le_bytes());
        let e = parse(&f).unwrap_err();
        assert!(e.contains("declares 1000 bytes"), "{e}");
    }
}
