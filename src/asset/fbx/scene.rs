//! FBX object graph → [`Rig`]: models, geometry, skins, clips, materials, embedded textures.
//!
//! FBX 7 files keep every object in `Objects` (with a 64-bit id, a name, a class and a subclass)
//! and tie them together in `Connections` (`C: "OO", child, parent` and
//! `C: "OP", child, parent, "property"`). What is read, and how:
//!
//! - **Models** (`LimbNode`, `Null`, `Mesh`, `Root`, …) become skeleton nodes, in file order with
//!   parents first, under one added node `RootNode` that converts the file's axes
//!   (`GlobalSettings` Up/Front/Coord axis) to glTF's Y-up, +Z-front and its unit
//!   (`UnitScaleFactor` centimetres) to metres. A model's local transform is the FBX SDK's
//!   `T · Roff · Rp · Rpre · R · Rpost⁻¹ · Rp⁻¹ · Soff · Sp · S · Sp⁻¹`, with `R` composed in the
//!   model's `RotationOrder`, and `Rpre`/`Rpost` (always in XYZ order, as in the FBX SDK)
//!   honoured only when `RotationActive` is set, as Blender's FBX importer does. The result is
//!   stored as TRS.
//! - **Geometry** control points are the mesh's vertices, in file order, nothing split or merged;
//!   polygons (negative index = last vertex of a polygon) are fanned into triangles. Normals and
//!   UVs (layer 0) are per polygon vertex in most files; each control point gets the average
//!   normal and the first UV its polygons give it. `GeometricTranslation/Rotation/Scaling` are
//!   baked into the vertices.
//! - **Skin** deformers become skins: one joint per `Cluster` (weighted or not), inverse bind
//!   `TransformLink⁻¹ · Transform`, so that a vertex is placed at
//!   `world(link) · TransformLink⁻¹ · Transform · v` as the FBX SDK skins it. Control points no
//!   cluster weighs follow the mesh's own model.
//! - **Animation stacks** with curves become clips named like the stack (`mixamo.com`); empty
//!   stacks (Mixamo's `Take 001`) are skipped. Each animated model is evaluated at the union of
//!   its curves' key times (FBX ticks, 46,186,158,000 per second; curves interpolated linearly in
//!   between) through the full transform above and stored as TRS keys, so pivots and
//!   pre-rotations are exact at every key.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use glam::{DMat3, DMat4, DVec3};

use super::binary::{Document, Node, Prop};
use super::curve::{read_curve, Curve};
use super::geometry::{embedded_texture, read_geometry};
use super::transform::ModelXf;
pub use super::transform::{euler_quat, quat_euler_xyz};
use crate::anim::{Clip, Interpolation, Skeleton, Skin, Track};
use crate::asset::geometry;
use crate::asset::LoadOptions;
use crate::math::{Mat4, Transform, Vec4};
use crate::rig::{Material, Rig, Texture};

/// FBX time unit: ticks per second (FBX SDK `FbxTime`).
pub const TICKS_PER_SECOND: f64 = 46_186_158_000.0;

/// One object of the `Objects` section.
pub(super) struct Obj<'a> {
    pub(super) class: &'a str,
    pub(super) name: String,
    pub(super) sub: String,
    pub(super) node: &'a Node,
}

/// The object name of an FBX 7 name property: `"Hips\0\x01Model"` → `"Hips"`.
pub fn object_name(s: &str) -> String {
    match s.find("\0\u{1}") {
        Some(i) => s[..i].to_string(),
        None => s.to_string(),
    }
}

/// `Properties70` of a record as name → values (the entries after name, type, label, flags).
fn props70(node: &Node) -> HashMap<String, Vec<Prop>> {
    let mut out = HashMap::new();
    if let Some(p) = node.child("Properties70") {
        for e in p.children_named("P") {
            if let Some(name) = e.props.first().and_then(|p| p.as_str()) {
                out.insert(name.to_string(), e.props.iter().skip(4).cloned().collect());
            }
        }
    }
    out
}

/// An object's properties with the file's template (`Definitions`) as fallback.
pub(super) struct Props<'a> {
    own: HashMap<String, Vec<Prop>>,
    template: Option<&'a HashMap<String, Vec<Prop>>>,
}

impl Props<'_> {
    pub(super) fn get(&self, name: &str) -> Option<&Vec<Prop>> {
        self.own
            .get(name)
            .or_else(|| self.template.and_then(|t| t.get(name)))
    }

    pub(super) fn vec3(&self, name: &str, default: DVec3) -> DVec3 {
        match self.get(name) {
            Some(v) if v.len() >= 3 => DVec3::new(
                v[0].as_f64().unwrap_or(default.x),
                v[1].as_f64().unwrap_or(default.y),
                v[2].as_f64().unwrap_or(default.z),
            ),
            _ => default,
        }
    }

    pub(super) fn num(&self, name: &str, default: f64) -> f64 {
        self.get(name)
            .and_then(|v| v.first())
            .and_then(|p| p.as_f64())
            .unwrap_or(default)
    }
}

/// Builds the rig. `label` names the file in messages; `Err` is a sentence without it.
pub fn build(doc: &Document, label: &str, opts: &LoadOptions) -> Result<Rig, String> {
    let mut warnings: Vec<String> = Vec::new();
    let objects_node = doc
        .node("Objects")
        .ok_or("the file has no Objects section (not an FBX scene, or corrupt)")?;
    // Objects by id, and their file order.
    let mut objs: HashMap<i64, Obj> = HashMap::new();
    let mut order: Vec<i64> = Vec::new();
    for n in &objects_node.children {
        let Some(id) = n.props.first().and_then(|p| p.as_i64()) else {
            continue;
        };
        let name = n
            .props
            .get(1)
            .and_then(|p| p.as_str())
            .map(object_name)
            .unwrap_or_default();
        let sub = n
            .props
            .get(2)
            .and_then(|p| p.as_str())
            .unwrap_or("")
            .to_string();
        if objs
            .insert(
                id,
                Obj {
                    class: n.name.as_str(),
                    name,
                    sub,
                    node: n,
                },
            )
            .is_none()
        {
            order.push(id);
        }
    }
    // Connections: child → parents (with property name for OP).
    let mut conns: Vec<(i64, i64, Option<String>)> = Vec::new();
    if let Some(c) = doc.node("Connections") {
        for e in c.children_named("C") {
            let kind = e.props.first().and_then(|p| p.as_str()).unwrap_or("");
            let (Some(child), Some(parent)) = (
                e.props.get(1).and_then(|p| p.as_i64()),
                e.props.get(2).and_then(|p| p.as_i64()),
            ) else {
                continue;
            };
            let prop = if kind == "OP" {
                e.props.get(3).and_then(|p| p.as_str()).map(str::to_string)
            } else {
                None
            };
            conns.push((child, parent, prop));
        }
    }
    let class_of = |id: i64| objs.get(&id).map(|o| o.class);
    // Children of a parent with a given class, in connection order.
    let sources = |parent: i64, class: &str| -> Vec<(i64, Option<String>)> {
        conns
            .iter()
            .filter(|(c, p, _)| *p == parent && class_of(*c) == Some(class))
            .map(|(c, _, prop)| (*c, prop.clone()))
            .collect()
    };
    let targets = |child: i64, class: &str| -> Vec<(i64, Option<String>)> {
        conns
            .iter()
            .filter(|(c, p, _)| *c == child && class_of(*p) == Some(class))
            .map(|(_, p, prop)| (*p, prop.clone()))
            .collect()
    };

    // Templates (Definitions → ObjectType → PropertyTemplate).
    let mut templates: HashMap<String, HashMap<String, Vec<Prop>>> = HashMap::new();
    if let Some(d) = doc.node("Definitions") {
        for ot in d.children_named("ObjectType") {
            if let (Some(class), Some(t)) = (
                ot.props.first().and_then(|p| p.as_str()),
                ot.child("PropertyTemplate"),
            ) {
                templates.insert(class.to_string(), props70(t));
            }
        }
    }
    let props_of = |o: &Obj| Props {
        own: props70(o.node),
        template: templates.get(o.class),
    };

    // ---- Axes and units.
    let gs = doc.node("GlobalSettings").map(props70).unwrap_or_default();
    let gs = Props {
        own: gs,
        template: None,
    };
    let unit = gs.num("UnitScaleFactor", 1.0);
    let unit = if unit.is_finite() && unit > 0.0 {
        unit
    } else {
        warnings.push(format!(
            "UnitScaleFactor {unit} is not usable; centimetres assumed"
        ));
        1.0
    };
    let axis = |a: &str, s: &str, default: i64| -> DVec3 {
        let i = gs.num(a, default as f64) as i64;
        let sign = if gs.num(s, 1.0) < 0.0 { -1.0 } else { 1.0 };
        match i {
            0 => DVec3::X * sign,
            1 => DVec3::Y * sign,
            _ => DVec3::Z * sign,
        }
    };
    let (right, up, front) = (
        axis("CoordAxis", "CoordAxisSign", 0),
        axis("UpAxis", "UpAxisSign", 1),
        axis("FrontAxis", "FrontAxisSign", 2),
    );
    // Rows: drape X = file right, Y = file up, Z = file front.
    let mut axes = DMat3::from_cols(right, up, front).transpose();
    if (axes.determinant().abs() - 1.0).abs() > 1e-6 {
        warnings.push("GlobalSettings names the same axis twice; Y-up assumed".into());
        axes = DMat3::IDENTITY;
    }
    let root_mat = DMat4::from_mat3(axes) * DMat4::from_scale(DVec3::splat(unit / 100.0));

    // ---- Models → skeleton nodes (node 0 = RootNode).
    let model_ids: Vec<i64> = order
        .iter()
        .copied()
        .filter(|id| objs[id].class == "Model")
        .collect();
    let model_parent = |id: i64| -> Option<i64> { targets(id, "Model").first().map(|(p, _)| *p) };
    let mut node_of: HashMap<i64, u32> = HashMap::new();
    let mut sorted: Vec<i64> = Vec::new();
    // Parents first, file order otherwise (repeated passes; a cycle leaves models unplaced).
    let mut pending = model_ids.clone();
    while !pending.is_empty() {
        let before = pending.len();
        pending.retain(|&id| match model_parent(id) {
            Some(p) if !node_of.contains_key(&p) && objs.get(&p).is_some() => true,
            _ => {
                node_of.insert(id, sorted.len() as u32 + 1);
                sorted.push(id);
                false
            }
        });
        if pending.len() == before {
            return Err(format!(
                "the model hierarchy has a cycle (through {:?})",
                objs[&pending[0]].name
            ));
        }
    }
    let mut skeleton = Skeleton {
        names: vec!["RootNode".into()],
        parents: vec![None],
        rest: vec![Transform::from_mat4(&root_mat.as_mat4())],
    };
    let mut xf: HashMap<i64, ModelXf> = HashMap::new();
    let mut sheared = Vec::new();
    for &id in &sorted {
        let o = &objs[&id];
        let x = ModelXf::read(&props_of(o));
        let local = x.rest_local();
        let t = Transform::from_mat4(&local.as_mat4());
        if !t.is_finite() {
            return Err(format!(
                "model {:?} has a transform that is not finite",
                o.name
            ));
        }
        if !local.abs_diff_eq(
            t.to_mat4().as_dmat4(),
            1e-3 * (1.0
                + local
                    .abs()
                    .to_cols_array()
                    .iter()
                    .fold(0.0f64, |a, &b| a.max(b))),
        ) {
            sheared.push(o.name.clone());
        }
        xf.insert(id, x);
        skeleton.names.push(o.name.clone());
        skeleton.parents.push(Some(
            model_parent(id)
                .and_then(|p| node_of.get(&p).copied())
                .unwrap_or(0),
        ));
        skeleton.rest.push(t);
    }
    if !sheared.is_empty() {
        warnings.push(format!(
            "{} model(s) have a sheared transform (non-uniform scale under rotation) that TRS \
             cannot hold exactly: {}",
            sheared.len(),
            sheared.join(", ")
        ));
    }

    // ---- Materials and textures.
    let mut materials: Vec<Material> = Vec::new();
    let mut textures: Vec<Texture> = Vec::new();
    let mut material_index: HashMap<i64, u32> = HashMap::new();
    let mut texture_index: HashMap<i64, Option<u32>> = HashMap::new();
    for &id in &order {
        let o = &objs[&id];
        if o.class != "Material" {
            continue;
        }
        let p = props_of(o);
        let diffuse = p.vec3("DiffuseColor", DVec3::splat(0.8)) * p.num("DiffuseFactor", 1.0);
        let opacity = p.num("Opacity", 1.0 - p.num("TransparencyFactor", 0.0));
        let mut tex = None;
        for (t, prop) in sources(id, "Texture") {
            let slot = prop.unwrap_or_default();
            if !(slot == "DiffuseColor" || slot.ends_with("baseColor") || slot == "Diffuse") {
                continue;
            }
            let entry = texture_index.entry(t).or_insert_with(|| {
                embedded_texture(&objs, t, &sources, opts, &mut warnings).map(|tx| {
                    textures.push(tx);
                    textures.len() as u32 - 1
                })
            });
            tex = *entry;
            if tex.is_some() {
                break;
            }
        }
        material_index.insert(id, materials.len() as u32);
        materials.push(Material {
            name: o.name.clone(),
            base_color: Vec4::new(
                diffuse.x as f32,
                diffuse.y as f32,
                diffuse.z as f32,
                opacity.clamp(0.0, 1.0) as f32,
            ),
            base_color_texture: tex,
            metallic: 0.0,
            roughness: 0.8,
            double_sided: false,
        });
    }

    // ---- Meshes and skins.
    let mut meshes = Vec::new();
    let mut skins = Vec::new();
    for &mid in &sorted {
        let mo = &objs[&mid];
        let geoms = sources(mid, "Geometry");
        let Some(&(gid, _)) = geoms
            .iter()
            .find(|(g, _)| objs[g].sub == "Mesh" || objs[g].node.child("Vertices").is_some())
        else {
            continue;
        };
        let g = &objs[&gid];
        let x = xf[&mid];
        let mat_ids: Vec<u32> = sources(mid, "Material")
            .iter()
            .filter_map(|(m, _)| material_index.get(m).copied())
            .collect();
        let mut mesh = read_geometry(g, &mo.name, &x.geometric(), &mat_ids, &mut warnings)
            .map_err(|e| format!("mesh {:?}: {e}", mo.name))?;
        mesh.node = node_of[&mid];
        // Skin deformers on this geometry.
        let skin_ids: Vec<i64> = sources(gid, "Deformer")
            .into_iter()
            .map(|(d, _)| d)
            .filter(|d| objs[d].sub == "Skin")
            .collect();
        if skin_ids.len() > 1 {
            warnings.push(format!(
                "mesh {:?} has {} skin deformers; drape uses the first",
                mo.name,
                skin_ids.len()
            ));
        }
        if let Some(&sid) = skin_ids.first() {
            let n = mesh.positions.len();
            let mut skin = Skin {
                name: objs[&sid].name.clone(),
                ..Default::default()
            };
            let mut influences: Vec<Vec<(u16, f32)>> = vec![Vec::new(); n];
            let mut unbound_bones = Vec::new();
            for (cid, _) in sources(sid, "Deformer") {
                let c = &objs[&cid];
                if c.sub != "Cluster" {
                    continue;
                }
                let Some(&(bone, _)) = sources(cid, "Model").first() else {
                    unbound_bones.push(c.name.clone());
                    continue;
                };
                let mat = |name: &str| -> Result<DMat4, String> {
                    match c.node.child_prop(name).and_then(|p| p.to_f64s()) {
                        Some(v) if v.len() == 16 => {
                            Ok(DMat4::from_cols_array(&v.try_into().unwrap_or([0.0; 16])))
                        }
                        Some(v) => Err(format!(
                            "cluster {:?}: {name} has {} numbers, not 16",
                            c.name,
                            v.len()
                        )),
                        None => Ok(DMat4::IDENTITY),
                    }
                };
                let link = mat("TransformLink")?;
                let bind = mat("Transform")?;
                if link.determinant().abs() < 1e-12 {
                    return Err(format!("cluster {:?}: TransformLink is singular", c.name));
                }
                let joint = skin.joints.len() as u16;
                skin.joints.push(node_of[&bone]);
                skin.inverse_bind.push((link.inverse() * bind).as_mat4());
                let idx = c.node.child_prop("Indexes").and_then(|p| p.to_i64s());
                let w = c.node.child_prop("Weights").and_then(|p| p.to_f64s());
                if let (Some(idx), Some(w)) = (idx, w) {
                    if idx.len() != w.len() {
                        return Err(format!(
                            "cluster {:?}: {} indexes but {} weights",
                            c.name,
                            idx.len(),
                            w.len()
                        ));
                    }
                    for (&i, &wt) in idx.iter().zip(&w) {
                        let Some(slot) = usize::try_from(i).ok().filter(|&i| i < n) else {
                            return Err(format!(
                                "cluster {:?}: control point {i} out of range (the mesh has {n})",
                                c.name
                            ));
                        };
                        if wt != 0.0 {
                            influences[slot].push((joint, wt as f32));
                        }
                    }
                }
            }
            if skin.joints.len() >= u16::MAX as usize {
                return Err(format!("skin {:?} has too many clusters", skin.name));
            }
            if !unbound_bones.is_empty() {
                warnings.push(format!(
                    "skin {:?}: cluster(s) linked to no bone ignored: {}",
                    skin.name,
                    unbound_bones.join(", ")
                ));
            }
            // Control points no cluster weighs follow the mesh's own model.
            let loose = influences.iter().filter(|v| v.is_empty()).count();
            if loose > 0 && !skin.joints.is_empty() {
                let j = skin.joints.len() as u16;
                skin.joints.push(node_of[&mid]);
                skin.inverse_bind.push(Mat4::IDENTITY);
                for v in influences.iter_mut().filter(|v| v.is_empty()) {
                    v.push((j, 1.0));
                }
                warnings.push(format!(
                    "mesh {:?}: {loose} control point(s) have no skin weight; they follow the \
                     mesh's own model",
                    mo.name
                ));
            }
            if !skin.joints.is_empty() {
                let most = influences.iter().map(|v| v.len()).max().unwrap_or(0);
                if most > 8 {
                    warnings.push(format!(
                        "mesh {:?}: up to {most} bone influences per control point; the 8 \
                         strongest are kept",
                        mo.name
                    ));
                }
                let eight = most > 4;
                for v in influences.iter_mut() {
                    v.sort_by(|a, b| b.1.total_cmp(&a.1));
                    let mut j0 = [0u16; 4];
                    let mut w0 = [0f32; 4];
                    let mut j1 = [0u16; 4];
                    let mut w1 = [0f32; 4];
                    for (k, &(j, w)) in v.iter().take(8).enumerate() {
                        if k < 4 {
                            j0[k] = j;
                            w0[k] = w;
                        } else {
                            j1[k - 4] = j;
                            w1[k - 4] = w;
                        }
                    }
                    mesh.joints.push(j0);
                    mesh.weights.push(w0);
                    if eight {
                        mesh.joints1.push(j1);
                        mesh.weights1.push(w1);
                    }
                }
                let fx = geometry::normalise_weights(&mut mesh.weights, &mut mesh.weights1, 2e-3);
                if fx.renormalised > 0 {
                    warnings.push(format!(
                        "mesh {:?}: {} control point(s) had weights summing to {} instead of 1; \
                         renormalised",
                        mo.name, fx.renormalised, fx.worst_sum
                    ));
                }
                // The skin's skeleton root: its shallowest bone.
                let depth = |mut n: u32| {
                    let mut d = 0;
                    while let Some(p) = skeleton.parents[n as usize] {
                        n = p;
                        d += 1;
                    }
                    d
                };
                skin.skeleton_root = skin.joints.iter().copied().min_by_key(|&j| depth(j));
                // Meshes bound to the same bones with the same bind matrices share one skin (as
                // in a glTF export), so body proxies and garments see every mesh of the body.
                match merge_skin(&mut skins, &skin) {
                    Some((index, remap)) => {
                        for j in mesh.joints.iter_mut().chain(mesh.joints1.iter_mut()) {
                            for v in j.iter_mut() {
                                *v = remap[*v as usize];
                            }
                        }
                        mesh.skin = Some(index as u32);
                    }
                    None => {
                        mesh.skin = Some(skins.len() as u32);
                        skins.push(skin);
                    }
                }
            }
        }
        meshes.push(mesh);
    }

    // ---- Animation.
    let mut clips: Vec<Clip> = Vec::new();
    let mut names_seen: BTreeSet<String> = BTreeSet::new();
    for &sid in &order {
        let so = &objs[&sid];
        if so.class != "AnimationStack" {
            continue;
        }
        let layers = sources(sid, "AnimationLayer");
        if layers.len() > 1 {
            warnings.push(format!(
                "animation {:?} has {} layers; drape plays the first",
                so.name,
                layers.len()
            ));
        }
        let Some(&(lid, _)) = layers.first() else {
            continue;
        };
        // model → [T, R, S] → [x, y, z] curves; plus curve-node defaults.
        type Chan = [[Option<Curve>; 3]; 3];
        let mut per_model: BTreeMap<u32, (i64, Chan, [[Option<f64>; 3]; 3])> = BTreeMap::new();
        for (cn, _) in sources(lid, "AnimationCurveNode") {
            let cno = &objs[&cn];
            for (model, prop) in targets(cn, "Model") {
                let k = match prop.as_deref() {
                    Some("Lcl Translation") => 0,
                    Some("Lcl Rotation") => 1,
                    Some("Lcl Scaling") => 2,
                    _ => continue,
                };
                let Some(&node) = node_of.get(&model) else {
                    continue;
                };
                let entry = per_model
                    .entry(node)
                    .or_insert_with(|| (model, Default::default(), Default::default()));
                let defaults = props70(cno.node);
                for (a, key) in ["d|X", "d|Y", "d|Z"].iter().enumerate() {
                    if let Some(v) = defaults
                        .get(*key)
                        .and_then(|v| v.first())
                        .and_then(|p| p.as_f64())
                    {
                        entry.2[k][a] = Some(v);
                    }
                }
                for (cid, cprop) in sources(cn, "AnimationCurve") {
                    let a = match cprop.as_deref() {
                        Some("d|X") => 0,
                        Some("d|Y") => 1,
                        Some("d|Z") => 2,
                        _ => continue,
                    };
                    let curve = read_curve(&objs[&cid])
                        .map_err(|e| format!("animation {:?}: {e}", so.name))?;
                    if let Some(c) = curve {
                        entry.1[k][a] = Some(c);
                    }
                }
            }
        }
        per_model.retain(|_, (_, ch, _)| ch.iter().flatten().any(|c| c.is_some()));
        if per_model.is_empty() {
            continue;
        }
        let mut clip = Clip {
            name: unique_name(&so.name, &mut names_seen),
            start: f32::INFINITY,
            end: f32::NEG_INFINITY,
            ..Default::default()
        };
        for (&node, (model, ch, defaults)) in &per_model {
            let x = xf[model];
            let mut ticks: Vec<i64> = ch
                .iter()
                .flatten()
                .flatten()
                .flat_map(|c| c.times.iter().copied())
                .collect();
            ticks.sort_unstable();
            ticks.dedup();
            let statics = [x.t, x.r, x.s];
            let mut times = Vec::with_capacity(ticks.len());
            let mut tr = Vec::with_capacity(ticks.len());
            let mut rot = Vec::with_capacity(ticks.len());
            let mut sc = Vec::with_capacity(ticks.len());
            let mut prev_q: Option<glam::Quat> = None;
            for &tick in &ticks {
                let secs = (tick as f64 / TICKS_PER_SECOND) as f32;
                if times.last().is_some_and(|&l: &f32| secs <= l) {
                    continue;
                }
                let mut v = statics;
                for k in 0..3 {
                    for a in 0..3 {
                        v[k][a] = match &ch[k][a] {
                            Some(c) => c.eval(tick),
                            None => defaults[k][a].unwrap_or(statics[k][a]),
                        };
                    }
                }
                let m = x.local(v[0], v[1], v[2]);
                let t = Transform::from_mat4(&m.as_mat4());
                let mut q = t.rotation;
                if let Some(p) = prev_q {
                    if p.dot(q) < 0.0 {
                        q = -q;
                    }
                }
                prev_q = Some(q);
                times.push(secs);
                tr.push(t.translation);
                rot.push(q);
                sc.push(t.scale);
            }
            if times.is_empty() {
                continue;
            }
            clip.start = clip.start.min(times[0]);
            clip.end = clip.end.max(*times.last().unwrap_or(&0.0));
            let track = |values| Track {
                node,
                times: times.clone(),
                values,
                interpolation: Interpolation::Linear,
            };
            clip.translations.push(track(tr));
            clip.rotations.push(Track {
                node,
                times: times.clone(),
                values: rot,
                interpolation: Interpolation::Linear,
            });
            clip.scales.push(track(sc));
        }
        if clip.channel_count() == 0 {
            continue;
        }
        clips.push(clip);
    }

    if meshes.is_empty() && clips.is_empty() {
        return Err(
            "the file holds no mesh and no animation: drape opens characters (meshes, skinned \
             or not) and animation clips (a \"without skin\" download)"
                .into(),
        );
    }
    let _ = label;
    Ok(Rig {
        source: String::new(),
        skeleton,
        skins,
        meshes,
        materials,
        textures,
        clips,
        warnings,
    })
}

/// Folds `skin` into an existing skin whose shared joints have the same inverse bind matrices
/// (within 1e-5 relative), appending its other joints. Returns that skin's index and where each
/// joint slot of `skin` went.
fn merge_skin(skins: &mut [Skin], skin: &Skin) -> Option<(usize, Vec<u16>)> {
    'candidates: for (i, s) in skins.iter_mut().enumerate() {
        let mut remap = Vec::with_capacity(skin.joints.len());
        let mut extra = Vec::new();
        for (k, &j) in skin.joints.iter().enumerate() {
            let ib = skin.inverse_bind[k];
            match s.joints.iter().position(|&o| o == j) {
                Some(o) => {
                    let other = s.inverse_bind[o];
                    let scale = 1.0
                        + other
                            .abs()
                            .to_cols_array()
                            .iter()
                            .fold(0.0f32, |a, &b| a.max(b));
                    if !ib.abs_diff_eq(other, 1e-5 * scale) {
                        continue 'candidates;
                    }
                    remap.push(o);
                }
                None => {
                    remap.push(s.joints.len() + extra.len());
                    extra.push((j, ib));
                }
            }
        }
        if s.joints.len() + extra.len() >= u16::MAX as usize {
            continue;
        }
        for (j, ib) in extra {
            s.joints.push(j);
            s.inverse_bind.push(ib);
        }
        return Some((i, remap.into_iter().map(|r| r as u16).collect()));
    }
    None
}

fn unique_name(name: &str, seen: &mut BTreeSet<String>) -> String {
    let base = if name.is_empty() { "clip" } else { name };
    let mut n = base.to_string();
    let mut k = 2;
    while !seen.insert(n.clone()) {
        n = format!("{base} ({k})");
        k += 1;
    }
    n
}
