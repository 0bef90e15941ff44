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

use glam::{DMat3, DMat4, DQuat, DVec3, EulerRot};

use super::binary::{Document, Node, Prop};
use crate::anim::{Clip, Interpolation, Skeleton, Skin, Track};
use crate::asset::geometry;
use crate::asset::LoadOptions;
use crate::math::{Mat4, Transform, Vec2, Vec3, Vec4};
use crate::rig::{Material, Rig, SkinnedMesh, Texture};

/// FBX time unit: ticks per second (FBX SDK `FbxTime`).
pub const TICKS_PER_SECOND: f64 = 46_186_158_000.0;

/// One object of the `Objects` section.
struct Obj<'a> {
    class: &'a str,
    name: String,
    sub: String,
    node: &'a Node,
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
struct Props<'a> {
    own: HashMap<String, Vec<Prop>>,
    template: Option<&'a HashMap<String, Vec<Prop>>>,
}

impl Props<'_> {
    fn get(&self, name: &str) -> Option<&Vec<Prop>> {
        self.own
            .get(name)
            .or_else(|| self.template.and_then(|t| t.get(name)))
    }

    fn vec3(&self, name: &str, default: DVec3) -> DVec3 {
        match self.get(name) {
            Some(v) if v.len() >= 3 => DVec3::new(
                v[0].as_f64().unwrap_or(default.x),
                v[1].as_f64().unwrap_or(default.y),
                v[2].as_f64().unwrap_or(default.z),
            ),
            _ => default,
        }
    }

    fn num(&self, name: &str, default: f64) -> f64 {
        self.get(name)
            .and_then(|v| v.first())
            .and_then(|p| p.as_f64())
            .unwrap_or(default)
    }
}

/// The static transform properties of a model.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ModelXf {
    pub t: DVec3,
    /// Euler degrees.
    pub r: DVec3,
    pub s: DVec3,
    pub order: u8,
    pub pre: DVec3,
    pub post: DVec3,
    pub roff: DVec3,
    pub rpiv: DVec3,
    pub soff: DVec3,
    pub spiv: DVec3,
    pub geo_t: DVec3,
    pub geo_r: DVec3,
    pub geo_s: DVec3,
}

impl ModelXf {
    fn read(p: &Props) -> Self {
        let active = p.num("RotationActive", 0.0) != 0.0;
        ModelXf {
            t: p.vec3("Lcl Translation", DVec3::ZERO),
            r: p.vec3("Lcl Rotation", DVec3::ZERO),
            s: p.vec3("Lcl Scaling", DVec3::ONE),
            order: if active {
                p.num("RotationOrder", 0.0) as u8
            } else {
                0
            },
            pre: if active {
                p.vec3("PreRotation", DVec3::ZERO)
            } else {
                DVec3::ZERO
            },
            post: if active {
                p.vec3("PostRotation", DVec3::ZERO)
            } else {
                DVec3::ZERO
            },
            roff: p.vec3("RotationOffset", DVec3::ZERO),
            rpiv: p.vec3("RotationPivot", DVec3::ZERO),
            soff: p.vec3("ScalingOffset", DVec3::ZERO),
            spiv: p.vec3("ScalingPivot", DVec3::ZERO),
            geo_t: p.vec3("GeometricTranslation", DVec3::ZERO),
            geo_r: p.vec3("GeometricRotation", DVec3::ZERO),
            geo_s: p.vec3("GeometricScaling", DVec3::ONE),
        }
    }

    /// `parent_from_model` for the given Lcl T, R (degrees), S.
    pub fn local(&self, t: DVec3, r: DVec3, s: DVec3) -> DMat4 {
        let rot = |v: DVec3, order: u8| DMat4::from_quat(euler_quat(v, order));
        let tr = DMat4::from_translation;
        tr(t)
            * tr(self.roff)
            * tr(self.rpiv)
            * rot(self.pre, 0)
            * rot(r, self.order)
            * rot(self.post, 0).inverse()
            * tr(-self.rpiv)
            * tr(self.soff)
            * tr(self.spiv)
            * DMat4::from_scale(s)
            * tr(-self.spiv)
    }

    pub fn rest_local(&self) -> DMat4 {
        self.local(self.t, self.r, self.s)
    }

    /// The geometric transform (applies to the model's geometry only, not to its children).
    pub fn geometric(&self) -> DMat4 {
        DMat4::from_translation(self.geo_t)
            * DMat4::from_quat(euler_quat(self.geo_r, 0))
            * DMat4::from_scale(self.geo_s)
    }
}

/// An FBX Euler rotation (degrees) as a quaternion. `order` is FBX's `EFbxRotationOrder`:
/// 0 XYZ, 1 XZY, 2 YZX, 3 YXZ, 4 ZXY, 5 ZYX, 6 spheric XYZ (read as XYZ); "XYZ" rotates about X
/// first, so its matrix is `Rz · Ry · Rx`.
pub fn euler_quat(deg: DVec3, order: u8) -> DQuat {
    let x = DQuat::from_rotation_x(deg.x.to_radians());
    let y = DQuat::from_rotation_y(deg.y.to_radians());
    let z = DQuat::from_rotation_z(deg.z.to_radians());
    match order {
        1 => y * z * x,
        2 => x * z * y,
        3 => z * x * y,
        4 => y * x * z,
        5 => x * y * z,
        _ => z * y * x,
    }
}

/// A quaternion as FBX Euler XYZ degrees (`Rz · Ry · Rx`), the inverse of
/// [`euler_quat`]`(_, 0)`.
pub fn quat_euler_xyz(q: DQuat) -> DVec3 {
    // glam's EulerRot::ZYX gives (z, y, x) with q = Rz · Ry · Rx.
    let (z, y, x) = q.to_euler(EulerRot::ZYX);
    DVec3::new(x.to_degrees(), y.to_degrees(), z.to_degrees())
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

/// One animation curve: key times (ticks) and values.
#[derive(Clone, Debug, Default)]
struct Curve {
    times: Vec<i64>,
    values: Vec<f64>,
    /// Constant (stepped) interpolation from each key, from `KeyAttrFlags`.
    step: Vec<bool>,
}

impl Curve {
    fn eval(&self, t: i64) -> f64 {
        let n = self.times.len();
        let i = self.times.partition_point(|&k| k <= t);
        if i == 0 {
            return self.values[0];
        }
        if i >= n {
            return self.values[n - 1];
        }
        let k = i - 1;
        if self.step.get(k).copied().unwrap_or(false) {
            return self.values[k];
        }
        let (t0, t1) = (self.times[k], self.times[k + 1]);
        let s = (t - t0) as f64 / (t1 - t0) as f64;
        self.values[k] + (self.values[k + 1] - self.values[k]) * s
    }
}

fn read_curve(o: &Obj) -> Result<Option<Curve>, String> {
    let times = o.node.child_prop("KeyTime").and_then(|p| p.to_i64s());
    let values = o.node.child_prop("KeyValueFloat").and_then(|p| p.to_f64s());
    let (Some(times), Some(values)) = (times, values) else {
        return Ok(None);
    };
    if times.len() != values.len() {
        return Err(format!(
            "curve {:?} has {} key times but {} values",
            o.name,
            times.len(),
            values.len()
        ));
    }
    if times.is_empty() {
        return Ok(None);
    }
    if times.windows(2).any(|w| w[1] <= w[0]) {
        return Err(format!("curve {:?}: key times do not increase", o.name));
    }
    if values.iter().any(|v| !v.is_finite()) {
        return Err(format!("curve {:?} has a value that is not finite", o.name));
    }
    // KeyAttrFlags + KeyAttrRefCount: run-length attributes; 0x02 = constant interpolation.
    let mut step = Vec::new();
    if let (Some(flags), Some(counts)) = (
        o.node.child_prop("KeyAttrFlags").and_then(|p| p.to_i64s()),
        o.node
            .child_prop("KeyAttrRefCount")
            .and_then(|p| p.to_i64s()),
    ) {
        for (f, c) in flags.iter().zip(&counts) {
            let c = (*c).clamp(0, times.len() as i64) as usize;
            step.extend(std::iter::repeat_n(f & 0x02 != 0, c));
            if step.len() >= times.len() {
                break;
            }
        }
    }
    Ok(Some(Curve {
        times,
        values,
        step,
    }))
}

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

fn read_geometry(
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
fn embedded_texture(
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
