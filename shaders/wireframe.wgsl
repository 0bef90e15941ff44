// #import common.wgsl
// Wireframe in one pass over the triangles (Bærentzen, Munk Nielsen, Gjøl & Larsen 2006,
// "Two methods for antialiased wireframe drawing with hidden line removal", the single-pass
// method): every fragment knows its barycentric coordinates b, so its distance to edge i is
// b_i / |∇b_i| pixels (the screen-space gradient's length: fwidth's |∂x| + |∂y| would
// overestimate it by up to √2 for diagonal edges). A line of LINE_HALF_PX on each side of the edge is drawn there,
// antialiased over a pixel, over a dim lit fill of the surface, so hidden lines are removed by
// the depth test and the silhouette reads.
//
// A dense mesh seen small has edges closer together than the line width; lines would then
// cover every pixel and the wireframe would look solid. So each edge's line fades with the
// triangle's altitude to it on screen, 1 / |∇b_i| pixels: full strength above
// FADE_END_PX, gone below FADE_START_PX. At 320×240 the ninja's body shows its shaded fill with
// the coarser edges; close up every edge is drawn.
//
// The triangle's corners are pulled from the mesh's storage buffers (group 3) by vertex index,
// as the indexed vertex stream shares corners between triangles and cannot carry barycentrics.

// Corners of the mesh: `GpuVertex` (src/gpu/mesh.rs) is two vec4 per vertex (pos_wet, normal).
@group(3) @binding(0) var<storage, read> wire_vertices: array<vec4<f32>>;
// Three indices per triangle (the mesh's index buffer).
@group(3) @binding(1) var<storage, read> wire_indices: array<u32>;
// Texture coordinates, one vec2 per vertex.
@group(3) @binding(2) var<storage, read> wire_uvs: array<vec2<f32>>;

// Half the line width in pixels on each side of an edge (each of the two triangles sharing it
// draws its half): lines are 2 × 0.6 px wide.
const LINE_HALF_PX: f32 = 0.6;
// Altitudes (pixels) between which an edge's line fades in.
const FADE_START_PX: f32 = 2.0;
const FADE_END_PX: f32 = 6.0;
// Brightness of the fill relative to a lit surface, [0, 1].
const FILL: f32 = 0.6;

struct WireOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world_pos: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
    @location(3) light_clip: vec4<f32>,
    @location(4) bary: vec3<f32>,
}

@vertex
fn vs_main(@builtin(vertex_index) k: u32) -> WireOut {
    let i = wire_indices[k];
    var v: VsIn;
    v.pos_wet = wire_vertices[2u * i];
    v.normal = wire_vertices[2u * i + 1u];
    v.uv = wire_uvs[i];
    let o = transform_vertex(v, 0.0);
    var out: WireOut;
    out.clip = o.clip;
    out.world_pos = o.world_pos;
    out.normal = o.normal;
    out.uv = o.uv;
    out.light_clip = o.light_clip;
    let corner = k % 3u;
    out.bary = vec3<f32>(f32(corner == 0u), f32(corner == 1u), f32(corner == 2u));
    return out;
}

@fragment
fn fs_main(in: WireOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    let texel = textureSample(base_map, linear_sampler, in.uv);
    let dx = dpdx(in.bary);
    let dy = dpdy(in.bary);
    let w = max(sqrt(dx * dx + dy * dy), vec3<f32>(1e-6));
    let dist_px = in.bary / w;
    let altitude_px = 1.0 / w;
    let cover = (vec3<f32>(1.0) - smoothstep(vec3<f32>(LINE_HALF_PX - 0.5), vec3<f32>(LINE_HALF_PX + 0.5), dist_px))
        * smoothstep(vec3<f32>(FADE_START_PX), vec3<f32>(FADE_END_PX), altitude_px);
    let line = max(cover.x, max(cover.y, cover.z));

    let albedo = object.base_color.rgb * texel.rgb;
    let n = facing_normal(in.normal, front);
    let l = normalize(frame.light_dir_world.xyz);
    let n_dot_l = max(dot(n, l), 0.0);
    let lit = frame.ambient_color.rgb + n_dot_l * shadow_factor(in.light_clip, n_dot_l) * frame.light_color.rgb;
    let fill = albedo * lit * FILL;
    // Lines in the surface colour lifted towards white, so they read on dark materials too.
    let line_rgb = mix(albedo, vec3<f32>(1.0), 0.6);
    return vec4<f32>(mix(fill, line_rgb, line), 1.0);
}
