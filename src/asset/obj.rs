//! Wavefront OBJ output for posed meshes, so a frame can be opened in any 3D tool.
//!
//! Vertices are written exactly in the order given (no merging), so vertex `k` of the file is
//! vertex `k` of the input meshes concatenated; each mesh becomes an `o` group.

use std::io::{self, Write};

use crate::math::{Vec2, Vec3};

/// One mesh to write: positions and normals already posed (world space), optional UVs.
#[derive(Clone, Copy)]
pub struct ObjMesh<'a> {
    pub name: &'a str,
    pub positions: &'a [Vec3],
    pub normals: &'a [Vec3],
    pub uvs: &'a [Vec2],
    pub indices: &'a [u32],
}

/// Writes `meshes` as one OBJ. Normals and UVs are written when present for every vertex.
pub fn write_obj(out: &mut impl Write, header: &str, meshes: &[ObjMesh]) -> io::Result<()> {
    for line in header.lines() {
        writeln!(out, "# {line}")?;
    }
    let mut base = 1usize; // OBJ indices are 1-based and global across groups
    for m in meshes {
        writeln!(out, "o {}", sanitize(m.name))?;
        for p in m.positions {
            writeln!(out, "v {} {} {}", p.x, p.y, p.z)?;
        }
        let has_n = m.normals.len() == m.positions.len();
        let has_t = m.uvs.len() == m.positions.len();
        if has_n {
            for n in m.normals {
                writeln!(out, "vn {} {} {}", n.x, n.y, n.z)?;
            }
        }
        if has_t {
            // OBJ's v axis points up; glTF's points down.
            for t in m.uvs {
                writeln!(out, "vt {} {}", t.x, 1.0 - t.y)?;
            }
        }
        for tri in m.indices.chunks_exact(3) {
            write!(out, "f")?;
            for &i in tri {
                let k = base + i as usize;
                match (has_t, has_n) {
                    (true, true) => write!(out, " {k}/{k}/{k}")?,
                    (false, true) => write!(out, " {k}//{k}")?,
                    (true, false) => write!(out, " {k}/{k}")?,
                    (false, false) => write!(out, " {k}")?,
                }
            }
            writeln!(out)?;
        }
        base += m.positions.len();
    }
    Ok(())
}

fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect();
    if s.is_empty() {
        "mesh".into()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_groups_with_global_indices() {
        let p = [Vec3::ZERO, Vec3::X, Vec3::Y];
        let n = [Vec3::Z; 3];
        let m = ObjMesh {
            name: "a b",
            positions: &p,
            normals: &n,
            uvs: &[],
            indices: &[0, 1, 2],
        };
        let mut buf = Vec::new();
        write_obj(&mut buf, "hello", &[m, ObjMesh { name: "", ..m }]).unwrap();
        let s = String::from_utf8(buf).unwrap();
        assert!(s.starts_with("# hello\no a_b\n"));
        assert!(s.contains("f 1//1 2//2 3//3"));
        assert!(s.contains("o mesh\n"));
        assert!(s.contains("f 4//4 5//5 6//6"));
    }
}
