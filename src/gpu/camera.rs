//! A perspective camera that can frame given bounds, and the key light's shadow projection.
//! Right-handed, Y up (glTF); clip space z in [0, 1] (wgpu), so the projection is glam's
//! `directx` one.

use crate::math::{Mat4, Vec3};

/// A look-at perspective camera.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    pub eye: Vec3,
    pub target: Vec3,
    /// World up, +Y by default.
    pub up: Vec3,
    /// Vertical field of view, radians, in (0, π); default 40° (0.698).
    pub fov_y: f32,
    /// Near and far clip distances, metres, 0 < near < far.
    pub near: f32,
    pub far: f32,
}

impl Default for Camera {
    fn default() -> Self {
        Self {
            eye: Vec3::new(0.0, 1.5, 4.0),
            target: Vec3::new(0.0, 1.0, 0.0),
            up: Vec3::Y,
            fov_y: 40f32.to_radians(),
            near: 0.05,
            far: 100.0,
        }
    }
}

impl Camera {
    /// A camera looking at the centre of the box `min..max` along `view_dir` (from the eye
    /// towards the target; need not be unit) from just far enough that the box's bounding
    /// sphere fits the narrower of the two fields of view, scaled by `margin` (default 1.1;
    /// values in [0.5, 1) crop into the sphere, which suits boxes whose corners are empty).
    /// Near and far bracket the sphere.
    pub fn frame_bounds(min: Vec3, max: Vec3, aspect: f32, view_dir: Vec3, margin: f32) -> Self {
        let center = (min + max) * 0.5;
        let radius = ((max - min).length() * 0.5).max(1e-3);
        let fov_y = 40f32.to_radians();
        let distance = crate::math::framing_distance(radius, fov_y, aspect, margin.max(0.5));
        let dir = view_dir
            .try_normalize()
            .unwrap_or(Vec3::new(0.0, -0.3, -1.0).normalize());
        // Avoid a view direction parallel to up (look_at would be degenerate).
        let up = if dir.cross(Vec3::Y).length_squared() < 1e-6 {
            Vec3::Z
        } else {
            Vec3::Y
        };
        Self {
            eye: center - dir * distance,
            target: center,
            up,
            fov_y,
            near: (distance - radius * 2.0).max(distance * 0.01),
            far: distance + radius * 2.0,
        }
    }

    /// `view_from_world`.
    pub fn view_from_world(&self) -> Mat4 {
        glam::camera::rh::view::look_at_mat4(self.eye, self.target, self.up)
    }

    /// `clip_from_view`, z in [0, 1].
    pub fn clip_from_view(&self, aspect: f32) -> Mat4 {
        glam::camera::rh::proj::directx::perspective(self.fov_y, aspect, self.near, self.far)
    }

    pub fn clip_from_world(&self, aspect: f32) -> Mat4 {
        self.clip_from_view(aspect) * self.view_from_world()
    }
}

/// The key light's `clip_from_world` for the shadow map: an orthographic projection along
/// `-dir_to_light` enclosing the bounding sphere of `min..max`, so that everything that can cast
/// a shadow into the view is inside the map.
pub fn light_clip_from_world(dir_to_light: Vec3, min: Vec3, max: Vec3) -> Mat4 {
    let center = (min + max) * 0.5;
    let radius = ((max - min).length() * 0.5).max(1e-3);
    let l = dir_to_light.try_normalize().unwrap_or(Vec3::Y);
    let up = if l.cross(Vec3::Y).length_squared() < 1e-6 {
        Vec3::Z
    } else {
        Vec3::Y
    };
    let eye = center + l * radius * 2.0;
    let view = glam::camera::rh::view::look_at_mat4(eye, center, up);
    let proj = glam::camera::rh::proj::directx::orthographic(
        -radius,
        radius,
        -radius,
        radius,
        radius * 0.5,
        radius * 3.5,
    );
    proj * view
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(m: Mat4, p: Vec3) -> Vec3 {
        let c = m * p.extend(1.0);
        c.truncate() / c.w
    }

    #[test]
    fn framed_bounds_land_inside_the_image_and_depth_range() {
        let (min, max) = (Vec3::new(-0.5, 0.0, -0.2), Vec3::new(0.5, 1.8, 0.3));
        for aspect in [0.5, 1.0, 16.0 / 9.0] {
            let cam = Camera::frame_bounds(min, max, aspect, Vec3::new(0.3, -0.2, -1.0), 1.1);
            let m = cam.clip_from_world(aspect);
            let mut extent = 0.0f32;
            for i in 0..8 {
                let p = Vec3::new(
                    if i & 1 == 0 { min.x } else { max.x },
                    if i & 2 == 0 { min.y } else { max.y },
                    if i & 4 == 0 { min.z } else { max.z },
                );
                let ndc = project(m, p);
                assert!(
                    ndc.x.abs() <= 1.0 && ndc.y.abs() <= 1.0,
                    "{p} → {ndc} (aspect {aspect})"
                );
                assert!(ndc.z > 0.0 && ndc.z < 1.0, "depth {ndc}");
                extent = extent.max(ndc.x.abs()).max(ndc.y.abs());
            }
            // Framed, not lost in the distance.
            assert!(extent > 0.4, "bounds fill only {extent} of the half-screen");
            // The centre projects to the image centre.
            let c = project(m, (min + max) * 0.5);
            assert!(c.x.abs() < 1e-4 && c.y.abs() < 1e-4);
        }
    }

    #[test]
    fn light_projection_contains_the_bounds() {
        let (min, max) = (Vec3::new(-2.0, 0.0, -2.0), Vec3::new(2.0, 2.0, 2.0));
        let m = light_clip_from_world(Vec3::new(0.4, 1.0, 0.3), min, max);
        for i in 0..8 {
            let p = Vec3::new(
                if i & 1 == 0 { min.x } else { max.x },
                if i & 2 == 0 { min.y } else { max.y },
                if i & 4 == 0 { min.z } else { max.z },
            );
            let ndc = project(m, p);
            assert!(
                ndc.x.abs() <= 1.0 && ndc.y.abs() <= 1.0 && ndc.z >= 0.0 && ndc.z <= 1.0,
                "{ndc}"
            );
        }
        // A point nearer the light has a smaller depth.
        let near = project(m, Vec3::new(0.0, 1.5, 0.0)).z;
        let far = project(m, Vec3::new(0.0, 0.5, 0.0)).z;
        assert!(near < far);
    }
}
