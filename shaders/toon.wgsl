// #import common.wgsl
// Toon (cel shading, Lake, Marshall, Harris & Blackstein 2000, "Stylized rendering techniques
// for scalable real-time 3D animation"): the diffuse term n·l (times the shadow) looks up a
// ramp texture of flat bands, the specular is a hard step of the Blinn-Phong lobe, a
// Fresnel-like rim (1 − n·v)^power, stepped, lights the silhouette on the lit side, and an ink
// outline darkens the silhouette itself, where the surface turns away from the viewer
// (n·v below INK_EDGE). The albedo is base colour × base colour map, as in phong.wgsl. Wetness
// darkens the albedo and enlarges the specular step as in the other lit shaders.

// n·v below which the surface is inked, [0, 0.5]: the outline's width grows with it.
const INK_EDGE: f32 = 0.3;
// Ink colour as a fraction of the albedo, [0, 1].
const INK: f32 = 0.12;

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
    let l = normalize(frame.light_dir_world.xyz);
    let v = normalize(frame.eye_world.xyz - in.world_pos);
    let h = normalize(l + v);
    let n_dot_l = max(dot(n, l), 0.0);
    let n_dot_v = max(dot(n, v), 0.0);
    let lit = n_dot_l * shadow_factor(in.light_clip, n_dot_l);
    // The ramp's texel by index, unfiltered: bands stay flat up to their edges.
    let ramp_width = i32(textureDimensions(toon_ramp, 0).x);
    let texel_index = clamp(i32(lit * f32(ramp_width)), 0, ramp_width - 1);
    let band = textureLoad(toon_ramp, vec2<i32>(texel_index, 0), 0).rgb;
    let lobe = pow(max(dot(n, h), 0.0), s.shininess);
    let spec = select(0.0, s.specular, lobe > 0.5 && lit > 0.05);
    let rim_power = max(object.extra.y, 0.5);
    let rim_raw = pow(1.0 - n_dot_v, rim_power) * (0.3 + 0.7 * n_dot_l);
    let rim = step(0.45, rim_raw) * object.extra.z;
    var color = s.albedo * (frame.ambient_color.rgb + band * frame.light_color.rgb)
        + vec3<f32>(spec + rim) * frame.light_color.rgb;
    // The outline wins over the rim at the very edge (a hard step, like the bands; MSAA
    // smooths the silhouette itself).
    let ink = 1.0 - step(INK_EDGE, n_dot_v);
    color = mix(color, s.albedo * INK, ink);
    return vec4<f32>(color, 1.0);
}
