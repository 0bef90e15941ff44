// #import common.wgsl
// Sky: the environment cube map as the background, drawn first over the whole target with a
// single triangle that covers the screen. Each pixel's view ray is recovered with
// world_from_clip, so the background lines up with the mirror shader's reflections.

struct SkyOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) ndc: vec2<f32>,
}

@vertex
fn vs_sky(@builtin(vertex_index) i: u32) -> SkyOut {
    // (−1, −1), (3, −1), (−1, 3): one triangle covering the viewport.
    let xy = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u)) * 2.0 - vec2<f32>(1.0);
    var out: SkyOut;
    out.clip = vec4<f32>(xy, 1.0, 1.0);
    out.ndc = xy;
    return out;
}

@fragment
fn fs_sky(in: SkyOut) -> @location(0) vec4<f32> {
    let far = frame.world_from_clip * vec4<f32>(in.ndc, 1.0, 1.0);
    let dir = normalize(far.xyz / far.w - frame.eye_world.xyz);
    return vec4<f32>(textureSampleLevel(env_map, linear_sampler, dir, 0.0).rgb, 1.0);
}
