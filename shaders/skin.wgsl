// GPU skinning: one invocation per vertex reads the bind-space vertex, its up to 8 influences
// and the per-frame joint palette, and writes the skinned vertex straight into the vertex
// buffer the draw uses (`GpuVertex`, src/gpu/mesh.rs).
//
// Methods (params.method):
//   0 LBS  p' = (Σ w_k M_k) p, n' = (Σ w_k M_k)^-T n (normalised).
//   1 DQS  two-phase (Kavan et al. 2008, §4 "non-rigid transformations"): blend the joints'
//          scale/shear parts S_k linearly and apply S = Σ w_k S_k first, then the blended
//          dual quaternion b = Σ ± w_k q̂_k (sign against the strongest influence), divided by
//          |b0|: p' = R(c0) (S p) + t, t = 2 (w0 v_ε − w_ε v0 + v0 × v_ε); n' = R(c0) S^-T n.
//   2 CoR  optimized centres of rotation (Le & Hodgins 2016, §4): q = normalise(Σ ± w_k q_k),
//          p' = R(q) (p − p*) + LBS(p*), n' = R(q) n, with p* the vertex's precomputed centre.
//          Where the joints carry a scale/shear part (a Mixamo armature's 0.01), it is blended
//          and applied to (p − p*) first as in two-phase DQS; for rigid joints S = I and this is
//          exactly the paper's formula.
// Weights are renormalised to sum to 1 (MIXAMO.md: some files sum to 0.98); influences whose
// joint index is out of range are ignored; a vertex with no weight keeps its bind pose.

// 16 bytes. Matches `SkinParams` (src/gpu/skin.rs).
struct Params {
    vertex_count: u32,
    // 0 LBS, 1 DQS, 2 CoR.
    method: u32,
    // 4 or 8.
    influences: u32,
    joint_count: u32,
}

// 96 bytes. Matches `GpuSkinVertex` (src/gpu/skin.rs).
struct SkinVertex {
    // xyz bind-space position; w per-vertex wetness, copied to the output.
    position: vec4<f32>,
    // xyz bind-space unit normal, w unused.
    normal: vec4<f32>,
    joints0: vec4<u32>,
    weights0: vec4<f32>,
    // The second set of four influences (JOINTS_1/WEIGHTS_1); zero weights when absent.
    joints1: vec4<u32>,
    weights1: vec4<f32>,
}

// 128 bytes. Matches `JointPalette` (src/gpu/skin.rs). One per skin joint per frame, all
// derived from the skin matrix world_from_bind = world_from_joint × joint_from_bind = A + t
// with A = R S (R a rotation, S = Rᵀ A the scale/shear part).
struct Joint {
    // Rows of the 3×4 affine world_from_bind: row i = (A_i0, A_i1, A_i2, t_i).
    lbs_row0: vec4<f32>,
    lbs_row1: vec4<f32>,
    lbs_row2: vec4<f32>,
    // Unit dual quaternion of the rigid part (R, t): real = R as (x, y, z, w),
    // dual = ½ (t, 0) real.
    dq_real: vec4<f32>,
    dq_dual: vec4<f32>,
    // Columns of S (xyz; w unused).
    scale_col0: vec4<f32>,
    scale_col1: vec4<f32>,
    scale_col2: vec4<f32>,
}

// 32 bytes. Matches `GpuVertex` (src/gpu/mesh.rs).
struct OutVertex {
    pos_wet: vec4<f32>,
    normal: vec4<f32>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> vertices: array<SkinVertex>;
@group(0) @binding(2) var<storage, read> palette: array<Joint>;
// Per-vertex centre of rotation p* (xyz, bind space; w = 1, or w = 0 for "no centre": DQS),
// read by CoR only.
@group(0) @binding(3) var<storage, read> cor_centers: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> out_vertices: array<OutVertex>;

fn quat_rotate(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let t = 2.0 * cross(q.xyz, v);
    return v + q.w * t + cross(q.xyz, t);
}

// (M⁻ᵀ) n up to a positive factor, for M given by its rows; callers normalise.
fn inverse_transpose_rows(a0: vec3<f32>, a1: vec3<f32>, a2: vec3<f32>, n: vec3<f32>) -> vec3<f32> {
    let c0 = cross(a1, a2);
    let c1 = cross(a2, a0);
    let c2 = cross(a0, a1);
    let det = dot(a0, c0);
    let m = vec3<f32>(dot(c0, n), dot(c1, n), dot(c2, n));
    return select(m, -m, det < 0.0);
}

// (S⁻ᵀ) n up to a positive factor, for S given by its columns.
fn inverse_transpose_cols(s0: vec3<f32>, s1: vec3<f32>, s2: vec3<f32>, n: vec3<f32>) -> vec3<f32> {
    let c0 = cross(s1, s2);
    let c1 = cross(s2, s0);
    let c2 = cross(s0, s1);
    let det = dot(s0, c0);
    let m = c0 * n.x + c1 * n.y + c2 * n.z;
    return select(m, -m, det < 0.0);
}

fn safe_normalize(v: vec3<f32>, fallback: vec3<f32>) -> vec3<f32> {
    let len2 = dot(v, v);
    return select(fallback, v * inverseSqrt(len2), len2 > 1e-30);
}

struct Influence {
    joint: u32,
    // 0 for influences to ignore: negative or NaN weights, joints out of range.
    weight: f32,
}

// Influence k (0–7) of vertex v.
fn influence(v: SkinVertex, k: u32) -> Influence {
    var j: u32;
    var w: f32;
    if k < 4u {
        j = v.joints0[k];
        w = v.weights0[k];
    } else {
        j = v.joints1[k - 4u];
        w = v.weights1[k - 4u];
    }
    if j >= params.joint_count || !(w > 0.0) {
        return Influence(0u, 0.0);
    }
    return Influence(j, w);
}

@compute @workgroup_size(64)
fn skin_main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= params.vertex_count {
        return;
    }
    let v = vertices[i];
    let p = v.position.xyz;
    let n = v.normal.xyz;

    // Total weight of the valid influences, and the strongest one (the sign reference for
    // quaternion blending: Kavan et al. 2008 §3, antipodality). Only the fields a method needs
    // are loaded from the palette: on memory-bound hardware the loads are the cost.
    let count = min(params.influences, 8u);
    var total = 0.0;
    var strongest = 0u;
    var strongest_w = -1.0;
    for (var k = 0u; k < count; k++) {
        let inf = influence(v, k);
        total += inf.weight;
        if inf.weight > strongest_w {
            strongest_w = inf.weight;
            strongest = inf.joint;
        }
    }
    if !(total > 0.0) || params.joint_count == 0u {
        out_vertices[i] = OutVertex(v.position, vec4<f32>(n, 0.0));
        return;
    }
    let inv_total = 1.0 / total;

    let q_ref = palette[strongest].dq_real;
    var row0 = vec4<f32>(0.0);
    var row1 = vec4<f32>(0.0);
    var row2 = vec4<f32>(0.0);
    var real = vec4<f32>(0.0);
    var dual = vec4<f32>(0.0);
    var s0 = vec3<f32>(0.0);
    var s1 = vec3<f32>(0.0);
    var s2 = vec3<f32>(0.0);
    for (var k = 0u; k < count; k++) {
        let inf = influence(v, k);
        let w = inf.weight * inv_total;
        if w == 0.0 {
            continue;
        }
        let j = inf.joint;
        if params.method != 1u {
            row0 += w * palette[j].lbs_row0;
            row1 += w * palette[j].lbs_row1;
            row2 += w * palette[j].lbs_row2;
        }
        if params.method != 0u {
            let q = palette[j].dq_real;
            let sw = select(w, -w, dot(q, q_ref) < 0.0);
            real += sw * q;
            // CoR needs the dual part too: vertices without a centre fall back to DQS.
            dual += sw * palette[j].dq_dual;
            s0 += w * palette[j].scale_col0.xyz;
            s1 += w * palette[j].scale_col1.xyz;
            s2 += w * palette[j].scale_col2.xyz;
        }
    }

    var p_out = p;
    var n_out = n;
    if params.method == 0u {
        let h = vec4<f32>(p, 1.0);
        p_out = vec3<f32>(dot(row0, h), dot(row1, h), dot(row2, h));
        n_out = inverse_transpose_rows(row0.xyz, row1.xyz, row2.xyz, n);
    } else if params.method == 1u || cor_centers[i].w == 0.0 {
        // DQS, and CoR where the vertex has no centre (w = 0: no triangle with similar
        // weights, Le & Hodgins 2016 §4.1), as drape::skin::cor does on the CPU.
        let len = length(real);
        let c0 = real / len;
        let ce = dual / len;
        let p_s = s0 * p.x + s1 * p.y + s2 * p.z;
        let t = 2.0 * (c0.w * ce.xyz - ce.w * c0.xyz + cross(c0.xyz, ce.xyz));
        p_out = quat_rotate(c0, p_s) + t;
        n_out = quat_rotate(c0, inverse_transpose_cols(s0, s1, s2, n));
    } else {
        let q = real / length(real);
        let c = cor_centers[i].xyz;
        let hc = vec4<f32>(c, 1.0);
        let lbs_c = vec3<f32>(dot(row0, hc), dot(row1, hc), dot(row2, hc));
        let d = p - c;
        let d_s = s0 * d.x + s1 * d.y + s2 * d.z;
        p_out = quat_rotate(q, d_s) + lbs_c;
        n_out = quat_rotate(q, inverse_transpose_cols(s0, s1, s2, n));
    }
    out_vertices[i] = OutVertex(vec4<f32>(p_out, v.position.w), vec4<f32>(safe_normalize(n_out, n), 0.0));
}
