// #import common.wgsl
// Mirror: the environment cube map seen along the reflected view ray r = reflect(−v, n),
// tinted by the base colour (object.extra.w of the way) and with Schlick's Fresnel term
// (Schlick 1994) lifting the reflectance towards 1 at grazing angles.

@vertex
fn vs_main(v: VsIn) -> VsOut {
    return transform_vertex(v, 0.0);
}

@fragment
fn fs_main(in: VsOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    let n = facing_normal(in.normal, front);
    let v = normalize(frame.eye_world.xyz - in.world_pos);
    let r = reflect(-v, n);
    let env = textureSampleLevel(env_map, linear_sampler, r, 0.0).rgb;
    let tint = mix(vec3<f32>(1.0), object.base_color.rgb, object.extra.w);
    let f0 = 0.6;
    let fresnel = f0 + (1.0 - f0) * pow(1.0 - max(dot(n, v), 0.0), 5.0);
    return vec4<f32>(env * tint * fresnel, 1.0);
}
