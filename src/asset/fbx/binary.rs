//! The binary FBX container: a tree of named records, each with a list of typed properties.
//!
//! Layout (Autodesk FBX binary format, versions 7.1 to 7.7, as documented by the Blender
//! Foundation's "FBX binary file format specification" and by the FBX SDK's own files):
//!
//! ```text
//! header   "Kaydara FBX Binary  \0" 0x1A 0x00, u32 version            (27 bytes)
//! record   end_offset, property_count, property_bytes   u32 each (u64 each from 7500 on)
//!          u8 name length, name, properties, nested records, null record if nested
//! null     a record header of zeros (13 bytes, 25 from 7500 on)
//! property one type letter, then
//!          C bool (1 byte)  Y i16  I i32  L i64  F f32  D f64
//!          S string, R raw bytes: u32 length + bytes
//!          b i f l d arrays: u32 count, u32 encoding (0 plain, 1 zlib), u32 byte length, data
//! ```
//!
//! Everything is little-endian. The reader checks every length against the bytes that are there
//! and every decoded array against the memory budget before allocating, and limits the nesting
//! depth, so a damaged or hostile file is an error, never a panic. The writer produces the same
//! layout (with the standard footer) for 7400 (32-bit offsets) or 7500+ (64-bit offsets).

/// The 21 bytes every binary FBX file starts with (two spaces, then a NUL).
pub const MAGIC: &[u8; 21] = b"Kaydara FBX Binary  \0";
/// Oldest version read: 7.1 (the property and record layout is unchanged from 7100 to 7700).
pub const MIN_VERSION: u32 = 7100;
/// Deepest record nesting accepted (real files nest about 6 deep).
const MAX_DEPTH: usize = 64;

/// A property value of a record.
#[derive(Clone, Debug, PartialEq)]
pub enum Prop {
    Bool(bool),
    I16(i16),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
    /// `S`: text (FBX writes UTF-8; invalid bytes are replaced).
    Str(String),
    /// `R`: raw bytes (embedded image files, for instance).
    Raw(Vec<u8>),
    ArrBool(Vec<bool>),
    ArrI32(Vec<i32>),
    ArrI64(Vec<i64>),
    ArrF32(Vec<f32>),
    ArrF64(Vec<f64>),
}

impl Prop {
    /// A scalar number as f64 (integers and floats alike).
    pub fn as_f64(&self) -> Option<f64> {
        Some(match self {
            Prop::Bool(b) => *b as i32 as f64,
            Prop::I16(v) => *v as f64,
            Prop::I32(v) => *v as f64,
            Prop::I64(v) => *v as f64,
            Prop::F32(v) => *v as f64,
            Prop::F64(v) => *v,
            _ => return None,
        })
    }

    /// A scalar integer (floats are not converted).
    pub fn as_i64(&self) -> Option<i64> {
        Some(match self {
            Prop::Bool(b) => *b as i64,
            Prop::I16(v) => *v as i64,
            Prop::I32(v) => *v as i64,
            Prop::I64(v) => *v,
            _ => return None,
        })
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Prop::Str(s) => Some(s),
            _ => None,
        }
    }

    /// A numeric array as f64 values (any element type).
    pub fn to_f64s(&self) -> Option<Vec<f64>> {
        Some(match self {
            Prop::ArrF64(v) => v.clone(),
            Prop::ArrF32(v) => v.iter().map(|&x| x as f64).collect(),
            Prop::ArrI32(v) => v.iter().map(|&x| x as f64).collect(),
            Prop::ArrI64(v) => v.iter().map(|&x| x as f64).collect(),
            _ => return None,
        })
    }

    /// An integer array as i64 values.
    pub fn to_i64s(&self) -> Option<Vec<i64>> {
        Some(match self {
            Prop::ArrI32(v) => v.iter().map(|&x| x as i64).collect(),
            Prop::ArrI64(v) => v.clone(),
            _ => return None,
        })
    }

    /// An integer array as i32 values (i64 values out of range give `None`).
    pub fn to_i32s(&self) -> Option<Vec<i32>> {
        match self {
            Prop::ArrI32(v) => Some(v.clone()),
            Prop::ArrI64(v) => v.iter().map(|&x| i32::try_from(x).ok()).collect(),
            _ => None,
        }
    }
}

/// One record: a name, its properties, and nested records.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Node {
    pub name: String,
    pub props: Vec<Prop>,
    pub children: Vec<Node>,
}

impl Node {
    pub fn new(name: &str, props: Vec<Prop>) -> Self {
        Node {
            name: name.into(),
            props,
            children: Vec::new(),
        }
    }

    pub fn with(mut self, children: Vec<Node>) -> Self {
        self.children = children;
        self
    }

    /// The first child record named `name`.
    pub fn child(&self, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.name == name)
    }

    /// Every child record named `name`.
    pub fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Node> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// The first property of child `name` (`Vertices: *N {a: …}` → the array).
    pub fn child_prop(&self, name: &str) -> Option<&Prop> {
        self.child(name).and_then(|c| c.props.first())
    }
}

/// A parsed file: its version and top-level records.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Document {
    pub version: u32,
    pub nodes: Vec<Node>,
}

impl Document {
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.name == name)
    }
}

/// Does `bytes` start like a binary FBX file?
pub fn is_binary_fbx(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// Does `bytes` look like an ASCII FBX file (`; FBX 7.4.0 project file`, or the
/// `FBXHeaderExtension:` record near the start)?
pub fn is_ascii_fbx(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(4096)];
    let text = String::from_utf8_lossy(head);
    let t = text.trim_start_matches('\u{feff}').trim_start();
    t.starts_with("; FBX") || text.contains("FBXHeaderExtension:")
}

/// Reads a whole binary FBX file. `budget` is the number of bytes decoded arrays, strings and
/// raw blobs may take together; `Err` is a sentence saying what is wrong (without the file name).
pub fn parse(bytes: &[u8], budget: u64) -> Result<Document, String> {
    if !is_binary_fbx(bytes) {
        return Err("not a binary FBX file (no \"Kaydara FBX Binary\" header)".into());
    }
    if bytes.len() < 27 {
        return Err("the file ends inside the FBX header (truncated)".into());
    }
    let version = u32::from_le_bytes([bytes[23], bytes[24], bytes[25], bytes[26]]);
    if version < MIN_VERSION {
        return Err(format!(
            "FBX version {}.{} is too old: drape reads binary FBX 7.1 to 7.7 (7100–7700); \
             re-export as FBX 2014/2015 (7400) or newer",
            version / 1000,
            (version % 1000) / 100
        ));
    }
    if version >= 8000 {
        return Err(format!(
            "FBX version {version} is newer than drape knows: it reads binary FBX 7.1 to 7.7"
        ));
    }
    let mut r = Reader {
        bytes,
        pos: 27,
        wide: version >= 7500,
        budget,
        used: 0,
    };
    let end = bytes.len();
    let nodes = r.records(end, 0)?;
    Ok(Document { version, nodes })
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// 64-bit record header fields (7500 and later).
    wide: bool,
    budget: u64,
    used: u64,
}

impl Reader<'_> {
    fn take(&mut self, n: usize, what: &str) -> Result<&[u8], String> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        match end {
            Some(e) => {
                let s = &self.bytes[self.pos..e];
                self.pos = e;
                Ok(s)
            }
            None => Err(format!(
                "the file ends inside {what} at byte {} (truncated or corrupt)",
                self.pos
            )),
        }
    }

    fn u8(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.take(1, what)?[0])
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self, what: &str) -> Result<u64, String> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    fn word(&mut self, what: &str) -> Result<u64, String> {
        if self.wide {
            self.u64(what)
        } else {
            self.u32(what).map(u64::from)
        }
    }

    fn charge(&mut self, n: u64, what: &str) -> Result<(), String> {
        self.used = self.used.saturating_add(n);
        if self.used > self.budget {
            return Err(format!(
                "{what} would take the decoded data to {} bytes, over the limit of {} bytes \
                 (LoadOptions::max_total_bytes)",
                self.used, self.budget
            ));
        }
        Ok(())
    }

    /// Reads records until a null record (or `end` for the top level, which may also end at
    /// the footer). `end` is the byte offset the list may not pass.
    fn records(&mut self, end: usize, depth: usize) -> Result<Vec<Node>, String> {
        if depth > MAX_DEPTH {
            return Err(format!(
                "records nest deeper than {MAX_DEPTH} levels at byte {} (corrupt file)",
                self.pos
            ));
        }
        let header_len = if self.wide { 25 } else { 13 };
        let mut out = Vec::new();
        loop {
            if self.pos + header_len > end {
                return Err(format!(
                    "the file ends at byte {} inside a record list, before its closing null \
                     record (truncated or corrupt)",
                    self.bytes.len().min(end)
                ));
            }
            let start = self.pos;
            let end_offset = self.word("a record header")?;
            let n_props = self.word("a record header")?;
            let props_len = self.word("a record header")?;
            let name_len = self.u8("a record header")? as usize;
            if end_offset == 0 {
                // The null record that closes a list.
                return Ok(out);
            }
            let end_offset = usize::try_from(end_offset).unwrap_or(usize::MAX);
            if end_offset > end || end_offset <= start {
                return Err(format!(
                    "record at byte {start} claims to end at byte {end_offset}, outside its \
                     parent (0..{end}): the file is truncated or corrupt"
                ));
            }
            let name = String::from_utf8_lossy(self.take(name_len, "a record name")?).into_owned();
            let props_start = self.pos;
            if n_props > props_len {
                return Err(format!(
                    "record {name:?} at byte {start} claims {n_props} properties in {props_len} \
                     bytes (corrupt file)"
                ));
            }
            let mut props = Vec::with_capacity(n_props.min(64) as usize);
            for _ in 0..n_props {
                props.push(self.prop(&name)?);
            }
            if (self.pos - props_start) as u64 != props_len {
                return Err(format!(
                    "record {name:?} at byte {start}: its properties take {} bytes, the header \
                     says {props_len} (corrupt file)",
                    self.pos - props_start
                ));
            }
            let children = if self.pos < end_offset {
                self.records(end_offset, depth + 1)?
            } else {
                Vec::new()
            };
            if self.pos != end_offset {
                return Err(format!(
                    "record {name:?} at byte {start} ends at byte {}, its header says \
                     {end_offset} (corrupt file)",
                    self.pos
                ));
            }
            out.push(Node {
                name,
                props,
                children,
            });
        }
    }

    fn prop(&mut self, record: &str) -> Result<Prop, String> {
        let what = format!("a property of {record:?}");
        let code = self.u8(&what)?;
        Ok(match code {
            b'C' => Prop::Bool(self.u8(&what)? != 0),
            b'Y' => {
                let b = self.take(2, &what)?;
                Prop::I16(i16::from_le_bytes([b[0], b[1]]))
            }
            b'I' => Prop::I32(self.u32(&what)? as i32),
            b'L' => Prop::I64(self.u64(&what)? as i64),
            b'F' => Prop::F32(f32::from_bits(self.u32(&what)?)),
            b'D' => Prop::F64(f64::from_bits(self.u64(&what)?)),
            b'S' | b'R' => {
                let n = self.u32(&what)? as usize;
                self.charge(n as u64, &what)?;
                let b = self.take(n, &what)?;
                if code == b'S' {
                    Prop::Str(String::from_utf8_lossy(b).into_owned())
                } else {
                    Prop::Raw(b.to_vec())
                }
            }
            b'b' | b'i' | b'l' | b'f' | b'd' => self.array(code, &what)?,
            other => {
                return Err(format!(
                    "{what} at byte {} has unknown type code 0x{other:02x} (corrupt file)",
                    self.pos - 1
                ))
            }
        })
    }

    fn array(&mut self, code: u8, what: &str) -> Result<Prop, String> {
        let count = self.u32(what)? as u64;
        let encoding = self.u32(what)?;
        let stored = self.u32(what)? as usize;
        let elem = match code {
            b'b' => 1u64,
            b'i' | b'f' => 4,
            _ => 8,
        };
        let raw_len = count * elem;
        self.charge(raw_len, what)?;
        let data = self.take(stored, what)?;
        let inflated;
        let raw: &[u8] = match encoding {
            0 => data,
            1 => {
                inflated =
                    miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(data, raw_len as usize)
                        .map_err(|e| {
                            format!(
                                "{what}: its zlib-compressed array does not inflate ({:?})",
                                e.status
                            )
                        })?;
                &inflated
            }
            e => return Err(format!("{what}: unknown array encoding {e} (corrupt file)")),
        };
        if raw.len() as u64 != raw_len {
            return Err(format!(
                "{what}: array of {count} elements holds {} bytes, expected {raw_len} (corrupt \
                 file)",
                raw.len()
            ));
        }
        Ok(match code {
            b'b' => Prop::ArrBool(raw.iter().map(|&b| b != 0).collect()),
            b'i' => Prop::ArrI32(
                raw.chunks_exact(4)
                    .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            ),
            b'f' => Prop::ArrF32(
                raw.chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            ),
            b'l' => Prop::ArrI64(
                raw.chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                    .collect(),
            ),
            _ => Prop::ArrF64(
                raw.chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                    .collect(),
            ),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Writing.

/// How [`write`] stores arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrayEncoding {
    Plain,
    /// zlib-compress arrays of at least this many bytes (FBX SDK files compress the big ones).
    Zlib {
        min_bytes: usize,
    },
}

/// Serialises `doc` as binary FBX of `doc.version` (7100..=7700; 7500 and later use 64-bit record
/// headers), followed by the standard footer.
pub fn write(doc: &Document, encoding: ArrayEncoding) -> Vec<u8> {
    let wide = doc.version >= 7500;
    let mut out = Vec::with_capacity(1 << 16);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[0x1A, 0x00]);
    out.extend_from_slice(&doc.version.to_le_bytes());
    for n in &doc.nodes {
        write_node(&mut out, n, wide, encoding);
    }
    write_null(&mut out, wide);
    // Footer as the FBX SDK writes it: a 16-byte id, padding to a 16-byte boundary, the
    // version, 120 zeros and a fixed 16-byte closing magic.
    out.extend_from_slice(&[
        0xfa, 0xbc, 0xab, 0x09, 0xd0, 0xc8, 0xd4, 0x66, 0xb1, 0x76, 0xfb, 0x83, 0x1c, 0xf7, 0x26,
        0x7e,
    ]);
    out.extend_from_slice(&[0; 4]);
    let pad = (16 - out.len() % 16) % 16;
    out.extend(std::iter::repeat_n(0u8, pad));
    out.extend_from_slice(&doc.version.to_le_bytes());
    out.extend(std::iter::repeat_n(0u8, 120));
    out.extend_from_slice(&[
        0xf8, 0x5a, 0x8c, 0x6a, 0xde, 0xf5, 0xd9, 0x7e, 0xec, 0xe9, 0x0c, 0xe3, 0x75, 0x8f, 0x29,
        0x0b,
    ]);
    out
}

fn put_word(out: &mut Vec<u8>, at: usize, v: u64, wide: bool) {
    if wide {
        out[at..at + 8].copy_from_slice(&v.to_le_bytes());
    } else {
        out[at..at + 4].copy_from_slice(&(v as u32).to_le_bytes());
    }
}

fn write_null(out: &mut Vec<u8>, wide: bool) {
    out.extend(std::iter::repeat_n(0u8, if wide { 25 } else { 13 }));
}

fn write_node(out: &mut Vec<u8>, n: &Node, wide: bool, enc: ArrayEncoding) {
    let start = out.len();
    let w = if wide { 8 } else { 4 };
    out.extend(std::iter::repeat_n(0u8, 3 * w));
    let name = n.name.as_bytes();
    out.push(name.len().min(255) as u8);
    out.extend_from_slice(&name[..name.len().min(255)]);
    let props_start = out.len();
    for p in &n.props {
        write_prop(out, p, enc);
    }
    let props_len = out.len() - props_start;
    // Records with no properties and no children still get a null record in FBX SDK files.
    if !n.children.is_empty() || n.props.is_empty() {
        for c in &n.children {
            write_node(out, c, wide, enc);
        }
        write_null(out, wide);
    }
    let end = out.len() as u64;
    put_word(out, start, end, wide);
    put_word(out, start + w, n.props.len() as u64, wide);
    put_word(out, start + 2 * w, props_len as u64, wide);
}

fn write_array(out: &mut Vec<u8>, code: u8, count: usize, raw: Vec<u8>, enc: ArrayEncoding) {
    out.push(code);
    out.extend_from_slice(&(count as u32).to_le_bytes());
    let (encoding, data) = match enc {
        ArrayEncoding::Zlib { min_bytes } if raw.len() >= min_bytes => {
            (1u32, miniz_oxide::deflate::compress_to_vec_zlib(&raw, 6))
        }
        _ => (0u32, raw),
    };
    out.extend_from_slice(&encoding.to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(&data);
}

fn write_prop(out: &mut Vec<u8>, p: &Prop, enc: ArrayEncoding) {
    match p {
        Prop::Bool(b) => out.extend_from_slice(&[b'C', *b as u8]),
        Prop::I16(v) => {
            out.push(b'Y');
            out.extend_from_slice(&v.to_le_bytes());
        }
        Prop::I32(v) => {
            out.push(b'I');
            out.extend_from_slice(&v.to_le_bytes());
        }
        Prop::I64(v) => {
            out.push(b'L');
            out.extend_from_slice(&v.to_le_bytes());
        }
        Prop::F32(v) => {
            out.push(b'F');
            out.extend_from_slice(&v.to_le_bytes());
        }
        Prop::F64(v) => {
            out.push(b'D');
            out.extend_from_slice(&v.to_le_bytes());
        }
        Prop::Str(s) => {
            out.push(b'S');
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        Prop::Raw(b) => {
            out.push(b'R');
            out.extend_from_slice(&(b.len() as u32).to_le_bytes());
            out.extend_from_slice(b);
        }
        Prop::ArrBool(v) => write_array(
            out,
            b'b',
            v.len(),
            v.iter().map(|&b| b as u8).collect(),
            enc,
        ),
        Prop::ArrI32(v) => write_array(
            out,
            b'i',
            v.len(),
            v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            enc,
        ),
        Prop::ArrI64(v) => write_array(
            out,
            b'l',
            v.len(),
            v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            enc,
        ),
        Prop::ArrF32(v) => write_array(
            out,
            b'f',
            v.len(),
            v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            enc,
        ),
        Prop::ArrF64(v) => write_array(
            out,
            b'd',
            v.len(),
            v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            enc,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(version: u32) -> Document {
        Document {
            version,
            nodes: vec![
                Node::new("Header", vec![Prop::I32(7), Prop::Str("a\0\x01b".into())]),
                Node::new("Objects", vec![]).with(vec![Node::new(
                    "Geometry",
                    vec![Prop::I64(-5), Prop::Bool(true), Prop::I16(-3)],
                )
                .with(vec![
                    Node::new(
                        "Vertices",
                        vec![Prop::ArrF64((0..300).map(|i| i as f64 * 0.5).collect())],
                    ),
                    Node::new("Idx", vec![Prop::ArrI32(vec![0, 1, -3])]),
                    Node::new(
                        "T",
                        vec![Prop::ArrI64(vec![1 << 40]), Prop::ArrF32(vec![1.5])],
                    ),
                    Node::new(
                        "B",
                        vec![Prop::ArrBool(vec![true, false]), Prop::Raw(vec![1, 2])],
                    ),
                    Node::new("N", vec![Prop::F32(0.25), Prop::F64(-2.0)]),
                ])]),
            ],
        }
    }

    #[test]
    fn round_trips_7400_and_7700_plain_and_compressed() {
        for v in [7100, 7400, 7500, 7700] {
            for enc in [ArrayEncoding::Plain, ArrayEncoding::Zlib { min_bytes: 0 }] {
                let d = sample(v);
                let bytes = write(&d, enc);
                let back = parse(&bytes, 1 << 30).unwrap();
                assert_eq!(back, d, "version {v} {enc:?}");
            }
        }
    }

    #[test]
    fn compression_shrinks_arrays() {
        let d = sample(7400);
        let plain = write(&d, ArrayEncoding::Plain);
        let z = write(&d, ArrayEncoding::Zlib { min_bytes: 64 });
        assert!(z.len() < plain.len(), "{} vs {}", z.len(), plain.len());
    }

    #[test]
    fn truncation_anywhere_is_an_error_not_a_panic() {
        for v in [7400, 7700] {
            let bytes = write(&sample(v), ArrayEncoding::Zlib { min_bytes: 0 });
            // The footer may be cut without harm; everything before it may not.
            let body_end = bytes.len() - 160 - 16;
            for cut in 0..body_end {
                assert!(
                    parse(&bytes[..cut], 1 << 30).is_err(),
                    "cut at {cut} of version {v}"
                );
            }
        }
    }

    #[test]
    fn corrupt_bytes_never_panic() {
        let bytes = write(&sample(7400), ArrayEncoding::Zlib { min_bytes: 0 });
        for i in 27..bytes.len() {
            for x in [0x00u8, 0xff, 0x7f, 0x13] {
                let mut b = bytes.clone();
                b[i] ^= x;
                let _ = parse(&b, 1 << 20);
            }
        }
    }

    #[test]
    fn budget_and_version_are_checked() {
        let bytes = write(&sample(7400), ArrayEncoding::Plain);
        let e = parse(&bytes, 100).unwrap_err();
        assert!(e.contains("max_total_bytes"), "{e}");
        let mut old = bytes.clone();
        old[23..27].copy_from_slice(&6100u32.to_le_bytes());
        let e = parse(&old, 1 << 30).unwrap_err();
        assert!(e.contains("too old") && e.contains("7.1"), "{e}");
        assert!(is_ascii_fbx(b"; FBX 7.4.0 project file\n"));
        assert!(!is_ascii_fbx(&bytes));
    }
}
