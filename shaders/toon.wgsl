// #import common.wgsl
// Toon: the diffuse term n·l (times the shadow) looks up a ramp texture of flat bands (the
// "cel" look), the specular is a hard step of the Blinn-Phong lobe, and a Fresnel-like rim
// (1 − n·v)^power, stepped, outlines the silhouette on the lit side. Wetness darkens the
// albedo and enlarges the specular step as in the other lit shaders.

@vertex
fn vs_main(v: VsIn) -> VsOut {
    return transform_vertex(v, 0.0);
}

@fragment
fn fs_main(in: VsOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    let n = facing_normal(in.normal, front);
    let s = apply_wetness(base_surface(in, n), in.wet);
    let l = normalize(frame.light_dir_world.xyz);
    let v = normalize(frame.eye_world.xyz - in.world_pos);
    let h = normalize(l + v);
    let n_dot_l = max(dot(n, l), 0.0);
    let lit = n_dot_l * shadow_factor(in.light_clip, n_dot_l);
    let band = textureSampleLevel(toon_ramp, linear_sampler, vec2<f32>(clamp(lit, 0.01, 0.99), 0.5), 0.0).rgb;
    let lobe = pow(max(dot(n, h), 0.0), s.shininess);
    let spec = select(0.0, s.specular, lobe > 0.5 && lit > 0.05);
    let rim_power = max(object.extra.y, 0.5);
    let rim_raw = pow(1.0 - max(dot(n, v), 0.0), rim_power) * (0.3 + 0.7 * n_dot_l);
    let rim = step(0.35, rim_raw) * object.extra.z;
    let color = s.albedo * (frame.ambient_color.rgb + band * frame.light_color.rgb)
        + vec3<f32>(spec + rim) * frame.light_color.rgb;
    return vec4<f32>(color, 1.0);
}
