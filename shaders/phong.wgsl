// #import common.wgsl
// Blinn-Phong: ambient + diffuse + specular with exponent p (object.material.y), shadowed by the
// key light, with the wet look from per-vertex wetness. The albedo is the material's base
// colour as glTF defines it: the factor (object.base_color) times the base colour map (white
// when the material has none), so a rig whose colours live in its texture keeps them.

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
