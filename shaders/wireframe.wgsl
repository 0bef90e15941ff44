// #import common.wgsl
// Wireframe: the mesh's edges, drawn as a line list (the renderer builds an edge index buffer
// from the triangles, each edge once), in the object's base colour, unlit.

@vertex
fn vs_main(v: VsIn) -> VsOut {
    return transform_vertex(v, 0.0);
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    return vec4<f32>(object.base_color.rgb, 1.0);
}
