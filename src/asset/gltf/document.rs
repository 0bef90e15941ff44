//! The glTF document as drape reads it: the loading context (file name, memory budget,
//! warnings), the version and required-extension check, buffers (GLB BIN chunk, data URIs,
//! files next to the glTF file), buffer views resolved to byte slices, and the helpers that
//! locate accessors and read them through drape's bounds-checked [`accessor`] reader. Nothing
//! here may panic on file content.

use std::borrow::Cow;
use std::path::Path;

use ::gltf::json;
use json::validation::Checked;

use crate::asset::accessor::{self, AccessorDesc, Component, Shape, SparseDesc, ViewData};
use crate::asset::geometry::WeightFixes;
use crate::asset::{uri, AssetError, LoadOptions};

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

// ---------------------------------------------------------------------------------------------
// Context: the file's name, the memory budget, and warnings collected while loading.

pub(super) struct Ctx<'o> {
    pub(super) label: String,
    pub(super) opts: &'o LoadOptions,
    /// Bytes charged so far against `opts.max_total_bytes`.
    pub(super) used: u64,
    pub(super) base_dir: Option<&'o Path>,
    pub(super) warn: Warnings,
}

impl Ctx<'_> {
    pub(super) fn err(&self, problem: impl Into<String>) -> AssetError {
        AssetError::Malformed {
            file: self.label.clone(),
            problem: problem.into(),
        }
    }

    /// Reserves `bytes` of the memory budget for `what`, before allocating them.
    pub(super) fn charge(
        &mut self,
        bytes: u64,
        what: impl FnOnce() -> String,
    ) -> Result<(), AssetError> {
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
pub(super) struct Warnings {
    pub(super) list: Vec<String>,
    /// Accessors read through a byteStride that the spec forbids for their use (animation
    /// samplers, inverse bind matrices, indices).
    pub(super) forbidden_stride: Vec<usize>,
    pub(super) morph_channels: usize,
    pub(super) duplicate_keys: usize,
    pub(super) empty_samplers: usize,
    pub(super) weights: WeightFixes,
    pub(super) weight_meshes: usize,
    /// Joint slots beyond the skin with zero weight (harmless, set to joint 0).
    pub(super) stray_zero_weight_joints: usize,
    pub(super) shear_nodes: Vec<usize>,
    pub(super) skipped_primitives: Vec<String>,
    pub(super) dropped_indices: usize,
}

impl Warnings {
    pub(super) fn push(&mut self, s: String) {
        if !self.list.contains(&s) {
            self.list.push(s);
        }
    }

    pub(super) fn finish(mut self) -> Vec<String> {
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

pub(super) fn read_file_limited(
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
pub(super) fn load_uri(cx: &mut Ctx, uri_str: &str, what: &str) -> Result<Vec<u8>, AssetError> {
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
pub(super) struct Data<'b> {
    pub(super) views: Vec<ViewData<'b>>,
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
    match c {
        Checked::Valid(g) => {
            component_of(&Checked::Valid(json::accessor::GenericComponentType(g.0)))
        }
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
    pub(super) fn view(
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
    pub(super) fn accessor(
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
pub(super) fn read_f32<const N: usize>(
    cx: &mut Ctx,
    acc: &AccessorDesc,
    role: &str,
) -> Result<Vec<[f32; N]>, AssetError> {
    cx.charge(acc.count.saturating_mul(4 * N as u64), || {
        format!("accessor {} ({role})", acc.index)
    })?;
    accessor::read_f32::<N>(acc).map_err(|e| cx.err(with_role(e, acc.index, role)))
}

pub(super) fn read_u32<const N: usize>(
    cx: &mut Ctx,
    acc: &AccessorDesc,
    role: &str,
) -> Result<Vec<[u32; N]>, AssetError> {
    cx.charge(acc.count.saturating_mul(4 * N as u64), || {
        format!("accessor {} ({role})", acc.index)
    })?;
    accessor::read_u32::<N>(acc).map_err(|e| cx.err(with_role(e, acc.index, role)))
}

pub(super) fn check_version_and_extensions(
    cx: &mut Ctx,
    root: &json::Root,
) -> Result<(), AssetError> {
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

/// The file's buffers: the GLB BIN chunk, data URIs, or files next to the glTF file, each cut
/// to its declared byteLength.
pub(super) fn load_buffers<'b>(
    cx: &mut Ctx,
    root: &json::Root,
    bin: Option<&'b [u8]>,
) -> Result<Vec<Cow<'b, [u8]>>, AssetError> {
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
    Ok(buffers)
}

/// Buffer views, checked against their buffer once, here, and resolved to byte slices.
pub(super) fn resolve_views<'d>(
    cx: &Ctx,
    root: &json::Root,
    buffers: &'d [Cow<[u8]>],
) -> Result<Data<'d>, AssetError> {
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
    Ok(Data {
        views: views
            .iter()
            .enumerate()
            .map(|(i, &(bi, off, end, stride))| ViewData {
                index: i,
                bytes: &buffers[bi][off..end],
                stride,
            })
            .collect(),
    })
}
