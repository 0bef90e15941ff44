//! glTF materials (PBR metallic-roughness factors) and the base-colour images they use,
//! decoded to RGBA8 within the memory budget (glTF 2.0 §3.9, §3.8).

use std::borrow::Cow;
use std::collections::BTreeMap;

use ::gltf::json;

use super::document::{load_uri, Ctx, Data};
use crate::asset::AssetError;
use crate::math::Vec4;
use crate::rig::{Material, Texture};

pub(super) fn build_materials(
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
