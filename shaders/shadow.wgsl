// Shadow pass: depth only, from the key light's orthographic projection. Standalone (no
// common.wgsl): the shadow map that common.wgsl samples is this pass's depth attachment.
// The structs repeat the layouts of common.wgsl's Frame and Object (same sizes and order).

struct ShadowFrame {
    light_clip_from_world: mat4x4<f32>,
    _pad: array<vec4<f32>, 12>,
}

struct Object {
    world_from_object: mat4x4<f32>,
    normal_from_object: mat4x4<f32>,
    base_color: vec4<f32>,
    material: vec4<f32>,
    extra: vec4<f32>,
    _pad: vec4<f32>,
}

@group(0) @binding(0) var<uniform> shadow_frame: ShadowFrame;
@group(1) @binding(0) var<uniform> object: Object;

@vertex
fn vs_main(@location(0) pos_wet: vec4<f32>) -> @builtin(position) vec4<f32> {
    return shadow_frame.light_clip_from_world * object.world_from_object * vec4<f32>(pos_wet.xyz, 1.0);
}
