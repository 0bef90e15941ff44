// Debug drawing: coloured lines (skeleton, BVH boxes) and lit coloured solids (body proxy
// spheres and tapered capsules, pin markers). Vertices are already in world space.
// Bind group 0 is the frame uniform of common.wgsl (only its first field is read here).

struct Frame {
    clip_from_world: mat4x4<f32>,
    light_clip_from_world: mat4x4<f32>,
    eye_world: vec4<f32>,
    light_dir_world: vec4<f32>,
    light_color: vec4<f32>,
    ambient_color: vec4<f32>,
    shadow_params: vec4<f32>,
    _pad: array<vec4<f32>, 3>,
    world_from_clip: mat4x4<f32>,
}

@group(0) @binding(0) var<uniform> frame: Frame;

struct LineOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec4<f32>,
}

// `DebugLineVertex` (src/gpu/debug.rs): position xyz + pad, linear RGBA.
@vertex
fn vs_line(@location(0) pos: vec4<f32>, @location(1) color: vec4<f32>) -> LineOut {
    var out: LineOut;
    out.clip = frame.clip_from_world * vec4<f32>(pos.xyz, 1.0);
    out.color = color;
    return out;
}

@fragment
fn fs_line(in: LineOut) -> @location(0) vec4<f32> {
    return in.color;
}

struct SolidOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec4<f32>,
    @location(1) normal: vec3<f32>,
}

// `DebugSolidVertex` (src/gpu/debug.rs): position xyz + pad, normal xyz + pad, linear RGBA.
@vertex
fn vs_solid(
    @location(0) pos: vec4<f32>,
    @location(1) normal: vec4<f32>,
    @location(2) color: vec4<f32>,
) -> SolidOut {
    var out: SolidOut;
    out.clip = frame.clip_from_world * vec4<f32>(pos.xyz, 1.0);
    out.color = color;
    out.normal = normal.xyz;
    return out;
}

// Half-Lambert (wrap) lighting so that the unlit side of a proxy still shows its shape.
@fragment
fn fs_solid(in: SolidOut) -> @location(0) vec4<f32> {
    let n = normalize(in.normal);
    let wrap = dot(n, normalize(frame.light_dir_world.xyz)) * 0.5 + 0.5;
    let shade = 0.35 + 0.65 * wrap * wrap;
    return vec4<f32>(in.color.rgb * shade, in.color.a);
}
