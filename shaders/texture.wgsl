// #import common.wgsl
// Texture: the base colour map as it is, times object.base_color (the CS184 homework's texture
// shader: the texel is the colour, no lighting), for checking a rig's texture and UVs. Only the
// key light's shadow (to 45 % where fully shadowed, so figures still sit on the ground) and the
// wet darkening change it. phong.wgsl shows the same colours lit.

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
    let n_dot_l = max(dot(n, normalize(frame.light_dir_world.xyz)), 0.0);
    let shadow = shadow_factor(in.light_clip, n_dot_l);
    return vec4<f32>(s.albedo * mix(0.45, 1.0, shadow), 1.0);
}
