// Shared declarations of the shader suite. Each shader file whose first line is
// `// #import common.wgsl` is compiled as this file followed by itself (see src/gpu/shaders.rs;
// tests/shaders.rs validates every combination with naga).
//
// Bind groups (mirrored by `FrameUniform`/`ObjectUniform` in src/gpu/renderer.rs):
//   group 0: per frame   — camera, key light, shadow map, environment cube map, toon ramp
//   group 1: per object  — transform and material parameters (dynamic offset)
//   group 2: per texture set — base colour map and height map

// 320 bytes. Matches `FrameUniform` (src/gpu/renderer.rs).
struct Frame {
    clip_from_world: mat4x4<f32>,
    // The key light's orthographic projection used by the shadow pass.
    light_clip_from_world: mat4x4<f32>,
    // xyz camera position in world space, w unused.
    eye_world: vec4<f32>,
    // xyz unit direction from the surface towards the key light, w unused.
    light_dir_world: vec4<f32>,
    // rgb key-light radiance (colour × intensity), w unused.
    light_color: vec4<f32>,
    // rgb ambient radiance, w unused.
    ambient_color: vec4<f32>,
    // x: 1 / shadow map size (texels), y: depth bias (NDC units), z: shadows on (1) or off (0),
    // w: unused.
    shadow_params: vec4<f32>,
    _pad: array<vec4<f32>, 3>,
    // Inverse of clip_from_world (the sky pass turns pixels back into view rays).
    world_from_clip: mat4x4<f32>,
}

// 256 bytes (the dynamic-offset alignment). Matches `ObjectUniform` (src/gpu/renderer.rs).
struct Object {
    world_from_object: mat4x4<f32>,
    // Inverse transpose of world_from_object's 3×3 part, in a mat4 for alignment.
    normal_from_object: mat4x4<f32>,
    // Linear RGBA multiplied with the base colour map.
    base_color: vec4<f32>,
    // x: specular strength [0, 1], y: Blinn-Phong exponent p [1, 2048],
    // z: bump strength (slope per unit height gradient, per texel) [0, 16],
    // w: displacement scale (metres at height 1) [0, 0.2].
    material: vec4<f32>,
    // x: texture coordinate scale (repeats per UV unit), y: toon rim power, z: toon rim strength,
    // w: mirror tint amount [0, 1].
    extra: vec4<f32>,
    _pad: vec4<f32>,
}

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var shadow_map: texture_depth_2d;
@group(0) @binding(2) var shadow_sampler: sampler_comparison;
@group(0) @binding(3) var env_map: texture_cube<f32>;
@group(0) @binding(4) var toon_ramp: texture_2d<f32>;
@group(0) @binding(5) var linear_sampler: sampler;

@group(1) @binding(0) var<uniform> object: Object;

@group(2) @binding(0) var base_map: texture_2d<f32>;
@group(2) @binding(1) var height_map: texture_2d<f32>;

// Vertex buffers: slot 0 holds `GpuVertex` (src/gpu/mesh.rs), written by the skinning compute
// pass or uploaded per frame for cloth; slot 1 holds the static texture coordinates.
struct VsIn {
    // xyz object-space position; w per-vertex wetness in [0, 1] (0 = dry).
    @location(0) pos_wet: vec4<f32>,
    // xyz unit normal, w unused.
    @location(1) normal: vec4<f32>,
    @location(2) uv: vec2<f32>,
}

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world_pos: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
    @location(3) wet: f32,
    @location(4) light_clip: vec4<f32>,
}

fn transform_vertex(v: VsIn, displacement: f32) -> VsOut {
    var out: VsOut;
    let n_obj = normalize(v.normal.xyz);
    let p_obj = v.pos_wet.xyz + n_obj * displacement;
    let world = object.world_from_object * vec4<f32>(p_obj, 1.0);
    out.world_pos = world.xyz;
    out.clip = frame.clip_from_world * world;
    out.normal = normalize((object.normal_from_object * vec4<f32>(n_obj, 0.0)).xyz);
    out.uv = v.uv * object.extra.x;
    out.wet = clamp(v.pos_wet.w, 0.0, 1.0);
    out.light_clip = frame.light_clip_from_world * world;
    return out;
}

// Fraction of the key light reaching the point, from the shadow map with a 3×3 percentage-closer
// filter (Reeves, Salesin & Cook 1987) over hardware-filtered comparisons. The bias grows with
// the slope of the surface to the light, the usual cure for shadow acne.
fn shadow_factor(light_clip: vec4<f32>, n_dot_l: f32) -> f32 {
    if frame.shadow_params.z < 0.5 {
        return 1.0;
    }
    let ndc = light_clip.xyz / light_clip.w;
    let uv = vec2<f32>(ndc.x * 0.5 + 0.5, 0.5 - ndc.y * 0.5);
    if any(uv < vec2<f32>(0.0)) || any(uv > vec2<f32>(1.0)) || ndc.z > 1.0 {
        return 1.0;
    }
    let slope = sqrt(max(1.0 - n_dot_l * n_dot_l, 0.0)) / max(n_dot_l, 0.2);
    let depth = ndc.z - frame.shadow_params.y * (1.0 + 2.0 * slope);
    let texel = frame.shadow_params.x;
    var lit = 0.0;
    for (var dy = -1; dy <= 1; dy++) {
        for (var dx = -1; dx <= 1; dx++) {
            let offset = vec2<f32>(f32(dx), f32(dy)) * texel;
            lit += textureSampleCompareLevel(shadow_map, shadow_sampler, uv + offset, depth);
        }
    }
    return lit / 9.0;
}

// The wet look, driven by per-vertex wetness w in [0, 1]. A water film darkens a rough material
// (light scattered inside the film is partly re-absorbed by the fabric after total internal
// reflection at the water–air interface: Lekner & Dorf 1988, "Why some things are darker when
// wet"; Jensen, Legakis & Dorsey 1999, "Rendering of wet materials") and adds a smooth, sharp
// specular layer on top (water's reflection). So: albedo × (1 − 0.55 w), specular strength
// raised towards 0.6, exponent p raised towards 6 p + 60.
struct Surface {
    albedo: vec3<f32>,
    n: vec3<f32>,
    specular: f32,
    shininess: f32,
}

fn apply_wetness(s: Surface, wet: f32) -> Surface {
    var out = s;
    out.albedo = s.albedo * (1.0 - 0.55 * wet);
    out.specular = mix(s.specular, max(s.specular, 0.6), wet);
    out.shininess = mix(s.shininess, s.shininess * 6.0 + 60.0, wet);
    return out;
}

// Blinn-Phong (Blinn 1977): ambient + diffuse (n·l) + specular (n·h)^p, with the key light
// attenuated by the shadow map. The specular term is scaled by (p + 8) / 8 so that a glossier
// (wetter) surface has a brighter, not only a smaller, highlight (energy-normalised Blinn-Phong,
// Akenine-Möller et al., Real-Time Rendering 4th ed., Eq. 9.x family).
fn blinn_phong(s: Surface, world_pos: vec3<f32>, light_clip: vec4<f32>) -> vec3<f32> {
    let l = normalize(frame.light_dir_world.xyz);
    let v = normalize(frame.eye_world.xyz - world_pos);
    let n = s.n;
    let n_dot_l = max(dot(n, l), 0.0);
    let h = normalize(l + v);
    let shadow = shadow_factor(light_clip, n_dot_l);
    let spec_norm = (s.shininess + 8.0) / 8.0;
    var spec = 0.0;
    if n_dot_l > 0.0 {
        spec = s.specular * spec_norm * pow(max(dot(n, h), 0.0), s.shininess) * 0.25;
    }
    let direct = (s.albedo * n_dot_l + vec3<f32>(spec)) * frame.light_color.rgb * shadow;
    return s.albedo * frame.ambient_color.rgb + direct;
}

// A face's normal must face the viewer for double-sided cloth: flip it when we see the back.
fn facing_normal(n: vec3<f32>, front: bool) -> vec3<f32> {
    let nn = normalize(n);
    if front {
        return nn;
    }
    return -nn;
}

// The tangent frame at a fragment from screen-space derivatives of position and UV (Schüler
// 2013, "Normal Mapping Without Precomputed Tangents"): works for skinned and simulated meshes
// whose tangents change every frame. Columns: T, B (scaled so that their longer one is unit), N.
fn cotangent_frame(n: vec3<f32>, p: vec3<f32>, uv: vec2<f32>) -> mat3x3<f32> {
    let dp1 = dpdx(p);
    let dp2 = dpdy(p);
    let duv1 = dpdx(uv);
    let duv2 = dpdy(uv);
    let dp2perp = cross(dp2, n);
    let dp1perp = cross(n, dp1);
    let t = dp2perp * duv1.x + dp1perp * duv2.x;
    let b = dp2perp * duv1.y + dp1perp * duv2.y;
    let m = max(dot(t, t), dot(b, b));
    let inv = select(0.0, inverseSqrt(m), m > 1e-20);
    return mat3x3<f32>(t * inv, b * inv, n);
}

// Height-map gradient (dh/du, dh/dv) per level-0 texel by central differences, taken at the
// mip level that matches the pixel's footprint (with a step of one texel of that level): a
// prefiltered gradient, so that fine relief seen from afar averages out instead of aliasing
// into noise. Call in uniform control flow (it uses screen-space derivatives).
fn height_gradient(uv: vec2<f32>) -> vec2<f32> {
    let size = vec2<f32>(textureDimensions(height_map, 0));
    let footprint = max(length(dpdx(uv) * size), length(dpdy(uv) * size));
    let max_lod = f32(textureNumLevels(height_map) - 1u);
    let lod = clamp(log2(max(footprint, 1.0)), 0.0, max_lod);
    let step = exp2(lod);
    let du = vec2<f32>(step / size.x, 0.0);
    let dv = vec2<f32>(0.0, step / size.y);
    let hx = textureSampleLevel(height_map, linear_sampler, uv + du, lod).r
        - textureSampleLevel(height_map, linear_sampler, uv - du, lod).r;
    let hy = textureSampleLevel(height_map, linear_sampler, uv + dv, lod).r
        - textureSampleLevel(height_map, linear_sampler, uv - dv, lod).r;
    return vec2<f32>(hx, hy) * (0.5 / step);
}

// Normal perturbed by the height map (Blinn 1978, "Simulation of wrinkled surfaces"): in the
// tangent frame the bumped normal is (−k ∂h/∂u, −k ∂h/∂v, 1), k the bump strength.
fn bumped_normal(tbn: mat3x3<f32>, uv: vec2<f32>, strength: f32) -> vec3<f32> {
    let g = height_gradient(uv) * strength;
    let n_ts = normalize(vec3<f32>(-g.x, -g.y, 1.0));
    let n = tbn * n_ts;
    return normalize(n);
}

fn base_surface(in: VsOut, n: vec3<f32>) -> Surface {
    var s: Surface;
    s.albedo = object.base_color.rgb;
    s.n = n;
    s.specular = object.material.x;
    s.shininess = max(object.material.y, 1.0);
    return s;
}
