// #import common.wgsl
// Displacement mapping: each vertex moves along its normal by scale × h(uv) (object.material.w
// metres at h = 1), read from the height map in the vertex stage. Only vertices move, so the
// detail it can show is limited by the mesh resolution (a coarse mesh gives a faceted,
// aliased relief); shading uses the height-map normal (as bump.wgsl) so that the lighting agrees
// with the relief between vertices.

@vertex
fn vs_main(v: VsIn) -> VsOut {
    let h = textureSampleLevel(height_map, linear_sampler, v.uv * object.extra.x, 0.0).r;
    return transform_vertex(v, h * object.material.w);
}

@fragment
fn fs_main(in: VsOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    let texel = textureSample(base_map, linear_sampler, in.uv);
    let n_geo = facing_normal(in.normal, front);
    let tbn = cotangent_frame(n_geo, in.world_pos, in.uv);
    let n = bumped_normal(tbn, in.uv, object.material.z);
    var s = base_surface(in, n);
    s.albedo = s.albedo * texel.rgb;
    s = apply_wetness(s, in.wet);
    return vec4<f32>(blinn_phong(s, in.world_pos, in.light_clip), 1.0);
}
