//! FBX geometry → [`SkinnedMesh`]: control points in file order, polygons fanned into triangles,
//! layer-0 normals and UVs resolved through their mapping and reference modes, the geometric
//! transform baked in; and the embedded image of a `Texture` (its `Video`'s `Content`).

use std::collections::{BTreeMap, HashMap};

use glam::{DMat3, DMat4, DVec3};

use super::binary::{Node, Prop};
use super::scene::Obj;
use crate::asset::geometry;
use crate::asset::LoadOptions;
use crate::math::{Vec2, Vec3};
use crate::rig::{SkinnedMesh, Texture};

/// Layer-element data mapped to control points.
enum Mapping {
    PolygonVertex,
    ControlPoint,
    Polygon,
    AllSame,
}

fn mapping_of(layer: &Node) -> Result<Mapping, String> {
    let m = layer
        .child_prop("MappingInformationType")
        .and_then(|p| p.as_str())
        .unwrap_or("ByPolygonVertex");
    Ok(match m {
        "ByPolygonVertex" => Mapping::PolygonVertex,
        "ByVertice" | "ByVertex" | "ByControlPoint" => Mapping::ControlPoint,
        "ByPolygon" => Mapping::Polygon,
        "AllSame" => Mapping::AllSame,
        other => return Err(format!("{}: unsupported mapping {other:?}", layer.name)),
    })
}

/// Reads `values` (with `stride` numbers per item) of a layer element, resolved through its
/// index array when `ReferenceInformationType` says so, for polygon vertex `pv` of polygon
/// `poly` at control point `cp`.
struct Layer {
    mapping: Mapping,
    values: Vec<f64>,
    index: Option<Vec<i32>>,
    stride: usize,
}

impl Layer {
    fn read(layer: &Node, key: &str, index_key: &str, stride: usize) -> Result<Self, String> {
        let mapping = mapping_of(layer)?;
        let values = layer
            .child_prop(key)
            .and_then(|p| p.to_f64s())
            .ok_or_else(|| format!("{} has no {key} array", layer.name))?;
        let refs = layer
            .child_prop("ReferenceInformationType")
            .and_then(|p| p.as_str())
            .unwrap_or("Direct");
        let index = if refs == "IndexToDirect" || refs == "Index" {
            Some(
                layer
                    .child_prop(index_key)
                    .and_then(|p| p.to_i32s())
                    .ok_or_else(|| {
                        format!("{} says IndexToDirect but has no {index_key}", layer.name)
                    })?,
            )
        } else {
            None
        };
        Ok(Layer {
            mapping,
            values,
            index,
            stride,
        })
    }

    fn get(&self, pv: usize, poly: usize, cp: usize) -> Option<&[f64]> {
        let i = match self.mapping {
            Mapping::PolygonVertex => pv,
            Mapping::ControlPoint => cp,
            Mapping::Polygon => poly,
            Mapping::AllSame => 0,
        };
        let i = match &self.index {
            Some(ix) => usize::try_from(*ix.get(i)?).ok()?,
            None => i,
        };
        self.values.get(i * self.stride..(i + 1) * self.stride)
    }
}

pub(super) fn read_geometry(
    g: &Obj,
    model: &str,
    geo: &DMat4,
    mat_ids: &[u32],
    warnings: &mut Vec<String>,
) -> Result<SkinnedMesh, String> {
    let v = g
        .node
        .child_prop("Vertices")
        .and_then(|p| p.to_f64s())
        .unwrap_or_default();
    if v.len() % 3 != 0 {
        return Err(format!(
            "Vertices has {} numbers, not a multiple of 3",
            v.len()
        ));
    }
    let n = v.len() / 3;
    let positions: Vec<Vec3> = v
        .chunks_exact(3)
        .map(|c| geo.transform_point3(DVec3::new(c[0], c[1], c[2])).as_vec3())
        .collect();
    if positions.iter().any(|p| !p.is_finite()) {
        return Err("a control point is not finite".into());
    }
    let pvi = g
        .node
        .child_prop("PolygonVertexIndex")
        .and_then(|p| p.to_i32s())
        .unwrap_or_default();
    // Polygons: (first polygon-vertex, count).
    let mut polys: Vec<(usize, usize)> = Vec::new();
    let mut cps: Vec<usize> = Vec::with_capacity(pvi.len());
    let mut start = 0;
    for (k, &i) in pvi.iter().enumerate() {
        let (cp, end) = if i < 0 { (!i, true) } else { (i, false) };
        let cp = cp as usize;
        if cp >= n {
            return Err(format!(
                "PolygonVertexIndex {k} names control point {cp}, but there are {n}"
            ));
        }
        cps.push(cp);
        if end {
            polys.push((start, k + 1 - start));
            start = k + 1;
        }
    }
    if start != pvi.len() {
        warnings.push(format!(
            "mesh {model:?}: the last polygon has no end marker (negative index); closed it"
        ));
        polys.push((start, pvi.len() - start));
    }
    let layer = |name: &'static str| g.node.children_named(name).next();
    // Materials per polygon: the mesh takes the most used one.
    let mut material = mat_ids.first().copied();
    if let Some(lm) = layer("LayerElementMaterial") {
        if let Some(m) = lm.child_prop("Materials").and_then(|p| p.to_i32s()) {
            let mut counts: BTreeMap<i32, usize> = BTreeMap::new();
            let by_poly = matches!(mapping_of(lm), Ok(Mapping::Polygon)) && m.len() > 1;
            for &i in if by_poly {
                &m[..]
            } else {
                &m[..m.len().min(1)]
            } {
                *counts.entry(i).or_default() += 1;
            }
            if counts.len() > 1 {
                warnings.push(format!(
                    "mesh {model:?} uses {} materials; drape draws it with the most used one \
                     (its control points are kept as they are, so the mesh is not split)",
                    counts.len()
                ));
            }
            if let Some((&best, _)) = counts.iter().max_by_key(|(_, &c)| c) {
                material = usize::try_from(best)
                    .ok()
                    .and_then(|i| mat_ids.get(i).copied())
                    .or(material);
            }
        }
    }
    let mut indices = Vec::new();
    let mut skipped = 0;
    for &(s, c) in &polys {
        if c < 3 {
            skipped += 1;
            continue;
        }
        for k in 1..c - 1 {
            indices.extend_from_slice(&[cps[s] as u32, cps[s + k] as u32, cps[s + k + 1] as u32]);
        }
    }
    if skipped > 0 {
        warnings.push(format!(
            "mesh {model:?}: {skipped} polygon(s) with fewer than 3 corners skipped"
        ));
    }
    // Normals (layer 0), averaged per control point.
    let normal_mat = DMat3::from_mat4(*geo).inverse().transpose();
    let mut normals = vec![Vec3::ZERO; n];
    let mut have_normals = false;
    if let Some(ln) = layer("LayerElementNormal") {
        let l = Layer::read(ln, "Normals", "NormalsIndex", 3)?;
        for (pi, &(s, c)) in polys.iter().enumerate() {
            for pv in s..s + c {
                if let Some(v) = l.get(pv, pi, cps[pv]) {
                    let nv = normal_mat * DVec3::new(v[0], v[1], v[2]);
                    normals[cps[pv]] += nv.normalize_or_zero().as_vec3();
                    have_normals = true;
                }
            }
        }
    }
    let computed = geometry::smooth_normals(&positions, &indices);
    for (i, nv) in normals.iter_mut().enumerate() {
        *nv = if have_normals {
            nv.try_normalize().unwrap_or(computed[i])
        } else {
            computed[i]
        };
    }
    // UVs (layer 0): the first one each control point is given; V flipped to glTF's top-left
    // origin.
    let mut uvs = Vec::new();
    if let Some(lu) = layer("LayerElementUV") {
        let l = Layer::read(lu, "UV", "UVIndex", 2)?;
        let mut set = vec![false; n];
        uvs = vec![Vec2::ZERO; n];
        let mut seams = 0usize;
        for (pi, &(s, c)) in polys.iter().enumerate() {
            for pv in s..s + c {
                if let Some(uv) = l.get(pv, pi, cps[pv]) {
                    let uv = Vec2::new(uv[0] as f32, 1.0 - uv[1] as f32);
                    let cp = cps[pv];
                    if !set[cp] {
                        set[cp] = true;
                        uvs[cp] = uv;
                    } else if (uvs[cp] - uv).abs().max_element() > 1e-6 {
                        seams += 1;
                    }
                }
            }
        }
        if seams > 0 {
            warnings.push(format!(
                "mesh {model:?}: {seams} polygon corner(s) on UV seams; each control point keeps \
                 its first UV (the file's vertex order is kept, nothing is split)"
            ));
        }
    }
    Ok(SkinnedMesh {
        name: model.to_string(),
        node: 0,
        skin: None,
        material,
        positions,
        normals,
        uvs,
        indices,
        ..Default::default()
    })
}

/// The image a `Texture` object points to through its `Video`, when embedded (`Content`).
pub(super) fn embedded_texture(
    objs: &HashMap<i64, Obj>,
    tex: i64,
    sources: &dyn Fn(i64, &str) -> Vec<(i64, Option<String>)>,
    opts: &LoadOptions,
    warnings: &mut Vec<String>,
) -> Option<Texture> {
    if !opts.decode_textures {
        return None;
    }
    let name = objs.get(&tex).map(|o| o.name.clone()).unwrap_or_default();
    let content = sources(tex, "Video").into_iter().find_map(|(v, _)| {
        match objs[&v].node.child_prop("Content") {
            Some(Prop::Raw(b)) if !b.is_empty() => Some(b.clone()),
            _ => None,
        }
    });
    let Some(bytes) = content else {
        let file = objs
            .get(&tex)
            .and_then(|o| {
                o.node
                    .child_prop("RelativeFilename")
                    .or(o.node.child_prop("FileName"))
            })
            .and_then(|p| p.as_str())
            .unwrap_or("?")
            .to_string();
        warnings.push(format!(
            "texture {name:?} is not embedded in the file ({file}); drawn without it"
        ));
        return None;
    };
    let decoded = std::panic::catch_unwind(|| {
        let mut r = image::ImageReader::new(std::io::Cursor::new(&bytes[..]))
            .with_guessed_format()
            .map_err(|e| e.to_string())?;
        let mut limits = image::Limits::default();
        limits.max_alloc = Some(opts.max_total_bytes);
        r.limits(limits);
        r.decode().map_err(|e| e.to_string())
    });
    match decoded {
        Ok(Ok(img)) => {
            let rgba = img.to_rgba8();
            Some(Texture {
                name,
                width: rgba.width(),
                height: rgba.height(),
                rgba8: rgba.into_raw(),
            })
        }
        Ok(Err(e)) => {
            warnings.push(format!("texture {name:?} not decoded: {e}"));
            None
        }
        Err(_) => {
            warnings.push(format!("texture {name:?} not decoded: the decoder failed"));
            None
        }
    }
}
