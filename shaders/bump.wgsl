// #import common.wgsl
// Bump mapping: the height map perturbs the shading normal through the per-fragment tangent
// frame (cotangent_frame, bumped_normal in common.wgsl), strength object.material.z. The
// geometry is unchanged: silhouettes stay smooth, unlike displace.wgsl.

@vertex
fn vs_main(v: VsIn) -> VsOut {
    return transform_vertex(v, 0.0);
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
