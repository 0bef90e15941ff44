// #import common.wgsl
// Blinn-Phong: ambient + diffuse + specular with exponent p (object.material.y), shadowed by the
// key light, with the wet look from per-vertex wetness.

@vertex
fn vs_main(v: VsIn) -> VsOut {
    return transform_vertex(v, 0.0);
}

@fragment
fn fs_main(in: VsOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    let n = facing_normal(in.normal, front);
    let s = apply_wetness(base_surface(in, n), in.wet);
    return vec4<f32>(blinn_phong(s, in.world_pos, in.light_clip), 1.0);
}
