// #import common.wgsl
// Normals: the world-space shading normal as a colour, n × 0.5 + 0.5 (+X red, +Y green, +Z
// blue), for checking skinning and simulated normals at a glance.

@vertex
fn vs_main(v: VsIn) -> VsOut {
    return transform_vertex(v, 0.0);
}

@fragment
fn fs_main(in: VsOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    let n = facing_normal(in.normal, front);
    return vec4<f32>(n * 0.5 + vec3<f32>(0.5), 1.0);
}
