//! glTF 2.0 → [`Rig`]. The only file in drape that imports the `gltf` crate, and it only uses its
//! JSON layer (`gltf::json`): buffer data is located here and read by [`super::accessor`], with
//! every index, count and size checked before use. Nothing here may panic on file content.
//!
//! References: the glTF 2.0 specification (Khronos, 2021), cited by section.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

use ::gltf::json;
use json::validation::Checked;

use super::accessor::{self, AccessorDesc, Component, Shape, SparseDesc, ViewData};
use super::geometry::{self, Topology, WeightFixes};
use super::{glb, label_of, uri, AssetError, LoadOptions};
use crate::anim::{Clip, Interpolation, Skeleton, Skin, Track};
use crate::math::{Mat4, Quat, Transform, Vec2, Vec3, Vec4};
use crate::rig::{Material, Rig, SkinnedMesh, Texture};

/// Extensions whose presence in `extensionsRequired` drape honours: quantized attributes are read
/// by the generic accessor reader (any component type, normalised or not).
const SUPPORTED_REQUIRED: &[&str] = &["KHR_mesh_quantization"];
/// Required extensions that only change shading details drape does not render; loading goes on
/// with a warning.
const TOLERATED_REQUIRED: &[&str] = &[
    "KHR_materials_unlit",
    "KHR_materials_emissive_strength",
    "KHR_texture_transform",
    "KHR_materials_ior",
    "KHR_materials_specular",
    "KHR_materials_transmission",
];

/// Loads a `.gltf` or `.glb` file with [`LoadOptions::default`].
pub fn load_rig(path: &Path) -> Result<Rig, AssetError> {
    load_rig_with(path, &LoadOptions::default())
}

/// Loads a `.gltf` or `.glb` file. External buffers and images are looked up next to it.
pub fn load_rig_with(path: &Path, opts: &LoadOptions) -> Result<Rig, AssetError> {
    let label = label_of(path);
    let bytes = read_file_limited(path, opts.max_total_bytes, &label, "the file")?;
    let base = path.parent().map(|p| {
        if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        }
    });
    // The file's bytes stay in memory while loading (the GLB chunks are borrowed from them).
    let mut rig = load_impl(&bytes, base, &label, opts, bytes.len() as u64)?;
    rig.source = path.display().to_string();
    Ok(rig)
}

/// Loads glTF or GLB data from memory. `base_dir` is where relative URIs are resolved (`None`:
/// only embedded data is allowed); `label` names the data in errors and warnings.
pub fn load_rig_from_slice(
    bytes: &[u8],
    base_dir: Option<&Path>,
    label: &str,
    opts: &LoadOptions,
) -> Result<Rig, AssetError> {
    load_impl(bytes, base_dir, label, opts, 0)
}

/// `already_used`: bytes of the budget taken before (the file read by [`load_rig_with`]).
fn load_impl(
    bytes: &[u8],
    base_dir: Option<&Path>,
    label: &str,
    opts: &LoadOptions,
    already_used: u64,
) -> Result<Rig, AssetError> {
    let mut cx = Ctx {
        label: label.to_string(),
        opts,
        used: already_used,
        base_dir,
        warn: Warnings::default(),
    };
    if bytes.is_empty() {
        return Err(cx.err("the file is empty"));
    }
    let (json_bytes, bin) = if glb::looks_like_glb(bytes) {
        let g = glb::parse(bytes).map_err(|p| cx.err(p))?;
        (g.json, g.bin)
    } else {
        let text = bytes
            .strip_prefix(b"\xEF\xBB\xBF".as_slice())
            .unwrap_or(bytes);
        // JSON text starts with '{' (after white space); anything else is a damaged GLB or not
        // glTF at all, and saying so beats a JSON parser's "expected value at line 1".
        let first = text.iter().find(|b| !b.is_ascii_whitespace());
        let named_glb = label.to_ascii_lowercase().ends_with(".glb");
        if !text.is_empty() && (first != Some(&b'{') || named_glb) {
            let head: Vec<u8> = bytes.iter().take(4).copied().collect();
            return Err(cx.err(format!(
                "neither a GLB file (magic is {head:02x?}, expected \"glTF\") nor glTF JSON text"
            )));
        }
        (text, None)
    };
    let root: json::Root = json::deserialize::from_slice(json_bytes)
        .map_err(|e| cx.err(format!("invalid glTF JSON: {e}")))?;
    let mut rig = build(&mut cx, &root, bin)?;
    rig.source = label.to_string();
    rig.warnings = cx.warn.finish();
    Ok(rig)
}

// ---------------------------------------------------------------------------------------------
// Context: the file's name, the memory budget, and warnings collected while loading.

struct Ctx<'o> {
    label: String,
    opts: &'o LoadOptions,
    /// Bytes charged so far against `opts.max_total_bytes`.
    used: u64,
    base_dir: Option<&'o Path>,
    warn: Warnings,
}

impl Ctx<'_> {
    fn err(&self, problem: impl Into<String>) -> AssetError {
        AssetError::Malformed {
            file: self.label.clone(),
            problem: problem.into(),
        }
    }

    /// Reserves `bytes` of the memory budget for `what`, before allocating them.
    fn charge(&mut self, bytes: u64, what: impl FnOnce() -> String) -> Result<(), AssetError> {
        let total = self.used.saturating_add(bytes);
        if total > self.opts.max_total_bytes {
            return Err(AssetError::TooLarge {
                file: self.label.clone(),
                what: what(),
                needed: bytes,
                limit: self.opts.max_total_bytes,
            });
        }
        self.used = total;
        Ok(())
    }
}

/// Non-fatal findings, aggregated so that each kind is reported once per file.
#[derive(Default)]
struct Warnings {
    list: Vec<String>,
    /// Accessors read through a byteStride that the spec forbids for their use (animation
    /// samplers, inverse bind matrices, indices).
    forbidden_stride: Vec<usize>,
    morph_channels: usize,
    duplicate_keys: usize,
    empty_samplers: usize,
    weights: WeightFixes,
    weight_meshes: usize,
    /// Joint slots beyond the skin with zero weight (harmless, set to joint 0).
    stray_zero_weight_joints: usize,
    shear_nodes: Vec<usize>,
    skipped_primitives: Vec<String>,
    dropped_indices: usize,
}

impl Warnings {
    fn push(&mut self, s: String) {
        if !self.list.contains(&s) {
            self.list.push(s);
        }
    }

    fn finish(mut self) -> Vec<String> {
        let mut out = std::mem::take(&mut self.list);
        let w = &self.weights;
        if w.renormalised > 0 {
            out.push(format!(
                "skin weights of {} vertices (in {} meshes) did not sum to 1 (worst sum {:.4}); renormalised",
                w.renormalised, self.weight_meshes, w.worst_sum
            ));
        }
        if w.zero_sum > 0 {
            out.push(format!(
                "{} vertices had all skin weights zero; bound to their first joint with weight 1",
                w.zero_sum
            ));
        }
        if w.negative > 0 {
            out.push(format!("{} negative skin weights clamped to 0", w.negative));
        }
        if self.stray_zero_weight_joints > 0 {
            out.push(format!(
                "{} joint slots with zero weight referred to joints beyond their skin; set to joint 0",
                self.stray_zero_weight_joints
            ));
        }
        if !self.forbidden_stride.is_empty() {
            self.forbidden_stride.sort_unstable();
            self.forbidden_stride.dedup();
            out.push(format!(
                "{} accessors (animation, inverse bind or index data, e.g. accessor {}) use a buffer view \
                 with byteStride, which the glTF spec forbids for them; read with the stride",
                self.forbidden_stride.len(),
                self.forbidden_stride[0]
            ));
        }
        if self.morph_channels > 0 {
            out.push(format!(
                "{} morph-target weight channels ignored (morph targets are not supported)",
                self.morph_channels
            ));
        }
        if self.duplicate_keys > 0 {
            out.push(format!(
                "{} animation keys with the same time as the previous key dropped",
                self.duplicate_keys
            ));
        }
        if self.empty_samplers > 0 {
            out.push(format!(
                "{} animation channels without keys skipped",
                self.empty_samplers
            ));
        }
        if !self.shear_nodes.is_empty() {
            out.push(format!(
                "{} node matrices contain shear, which a TRS transform cannot represent (e.g. node {}); \
                 the closest TRS is used",
                self.shear_nodes.len(),
                self.shear_nodes[0]
            ));
        }
        if !self.skipped_primitives.is_empty() {
            out.push(format!(
                "{} primitives skipped (points or lines; only triangles are used): {}",
                self.skipped_primitives.len(),
                self.skipped_primitives.join(", ")
            ));
        }
        if self.dropped_indices > 0 {
            out.push(format!(
                "{} trailing indices dropped: triangle index counts must be multiples of 3",
                self.dropped_indices
            ));
        }
        out
    }
}

// ---------------------------------------------------------------------------------------------
// Reading external data.

fn read_file_limited(
    path: &Path,
    limit: u64,
    label: &str,
    what: &str,
) -> Result<Vec<u8>, AssetError> {
    let io = |source| AssetError::Io {
        file: label.to_string(),
        what: what.to_string(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(io(std::io::Error::other(format!(
            "{} is not a file",
            path.display()
        ))));
    }
    if meta.len() > limit {
        return Err(AssetError::TooLarge {
            file: label.to_string(),
            what: format!("{what} ({})", path.display()),
            needed: meta.len(),
            limit,
        });
    }
    std::fs::read(path).map_err(io)
}

/// Loads the bytes a URI refers to (a data URI or a file next to the glTF file).
fn load_uri(cx: &mut Ctx, uri_str: &str, what: &str) -> Result<Vec<u8>, AssetError> {
    let kind = uri::classify(uri_str, cx.opts.allow_outside_uris).map_err(|reason| {
        AssetError::UriRefused {
            file: cx.label.clone(),
            uri: shorten(uri_str),
            what: what.to_string(),
            reason,
        }
    })?;
    match kind {
        uri::UriKind::Data {
            base64, payload, ..
        } => {
            if !base64 {
                return Err(cx.err(format!("{what}: only base64 data URIs are supported")));
            }
            cx.charge(uri::base64_decoded_len_bound(payload.len()), || {
                what.to_string()
            })?;
            uri::decode_base64(payload).map_err(|e| cx.err(format!("{what}: {e}")))
        }
        uri::UriKind::Relative(rel) => {
            let Some(base) = cx.base_dir else {
                return Err(cx.err(format!(
                    "{what} refers to the external file {uri_str:?}, but the data was given without a folder"
                )));
            };
            let full = uri::resolve(base, &rel, cx.opts.allow_outside_uris).map_err(|reason| {
                AssetError::UriRefused {
                    file: cx.label.clone(),
                    uri: shorten(uri_str),
                    what: what.to_string(),
                    reason,
                }
            })?;
            let remaining = cx.opts.max_total_bytes.saturating_sub(cx.used);
            let bytes = read_file_limited(&full, remaining, &cx.label, what)?;
            cx.charge(bytes.len() as u64, || what.to_string())?;
            Ok(bytes)
        }
    }
}

/// URIs can be megabytes of base64; keep messages short.
fn shorten(s: &str) -> String {
    if s.len() <= 80 {
        return s.to_string();
    }
    let mut end = 60;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len())
}

// ---------------------------------------------------------------------------------------------
// The document.

/// Buffer views resolved to byte slices, and the helpers that locate accessors.
struct Data<'b> {
    views: Vec<ViewData<'b>>,
}

fn component_of(c: &Checked<json::accessor::GenericComponentType>) -> Option<Component> {
    use json::accessor::ComponentType as C;
    match c {
        Checked::Valid(g) => Some(match g.0 {
            C::I8 => Component::I8,
            C::U8 => Component::U8,
            C::I16 => Component::I16,
            C::U16 => Component::U16,
            C::U32 => Component::U32,
            C::F32 => Component::F32,
        }),
        Checked::Invalid => None,
    }
}

fn index_component_of(c: &Checked<json::accessor::IndexComponentType>) -> Option<Component> {
    use json::accessor::ComponentType as C;
    match c {
        Checked::Valid(g) => Some(match g.0 {
            C::I8 => Component::I8,
            C::U8 => Component::U8,
            C::I16 => Component::I16,
            C::U16 => Component::U16,
            C::U32 => Component::U32,
            C::F32 => Component::F32,
        }),
        Checked::Invalid => None,
    }
}

fn shape_of(t: &Checked<json::accessor::Type>) -> Option<Shape> {
    use json::accessor::Type as T;
    match t {
        Checked::Valid(T::Scalar) => Some(Shape::Scalar),
        Checked::Valid(T::Vec2) => Some(Shape::Vec2),
        Checked::Valid(T::Vec3) => Some(Shape::Vec3),
        Checked::Valid(T::Vec4) => Some(Shape::Vec4),
        Checked::Valid(T::Mat2) => Some(Shape::Mat2),
        Checked::Valid(T::Mat3) => Some(Shape::Mat3),
        Checked::Valid(T::Mat4) => Some(Shape::Mat4),
        Checked::Invalid => None,
    }
}

impl<'b> Data<'b> {
    fn view(
        &self,
        cx: &Ctx,
        index: usize,
        role: impl FnOnce() -> String,
    ) -> Result<ViewData<'b>, AssetError> {
        self.views.get(index).copied().ok_or_else(|| {
            cx.err(format!(
                "{} refers to buffer view {index}, but the file has {}",
                role(),
                self.views.len()
            ))
        })
    }

    /// Locates accessor `index` used as `role` ("POSITION of mesh 0 primitive 0"); checks its
    /// sizes against its buffer view.
    fn accessor(
        &self,
        cx: &Ctx,
        root: &json::Root,
        index: usize,
        role: &str,
    ) -> Result<AccessorDesc<'b>, AssetError> {
        let a = root.accessors.get(index).ok_or_else(|| {
            cx.err(format!(
                "{role} refers to accessor {index}, but the file has {}",
                root.accessors.len()
            ))
        })?;
        let who = || format!("accessor {index} ({role})");
        let component = component_of(&a.component_type)
            .ok_or_else(|| cx.err(format!("{} has an invalid componentType", who())))?;
        let shape =
            shape_of(&a.type_).ok_or_else(|| cx.err(format!("{} has an invalid type", who())))?;
        let view = match a.buffer_view {
            Some(v) => Some(self.view(cx, v.value(), who)?),
            None => None,
        };
        let sparse = match &a.sparse {
            None => None,
            Some(s) => Some(SparseDesc {
                count: s.count.0,
                indices_view: self.view(cx, s.indices.buffer_view.value(), || {
                    format!("{} sparse indices", who())
                })?,
                indices_offset: s.indices.byte_offset.0,
                indices_component: index_component_of(&s.indices.component_type)
                    .ok_or_else(|| cx.err(format!("{} has an invalid sparse index type", who())))?,
                values_view: self.view(cx, s.values.buffer_view.value(), || {
                    format!("{} sparse values", who())
                })?,
                values_offset: s.values.byte_offset.0,
            }),
        };
        let desc = AccessorDesc {
            index,
            count: a.count.0,
            component,
            shape,
            normalized: a.normalized,
            view,
            byte_offset: a.byte_offset.map(|o| o.0).unwrap_or(0),
            sparse,
        };
        accessor::check(&desc).map_err(|e| cx.err(with_role(e, index, role)))?;
        Ok(desc)
    }
}

/// Inserts the role after "accessor N" in a message from the accessor reader.
fn with_role(msg: String, index: usize, role: &str) -> String {
    let key = format!("accessor {index}");
    match msg.find(&key) {
        Some(at) => {
            let end = at + key.len();
            format!("{} ({role}){}", &msg[..end], &msg[end..])
        }
        None => format!("accessor {index} ({role}): {msg}"),
    }
}

/// Reads `acc` as `N` floats per element after charging the output to the budget.
fn read_f32<const N: usize>(
    cx: &mut Ctx,
    acc: &AccessorDesc,
    role: &str,
) -> Result<Vec<[f32; N]>, AssetError> {
    cx.charge(acc.count.saturating_mul(4 * N as u64), || {
        format!("accessor {} ({role})", acc.index)
    })?;
    accessor::read_f32::<N>(acc).map_err(|e| cx.err(with_role(e, acc.index, role)))
}

fn read_u32<const N: usize>(
    cx: &mut Ctx,
    acc: &AccessorDesc,
    role: &str,
) -> Result<Vec<[u32; N]>, AssetError> {
    cx.charge(acc.count.saturating_mul(4 * N as u64), || {
        format!("accessor {} ({role})", acc.index)
    })?;
    accessor::read_u32::<N>(acc).map_err(|e| cx.err(with_role(e, acc.index, role)))
}

fn build(cx: &mut Ctx, root: &json::Root, bin: Option<&[u8]>) -> Result<Rig, AssetError> {
    check_version_and_extensions(cx, root)?;

    // Buffers: the GLB BIN chunk, data URIs, or files next to the glTF file.
    let mut buffers: Vec<Cow<[u8]>> = Vec::with_capacity(root.buffers.len());
    for (i, b) in root.buffers.iter().enumerate() {
        let what = format!("buffer {i}");
        let data: Cow<[u8]> = match &b.uri {
            None => match (i, bin) {
                (0, Some(bin)) => Cow::Borrowed(bin),
                _ => {
                    return Err(cx.err(format!(
                        "{what} has no uri and is not the GLB binary chunk{}",
                        if bin.is_none() {
                            " (the file has none)"
                        } else {
                            ""
                        }
                    )))
                }
            },
            Some(u) => Cow::Owned(load_uri(cx, u, &what)?),
        };
        let len = b.byte_length.0;
        if (data.len() as u64) < len {
            return Err(cx.err(format!(
                "{what} declares byteLength {len} but holds only {} bytes",
                data.len()
            )));
        }
        let data = match data {
            Cow::Borrowed(s) => Cow::Borrowed(&s[..len as usize]),
            Cow::Owned(mut v) => {
                v.truncate(len as usize);
                Cow::Owned(v)
            }
        };
        buffers.push(data);
    }

    // Buffer views: checked against their buffer once, here.
    let mut views = Vec::with_capacity(root.buffer_views.len());
    for (i, v) in root.buffer_views.iter().enumerate() {
        let bi = v.buffer.value();
        let buf = buffers.get(bi).ok_or_else(|| {
            cx.err(format!(
                "buffer view {i} refers to buffer {bi}, but the file has {}",
                buffers.len()
            ))
        })?;
        let off = v.byte_offset.map(|o| o.0).unwrap_or(0);
        let len = v.byte_length.0;
        let end = off
            .checked_add(len)
            .filter(|&e| e <= buf.len() as u64)
            .ok_or_else(|| {
                cx.err(format!(
                    "buffer view {i} spans bytes {off}..{} but buffer {bi} has {}",
                    off.saturating_add(len),
                    buf.len()
                ))
            })?;
        let stride = match v.byte_stride {
            Some(s) if s.0 == 0 || s.0 > 252 => {
                return Err(cx.err(format!(
                    "buffer view {i} has byteStride {}, outside 4..=252",
                    s.0
                )))
            }
            Some(s) => Some(s.0),
            None => None,
        };
        views.push((bi, off as usize, end as usize, stride));
    }
    let data = Data {
        views: views
            .iter()
            .enumerate()
            .map(|(i, &(bi, off, end, stride))| ViewData {
                index: i,
                bytes: &buffers[bi][off..end],
                stride,
            })
            .collect(),
    };

    let (skeleton, node_of) = build_skeleton(cx, root)?;
    let skins = build_skins(cx, root, &data, &node_of)?;
    let (materials, textures) = build_materials(cx, root, &data)?;
    let meshes = build_meshes(cx, root, &data, &node_of, &skins, materials.len())?;
    let clips = build_clips(cx, root, &data, &node_of)?;

    Ok(Rig {
        source: String::new(),
        skeleton,
        skins,
        meshes,
        materials,
        textures,
        clips,
        warnings: Vec::new(),
    })
}

fn check_version_and_extensions(cx: &mut Ctx, root: &json::Root) -> Result<(), AssetError> {
    let v = &root.asset.version;
    if !v.starts_with("2.") {
        return Err(cx.err(format!("glTF version {v:?} is not supported (only 2.x)")));
    }
    for ext in &root.extensions_required {
        if SUPPORTED_REQUIRED.contains(&ext.as_str()) {
            continue;
        }
        if TOLERATED_REQUIRED.contains(&ext.as_str()) {
            cx.warn.push(format!(
                "required extension {ext} is ignored (it only affects shading)"
            ));
            continue;
        }
        let hint = match ext.as_str() {
            "KHR_draco_mesh_compression"
            | "EXT_meshopt_compression"
            | "KHR_meshopt_compression" => {
                "; re-export the file without mesh compression (e.g. Blender: glTF export, uncheck \
                 'Compression')"
            }
            _ => "",
        };
        return Err(AssetError::UnsupportedExtension {
            file: cx.label.clone(),
            extension: ext.clone(),
            hint: hint.to_string(),
        });
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Nodes.

/// Builds the skeleton (every node, parents first) and the map glTF node → skeleton index.
fn build_skeleton(cx: &mut Ctx, root: &json::Root) -> Result<(Skeleton, Vec<u32>), AssetError> {
    let n = root.nodes.len();
    if n >= u32::MAX as usize {
        return Err(cx.err(format!("{n} nodes is more than drape supports")));
    }
    let mut parent: Vec<Option<usize>> = vec![None; n];
    for (i, node) in root.nodes.iter().enumerate() {
        for c in node.children.iter().flatten() {
            let c = c.value();
            if c >= n {
                return Err(cx.err(format!(
                    "node {i} has child {c}, but the file has {n} nodes"
                )));
            }
            if c == i {
                return Err(cx.err(format!(
                    "node {i} is its own child (a cycle in the node hierarchy)"
                )));
            }
            if let Some(p) = parent[c] {
                return Err(cx.err(format!(
                    "node {c} has two parents (nodes {p} and {i}); glTF nodes form a tree"
                )));
            }
            parent[c] = Some(i);
        }
    }
    // Kahn's algorithm, always taking the smallest available file index: a file whose nodes are
    // already ordered parents-first keeps its numbering, others are reordered minimally.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (c, p) in parent.iter().enumerate() {
        if let Some(p) = p {
            children[*p].push(c);
        }
    }
    let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = (0..n)
        .filter(|&i| parent[i].is_none())
        .map(std::cmp::Reverse)
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(std::cmp::Reverse(i)) = heap.pop() {
        order.push(i);
        for &c in &children[i] {
            heap.push(std::cmp::Reverse(c));
        }
    }
    if order.len() != n {
        let mut seen = vec![false; n];
        for &i in &order {
            seen[i] = true;
        }
        let first = seen.iter().position(|s| !s).unwrap_or(0);
        return Err(cx.err(format!(
            "the node hierarchy has a cycle (node {first} is its own ancestor)"
        )));
    }
    let mut node_of = vec![0u32; n];
    for (new, &old) in order.iter().enumerate() {
        node_of[old] = new as u32;
    }
    let mut sk = Skeleton {
        names: Vec::with_capacity(n),
        parents: Vec::with_capacity(n),
        rest: Vec::with_capacity(n),
    };
    for &old in &order {
        let node = &root.nodes[old];
        sk.names.push(node.name.clone().unwrap_or_default());
        sk.parents.push(parent[old].map(|p| node_of[p]));
        sk.rest.push(node_transform(cx, node, old)?);
    }
    Ok((sk, node_of))
}

fn node_transform(cx: &mut Ctx, node: &json::Node, i: usize) -> Result<Transform, AssetError> {
    if let Some(m) = node.matrix {
        if m.iter().any(|v| !v.is_finite()) {
            return Err(cx.err(format!("node {i} has a non-finite matrix")));
        }
        let mat = Mat4::from_cols_array(&m);
        let t = Transform::from_mat4(&mat);
        if !t.is_finite() {
            return Err(cx.err(format!("node {i} has a degenerate matrix (zero scale?)")));
        }
        // A TRS reproduces the matrix unless it has shear (or is singular).
        let back = t.to_mat4();
        let scale = m.iter().fold(1.0f32, |a, v| a.max(v.abs()));
        let err = (0..16).fold(0.0f32, |a, k| a.max((back.to_cols_array()[k] - m[k]).abs()));
        if err > 1e-4 * scale {
            cx.warn.shear_nodes.push(i);
        }
        return Ok(t);
    }
    let translation = Vec3::from(node.translation.unwrap_or([0.0; 3]));
    let scale = Vec3::from(node.scale.unwrap_or([1.0; 3]));
    let r = node.rotation.map(|q| q.0).unwrap_or([0.0, 0.0, 0.0, 1.0]);
    let rotation = Quat::from_array(r);
    if !translation.is_finite() || !scale.is_finite() || !rotation.is_finite() {
        return Err(cx.err(format!(
            "node {i} has a non-finite translation, rotation or scale"
        )));
    }
    let rotation = if rotation.length_squared() > 1e-12 {
        rotation.normalize()
    } else {
        cx.warn.push(format!(
            "node {i} has a zero rotation quaternion; identity used"
        ));
        Quat::IDENTITY
    };
    Ok(Transform {
        translation,
        rotation,
        scale,
    })
}

// ---------------------------------------------------------------------------------------------
// Skins.

fn build_skins(
    cx: &mut Ctx,
    root: &json::Root,
    data: &Data,
    node_of: &[u32],
) -> Result<Vec<Skin>, AssetError> {
    let mut skins = Vec::with_capacity(root.skins.len());
    for (si, s) in root.skins.iter().enumerate() {
        let mut joints = Vec::with_capacity(s.joints.len());
        for j in &s.joints {
            let j = j.value();
            let node = node_of.get(j).ok_or_else(|| {
                cx.err(format!(
                    "skin {si} has joint node {j}, but the file has {} nodes",
                    node_of.len()
                ))
            })?;
            joints.push(*node);
        }
        if joints.len() > u16::MAX as usize + 1 {
            return Err(cx.err(format!(
                "skin {si} has {} joints; at most 65536 are supported",
                joints.len()
            )));
        }
        let inverse_bind = match s.inverse_bind_matrices {
            None => vec![Mat4::IDENTITY; joints.len()],
            Some(a) => {
                let role = format!("inverse bind matrices of skin {si}");
                let acc = data.accessor(cx, root, a.value(), &role)?;
                if acc.count != joints.len() as u64 {
                    return Err(cx.err(format!(
                        "accessor {} ({role}) has {} matrices but skin {si} has {} joints",
                        a.value(),
                        acc.count,
                        joints.len()
                    )));
                }
                if acc.view.is_some_and(|v| v.stride.is_some()) {
                    cx.warn.forbidden_stride.push(acc.index);
                }
                let m = read_f32::<16>(cx, &acc, &role)?;
                let mut out = Vec::with_capacity(m.len());
                for (k, m) in m.iter().enumerate() {
                    if m.iter().any(|v| !v.is_finite()) {
                        return Err(cx.err(format!(
                            "inverse bind matrix {k} of skin {si} (accessor {}) contains NaN or infinity",
                            a.value()
                        )));
                    }
                    out.push(Mat4::from_cols_array(m));
                }
                out
            }
        };
        let skeleton_root = match s.skeleton {
            None => None,
            Some(r) => Some(*node_of.get(r.value()).ok_or_else(|| {
                cx.err(format!(
                    "skin {si} has skeleton node {}, but the file has {} nodes",
                    r.value(),
                    node_of.len()
                ))
            })?),
        };
        skins.push(Skin {
            name: s.name.clone().unwrap_or_default(),
            joints,
            inverse_bind,
            skeleton_root,
        });
    }
    Ok(skins)
}

// ---------------------------------------------------------------------------------------------
// Materials and textures.

fn build_materials(
    cx: &mut Ctx,
    root: &json::Root,
    data: &Data,
) -> Result<(Vec<Material>, Vec<Texture>), AssetError> {
    // glTF texture index → image index, checked.
    let image_of_texture = |cx: &Ctx, t: usize, m: usize| -> Result<usize, AssetError> {
        let tex = root.textures.get(t).ok_or_else(|| {
            cx.err(format!(
                "material {m} uses texture {t}, but the file has {}",
                root.textures.len()
            ))
        })?;
        let img = tex.source.value();
        if img >= root.images.len() {
            return Err(cx.err(format!(
                "texture {t} uses image {img}, but the file has {}",
                root.images.len()
            )));
        }
        Ok(img)
    };
    // Decode only the images used as base colour (the only texture drape draws), each once.
    let mut decoded: BTreeMap<usize, Option<u32>> = BTreeMap::new();
    let mut textures = Vec::new();
    let mut materials = Vec::with_capacity(root.materials.len());
    for (mi, m) in root.materials.iter().enumerate() {
        let pbr = &m.pbr_metallic_roughness;
        let base_color = Vec4::from(pbr.base_color_factor.0);
        let mut base_color_texture = None;
        if let Some(info) = &pbr.base_color_texture {
            let img = image_of_texture(cx, info.index.value(), mi)?;
            if cx.opts.decode_textures {
                if let Some(t) = decoded.get(&img) {
                    base_color_texture = *t;
                } else {
                    let t = match decode_image(cx, root, data, img)? {
                        Some(tex) => {
                            textures.push(tex);
                            Some(textures.len() as u32 - 1)
                        }
                        None => None,
                    };
                    decoded.insert(img, t);
                    base_color_texture = t;
                }
            }
        }
        let clean = |v: f32, d: f32| if v.is_finite() { v.clamp(0.0, 1.0) } else { d };
        materials.push(Material {
            name: m.name.clone().unwrap_or_else(|| format!("material {mi}")),
            base_color: if base_color.is_finite() {
                base_color
            } else {
                Vec4::ONE
            },
            base_color_texture,
            metallic: clean(pbr.metallic_factor.0, 1.0),
            roughness: clean(pbr.roughness_factor.0, 1.0),
            double_sided: m.double_sided,
        });
    }
    Ok((materials, textures))
}

/// Decodes image `i` to RGBA8. A missing or undecodable image is a warning (the material is
/// drawn with its colour factor), not a failure of the whole character.
fn decode_image(
    cx: &mut Ctx,
    root: &json::Root,
    data: &Data,
    i: usize,
) -> Result<Option<Texture>, AssetError> {
    let img = &root.images[i];
    let what = format!("image {i}");
    let bytes: Cow<[u8]> = match (&img.buffer_view, &img.uri) {
        (Some(v), _) => Cow::Borrowed(data.view(cx, v.value(), || what.clone())?.bytes),
        (None, Some(u)) => match load_uri(cx, u, &what) {
            Ok(b) => Cow::Owned(b),
            Err(e) => {
                cx.warn.push(format!("{what} not loaded: {e}"));
                return Ok(None);
            }
        },
        (None, None) => {
            cx.warn
                .push(format!("{what} has neither bufferView nor uri; ignored"));
            return Ok(None);
        }
    };
    let reader =
        match image::ImageReader::new(std::io::Cursor::new(&bytes[..])).with_guessed_format() {
            Ok(r) => r,
            Err(e) => {
                cx.warn.push(format!("{what} not decoded: {e}"));
                return Ok(None);
            }
        };
    let mut reader = reader;
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(cx.opts.max_total_bytes.saturating_sub(cx.used));
    reader.limits(limits);
    let (w, h) = match reader.into_dimensions() {
        Ok(d) => d,
        Err(e) => {
            cx.warn.push(format!("{what} not decoded: {e}"));
            return Ok(None);
        }
    };
    cx.charge(w as u64 * h as u64 * 4, || what.clone())?;
    let mut reader = image::ImageReader::new(std::io::Cursor::new(&bytes[..]))
        .with_guessed_format()
        .map_err(|e| cx.err(format!("{what}: {e}")))?;
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(
        cx.opts
            .max_total_bytes
            .saturating_sub(cx.used)
            .saturating_add(w as u64 * h as u64 * 4),
    );
    reader.limits(limits);
    // The decoders are third-party code fed with file bytes: contain a panic there as a warning
    // too, so that "loaders never panic" holds for the whole load.
    let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| reader.decode()))
        .unwrap_or_else(|_| {
            Err(image::ImageError::IoError(std::io::Error::other(
                "the decoder panicked",
            )))
        });
    match decoded {
        Ok(im) => {
            let rgba = im.into_rgba8();
            Ok(Some(Texture {
                name: img.name.clone().unwrap_or_else(|| format!("image {i}")),
                width: rgba.width(),
                height: rgba.height(),
                rgba8: rgba.into_raw(),
            }))
        }
        Err(e) => {
            cx.warn.push(format!("{what} not decoded: {e}"));
            Ok(None)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Meshes.

fn build_meshes(
    cx: &mut Ctx,
    root: &json::Root,
    data: &Data,
    node_of: &[u32],
    skins: &[Skin],
    n_materials: usize,
) -> Result<Vec<SkinnedMesh>, AssetError> {
    use json::mesh::{Mode, Semantic};
    let mut out = Vec::new();
    for (ni, node) in root.nodes.iter().enumerate() {
        let Some(mesh_index) = node.mesh else {
            continue;
        };
        let mi = mesh_index.value();
        let mesh = root.meshes.get(mi).ok_or_else(|| {
            cx.err(format!(
                "node {ni} uses mesh {mi}, but the file has {}",
                root.meshes.len()
            ))
        })?;
        let skin = match node.skin {
            None => None,
            Some(s) if s.value() < skins.len() => Some(s.value()),
            Some(s) => {
                return Err(cx.err(format!(
                    "node {ni} uses skin {}, but the file has {}",
                    s.value(),
                    skins.len()
                )))
            }
        };
        for (pi, p) in mesh.primitives.iter().enumerate() {
            let here = format!("mesh {mi} primitive {pi}");
            let name = format!(
                "{}/{}#{pi}",
                node.name.as_deref().unwrap_or(&format!("node {ni}")),
                mesh.name.as_deref().unwrap_or(&format!("mesh {mi}"))
            );
            let topology = match p.mode {
                Checked::Valid(Mode::Triangles) => Topology::Triangles,
                Checked::Valid(Mode::TriangleStrip) => Topology::TriangleStrip,
                Checked::Valid(Mode::TriangleFan) => Topology::TriangleFan,
                Checked::Valid(_) => {
                    cx.warn.skipped_primitives.push(name);
                    continue;
                }
                Checked::Invalid => return Err(cx.err(format!("{here} has an invalid mode"))),
            };
            if p.extensions
                .as_ref()
                .is_some_and(|e| e.others.contains_key("KHR_draco_mesh_compression"))
            {
                // Not required (else refused earlier): the file promises uncompressed fallback
                // data in the accessors; check it really has it.
                let pos = p.attributes.get(&Checked::Valid(Semantic::Positions));
                let has_data = pos
                    .and_then(|a| root.accessors.get(a.value()))
                    .is_some_and(|a| a.buffer_view.is_some());
                if !has_data {
                    return Err(AssetError::UnsupportedExtension {
                        file: cx.label.clone(),
                        extension: "KHR_draco_mesh_compression".into(),
                        hint: format!(" ({here} has no uncompressed fallback)"),
                    });
                }
            }
            let attr = |s: Semantic| p.attributes.get(&Checked::Valid(s)).map(|a| a.value());
            let Some(pos_index) = attr(Semantic::Positions) else {
                cx.warn
                    .push(format!("{here} has no POSITION attribute; skipped"));
                continue;
            };
            let role = |a: &str| format!("{a} of {here}");
            let pos_acc = data.accessor(cx, root, pos_index, &role("POSITION"))?;
            let n = pos_acc.count;
            if n > u32::MAX as u64 {
                return Err(cx.err(format!(
                    "{here} has {n} vertices; at most 2^32 are supported"
                )));
            }
            // Every attribute must have the same count (§3.7.2.1).
            let same_count = |cx: &Ctx, acc: &AccessorDesc, what: &str| -> Result<(), AssetError> {
                if acc.count != n {
                    Err(cx.err(format!(
                        "accessor {} ({}) has {} elements but POSITION has {n}",
                        acc.index,
                        role(what),
                        acc.count
                    )))
                } else {
                    Ok(())
                }
            };
            // Locate (and size-check) everything before reading anything.
            let locate = |cx: &mut Ctx,
                          s: Semantic,
                          what: &str|
             -> Result<Option<AccessorDesc>, AssetError> {
                match attr(s) {
                    None => Ok(None),
                    Some(i) => {
                        let acc = data.accessor(cx, root, i, &role(what))?;
                        same_count(cx, &acc, what)?;
                        Ok(Some(acc))
                    }
                }
            };
            let nrm_acc = locate(cx, Semantic::Normals, "NORMAL")?;
            let uv_acc = locate(cx, Semantic::TexCoords(0), "TEXCOORD_0")?;
            let tan_acc = locate(cx, Semantic::Tangents, "TANGENT")?;
            let j0_acc = locate(cx, Semantic::Joints(0), "JOINTS_0")?;
            let w0_acc = locate(cx, Semantic::Weights(0), "WEIGHTS_0")?;
            let j1_acc = locate(cx, Semantic::Joints(1), "JOINTS_1")?;
            let w1_acc = locate(cx, Semantic::Weights(1), "WEIGHTS_1")?;
            let idx_acc = match p.indices {
                Some(i) => {
                    let acc = data.accessor(cx, root, i.value(), &role("indices"))?;
                    if acc.view.is_some_and(|v| v.stride.is_some()) {
                        cx.warn.forbidden_stride.push(acc.index);
                    }
                    Some(acc)
                }
                None => None,
            };
            let material = match p.material {
                None => None,
                Some(m) if m.value() < n_materials => Some(m.value() as u32),
                Some(m) => {
                    return Err(cx.err(format!(
                        "{here} uses material {}, but the file has {n_materials}",
                        m.value()
                    )))
                }
            };

            let positions: Vec<Vec3> = read_f32::<3>(cx, &pos_acc, &role("POSITION"))?
                .into_iter()
                .map(Vec3::from)
                .collect();
            if let Some(v) = positions.iter().position(|p| !p.is_finite()) {
                return Err(cx.err(format!("POSITION of {here} vertex {v} is not finite")));
            }
            let seq: Vec<u32> = match &idx_acc {
                Some(acc) => {
                    if !matches!(
                        acc.component,
                        Component::U8 | Component::U16 | Component::U32
                    ) {
                        return Err(cx.err(format!(
                            "accessor {} (indices of {here}) has component type {}; indices must be unsigned",
                            acc.index,
                            acc.component.name()
                        )));
                    }
                    let seq: Vec<u32> = read_u32::<1>(cx, acc, &role("indices"))?
                        .into_iter()
                        .map(|[i]| i)
                        .collect();
                    if let Some(k) = seq.iter().position(|&i| i as u64 >= n) {
                        return Err(cx.err(format!(
                            "index {k} of {here} (accessor {}) is {}, but the primitive has {n} vertices",
                            acc.index, seq[k]
                        )));
                    }
                    seq
                }
                None => {
                    cx.charge(n * 4, || format!("indices of {here}"))?;
                    (0..n as u32).collect()
                }
            };
            let (indices, dropped) = geometry::triangulate(seq, topology);
            cx.warn.dropped_indices += dropped;

            let normals = match &nrm_acc {
                Some(acc) => {
                    let v = read_f32::<3>(cx, acc, &role("NORMAL"))?;
                    v.into_iter()
                        .map(|n| Vec3::from(n).try_normalize().unwrap_or(Vec3::Y))
                        .collect()
                }
                None => {
                    cx.charge(n * 12, || format!("computed normals of {here}"))?;
                    geometry::smooth_normals(&positions, &indices)
                }
            };
            let uvs: Vec<Vec2> = match &uv_acc {
                Some(acc) => read_f32::<2>(cx, acc, &role("TEXCOORD_0"))?
                    .into_iter()
                    .map(Vec2::from)
                    .collect(),
                None => Vec::new(),
            };
            let tangents: Vec<Vec4> = match &tan_acc {
                Some(acc) => read_f32::<4>(cx, acc, &role("TANGENT"))?
                    .into_iter()
                    .map(Vec4::from)
                    .collect(),
                None => Vec::new(),
            };

            let mut m = SkinnedMesh {
                name,
                node: node_of[ni],
                skin: None,
                material,
                positions,
                normals,
                uvs,
                tangents,
                indices,
                ..Default::default()
            };
            match (skin, &j0_acc, &w0_acc) {
                (Some(s), Some(ja), Some(wa)) => {
                    let joint_count = skins[s].joints.len();
                    let (joints, mut weights) = read_influences(cx, ja, wa, joint_count, &here, 0)?;
                    let (joints1, mut weights1) = match (&j1_acc, &w1_acc) {
                        (Some(ja), Some(wa)) => read_influences(cx, ja, wa, joint_count, &here, 1)?,
                        _ => (Vec::new(), Vec::new()),
                    };
                    // Quantised weights cannot sum to 1 exactly: allow ½ unit per influence.
                    let quantum = |acc: &AccessorDesc| -> f32 { match acc.component {
                        Component::U8 => 0.5 / 255.0,
                        Component::U16 => 0.5 / 65535.0,
                        _ => 0.0,
                    } };
                    let influences: f32 = if joints1.is_empty() { 4.0 } else { 8.0 };
                    let q = quantum(wa).max(w1_acc.as_ref().map(quantum).unwrap_or(0.0));
                    let tol = (influences * q).max(2e-3);
                    let fx = geometry::normalise_weights(&mut weights, &mut weights1, tol);
                    if fx.renormalised > 0 {
                        cx.warn.weight_meshes += 1;
                    }
                    cx.warn.weights.merge(&fx);
                    m.skin = Some(s as u32);
                    m.joints = joints;
                    m.weights = weights;
                    m.joints1 = joints1;
                    m.weights1 = weights1;
                }
                (Some(s), _, _) => cx.warn.push(format!(
                    "{here} is used by skinned node {ni} (skin {s}) but has no JOINTS_0/WEIGHTS_0; drawn rigid"
                )),
                (None, Some(_), _) => cx.warn.push(format!(
                    "{here} has JOINTS_0 but node {ni} has no skin; drawn rigid"
                )),
                (None, None, _) => {}
            }
            out.push(m);
        }
    }
    Ok(out)
}

/// Joint numbers and weights of one JOINTS_n/WEIGHTS_n set.
type Influences = (Vec<[u16; 4]>, Vec<[f32; 4]>);

/// Reads one JOINTS_n/WEIGHTS_n pair, checking joint numbers against the skin.
fn read_influences(
    cx: &mut Ctx,
    ja: &AccessorDesc,
    wa: &AccessorDesc,
    joint_count: usize,
    here: &str,
    set: u32,
) -> Result<Influences, AssetError> {
    if !matches!(ja.component, Component::U8 | Component::U16) {
        return Err(cx.err(format!(
            "accessor {} (JOINTS_{set} of {here}) has component type {}; UNSIGNED_BYTE or UNSIGNED_SHORT expected",
            ja.index,
            ja.component.name()
        )));
    }
    if !matches!(
        (wa.component, wa.normalized),
        (Component::F32, _) | (Component::U8, true) | (Component::U16, true)
    ) {
        return Err(cx.err(format!(
            "accessor {} (WEIGHTS_{set} of {here}) has component type {}{}; FLOAT or normalized UNSIGNED_BYTE/SHORT expected",
            wa.index,
            wa.component.name(),
            if wa.normalized { "" } else { " (not normalized)" }
        )));
    }
    let j = read_u32::<4>(cx, ja, &format!("JOINTS_{set} of {here}"))?;
    let w = read_f32::<4>(cx, wa, &format!("WEIGHTS_{set} of {here}"))?;
    cx.charge(j.len() as u64 * 8, || format!("JOINTS_{set} of {here}"))?;
    let mut joints = Vec::with_capacity(j.len());
    for (v, (jv, wv)) in j.iter().zip(&w).enumerate() {
        let mut out = [0u16; 4];
        for k in 0..4 {
            if !wv[k].is_finite() {
                return Err(cx.err(format!("WEIGHTS_{set} of {here} vertex {v} is not finite")));
            }
            if jv[k] as usize >= joint_count {
                if wv[k] != 0.0 {
                    return Err(cx.err(format!(
                        "JOINTS_{set} of {here} vertex {v} refers to joint {} (weight {}), but the skin has {joint_count} joints",
                        jv[k], wv[k]
                    )));
                }
                cx.warn.stray_zero_weight_joints += 1;
            } else {
                out[k] = jv[k] as u16;
            }
        }
        joints.push(out);
    }
    Ok((joints, w))
}

// ---------------------------------------------------------------------------------------------
// Animations.

fn build_clips(
    cx: &mut Ctx,
    root: &json::Root,
    data: &Data,
    node_of: &[u32],
) -> Result<Vec<Clip>, AssetError> {
    use json::animation::{Interpolation as I, Property};
    let mut clips = Vec::with_capacity(root.animations.len());
    for (ai, a) in root.animations.iter().enumerate() {
        let name = a.name.clone().unwrap_or_else(|| format!("animation {ai}"));
        let mut clip = Clip {
            name,
            ..Default::default()
        };
        for (ci, ch) in a.channels.iter().enumerate() {
            let here = || format!("channel {ci} of animation {ai} ({:?})", clip.name);
            let si = ch.sampler.value();
            let s = a.samplers.get(si).ok_or_else(|| {
                cx.err(format!(
                    "{} uses sampler {si}, but the animation has {}",
                    here(),
                    a.samplers.len()
                ))
            })?;
            let target = ch.target.node.value();
            let node = *node_of.get(target).ok_or_else(|| {
                cx.err(format!(
                    "{} targets node {target}, but the file has {} nodes",
                    here(),
                    node_of.len()
                ))
            })?;
            let path = match ch.target.path {
                Checked::Valid(p) => p,
                Checked::Invalid => {
                    return Err(cx.err(format!("{} has an invalid target path", here())))
                }
            };
            if path == Property::MorphTargetWeights {
                cx.warn.morph_channels += 1;
                continue;
            }
            let interpolation = match s.interpolation {
                Checked::Valid(I::Step) => Interpolation::Step,
                Checked::Valid(I::Linear) => Interpolation::Linear,
                Checked::Valid(I::CubicSpline) => Interpolation::CubicSpline,
                Checked::Invalid => {
                    return Err(cx.err(format!(
                        "sampler {si} of animation {ai} has an invalid interpolation"
                    )))
                }
            };
            let per_key = if interpolation == Interpolation::CubicSpline {
                3
            } else {
                1
            };
            let in_role = format!("input of sampler {si} of animation {ai}");
            let out_role = format!("output of sampler {si} of animation {ai}");
            let input = data.accessor(cx, root, s.input.value(), &in_role)?;
            let output = data.accessor(cx, root, s.output.value(), &out_role)?;
            for acc in [&input, &output] {
                if acc.view.is_some_and(|v| v.stride.is_some()) {
                    cx.warn.forbidden_stride.push(acc.index);
                }
            }
            if output.count != input.count.saturating_mul(per_key) {
                return Err(cx.err(format!(
                    "sampler {si} of animation {ai}: {} keys (accessor {}) need {} output values{} but accessor {} has {}",
                    input.count,
                    input.index,
                    input.count.saturating_mul(per_key),
                    if per_key == 3 { " (CUBICSPLINE: 3 per key)" } else { "" },
                    output.index,
                    output.count
                )));
            }
            if input.count == 0 {
                cx.warn.empty_samplers += 1;
                continue;
            }
            let times: Vec<f32> = read_f32::<1>(cx, &input, &in_role)?
                .into_iter()
                .map(|[t]| t)
                .collect();
            let keep = check_times(cx, &times, si, ai)?;
            let times = filter_keys(times, &keep, 1);
            macro_rules! track {
                ($n:literal, $conv:expr) => {{
                    let v = read_f32::<$n>(cx, &output, &out_role)?;
                    if let Some(k) = v.iter().position(|e| e.iter().any(|x| !x.is_finite())) {
                        return Err(cx.err(format!("{out_role} value {k} is not finite")));
                    }
                    let v = filter_keys(v, &keep, per_key as usize);
                    let conv = $conv;
                    Track {
                        node,
                        times,
                        values: v.into_iter().enumerate().map(|(k, e)| conv(k, e)).collect(),
                        interpolation,
                    }
                }};
            }
            match path {
                Property::Translation => clip.translations.push(track!(3, |_, e| Vec3::from(e))),
                Property::Scale => clip.scales.push(track!(3, |_, e| Vec3::from(e))),
                Property::Rotation => clip.rotations.push(track!(4, |k: usize, e: [f32; 4]| {
                    let q = Quat::from_array(e);
                    // Cubic tangents (entries 0 and 2 of each triple) are not unit quaternions.
                    if per_key == 3 && k % 3 != 1 {
                        q
                    } else if q.length_squared() > 1e-12 {
                        q.normalize()
                    } else {
                        Quat::IDENTITY
                    }
                })),
                Property::MorphTargetWeights => {}
            }
        }
        let firsts = clip
            .translations
            .iter()
            .map(|t| &t.times)
            .chain(clip.rotations.iter().map(|t| &t.times))
            .chain(clip.scales.iter().map(|t| &t.times));
        let (mut start, mut end) = (f32::INFINITY, f32::NEG_INFINITY);
        for t in firsts {
            if let (Some(a), Some(b)) = (t.first(), t.last()) {
                start = start.min(*a);
                end = end.max(*b);
            }
        }
        if start.is_finite() {
            clip.start = start;
            clip.end = end;
        }
        clips.push(clip);
    }
    Ok(clips)
}

/// Checks key times (finite, non-decreasing) and returns which keys to keep: exact duplicates
/// of the previous time are dropped (the first key at a time wins) so that times are strictly
/// increasing, as [`Track::times`] requires.
fn check_times(cx: &mut Ctx, times: &[f32], si: usize, ai: usize) -> Result<Vec<bool>, AssetError> {
    let mut keep = Vec::with_capacity(times.len());
    let mut prev = f32::NEG_INFINITY;
    for (k, &t) in times.iter().enumerate() {
        if !t.is_finite() {
            return Err(cx.err(format!(
                "key time {k} of sampler {si} of animation {ai} is not finite"
            )));
        }
        if t < prev {
            return Err(cx.err(format!(
                "key times of sampler {si} of animation {ai} decrease at key {k} ({t} after {prev})"
            )));
        }
        let dup = t == prev;
        if dup {
            cx.warn.duplicate_keys += 1;
        }
        keep.push(!dup);
        prev = t;
    }
    Ok(keep)
}

fn filter_keys<T: Copy>(v: Vec<T>, keep: &[bool], per_key: usize) -> Vec<T> {
    if keep.iter().all(|&k| k) {
        return v;
    }
    v.chunks(per_key)
        .zip(keep)
        .filter(|(_, &k)| k)
        .flat_map(|(c, _)| c.iter().copied())
        .collect()
}
