// #import common.wgsl
// Textured: Blinn-Phong with the albedo read from the base colour map (sRGB texture, so the
// sample is already linear) times object.base_color. Wet look and shadows as in phong.wgsl.

@vertex
fn vs_main(v: VsIn) -> VsOut {
    return transform_vertex(v, 0.0);
}

@fragment
fn fs_main(in: VsOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    let texel = textureSample(base_map, linear_sampler, in.uv);
    let n = facing_normal(in.normal, front);
    var s = base_surface(in, n);
    s.albedo = s.albedo * texel.rgb;
    s = apply_wetness(s, in.wet);
    return vec4<f32>(blinn_phong(s, in.world_pos, in.light_clip), 1.0);
}
