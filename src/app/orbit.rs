//! The viewer's camera as plain numbers: an orbit around a target (azimuth, elevation,
//! distance), panned in the view plane, zoomed along the view ray, optionally following the
//! character. Pure maths, no window; the window turns it into a `drape::gpu::Camera`.

use crate::math::Vec3;

/// Vertical field of view of the viewer's camera, degrees (the renderer's default, 40°).
pub const FOV_Y_DEG: f32 = 40.0;

/// An orbiting camera. Angles in degrees, distances in metres, world +Y up (glTF).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrbitCamera {
    /// Degrees about +Y from +Z towards +X (0: in front of a glTF character, which faces +Z).
    /// Any value; wrapped to (−180, 180].
    pub azimuth: f32,
    /// Degrees above the horizon. Range −85 … 85.
    pub elevation: f32,
    /// Eye distance from the target, m. Range 0.1 … 100.
    pub distance: f32,
    /// The point looked at, world space.
    pub target: Vec3,
    /// Offset from the followed character's centre, world space (panning while following).
    pub pan: Vec3,
}

impl Default for OrbitCamera {
    fn default() -> Self {
        Self {
            azimuth: 30.0,
            elevation: 12.0,
            distance: 4.0,
            target: Vec3::new(0.0, 1.0, 0.0),
            pan: Vec3::ZERO,
        }
    }
}

impl OrbitCamera {
    /// Unit vector from the target towards the eye.
    pub fn to_eye(&self) -> Vec3 {
        let (az, el) = (self.azimuth.to_radians(), self.elevation.to_radians());
        Vec3::new(az.sin() * el.cos(), el.sin(), az.cos() * el.cos())
    }

    pub fn eye(&self) -> Vec3 {
        self.target + self.to_eye() * self.distance
    }

    /// The camera's right and up axes (unit, world space).
    pub fn axes(&self) -> (Vec3, Vec3) {
        let forward = -self.to_eye();
        let right = forward.cross(Vec3::Y).normalize_or(Vec3::X);
        (right, right.cross(forward))
    }

    /// Turns by a mouse drag of `dx, dy` pixels (0.3° per pixel; dragging right swings the
    /// camera to the left around the target, as in Blender).
    pub fn orbit(&mut self, dx: f32, dy: f32) {
        if !(dx.is_finite() && dy.is_finite()) {
            return;
        }
        self.azimuth -= dx * 0.3;
        self.azimuth = (self.azimuth + 180.0).rem_euclid(360.0) - 180.0;
        self.elevation = (self.elevation + dy * 0.3).clamp(-85.0, 85.0);
    }

    /// Pans by a drag of `dx, dy` pixels in a view `viewport_height` pixels tall: the point
    /// under the cursor at the target's depth stays under the cursor.
    pub fn pan(&mut self, dx: f32, dy: f32, viewport_height: f32) {
        if !(dx.is_finite() && dy.is_finite()) || viewport_height <= 0.0 {
            return;
        }
        let metres_per_px =
            2.0 * self.distance * (FOV_Y_DEG.to_radians() * 0.5).tan() / viewport_height;
        let (right, up) = self.axes();
        let delta = (-right * dx + up * dy) * metres_per_px;
        self.target += delta;
        self.pan += delta;
    }

    /// Zooms by `steps` wheel notches (positive: closer, 10 % per notch).
    pub fn zoom(&mut self, steps: f32) {
        if steps.is_finite() {
            self.distance = (self.distance * 0.9f32.powf(steps)).clamp(0.1, 100.0);
        }
    }

    /// Frames the box `lo..hi` (world space) at `aspect` (width / height): looks at its centre
    /// from the distance at which its bounding sphere fits the narrower field of view with 10 %
    /// to spare. Clears the pan.
    pub fn frame(&mut self, (lo, hi): (Vec3, Vec3), aspect: f32) {
        if !(lo.is_finite() && hi.is_finite()) {
            return;
        }
        let radius = ((hi - lo).length() * 0.5).max(0.05);
        self.target = (lo + hi) * 0.5;
        self.pan = Vec3::ZERO;
        self.distance = crate::math::framing_distance(radius, FOV_Y_DEG.to_radians(), aspect, 1.1)
            .clamp(0.1, 100.0);
    }

    /// Follows a character whose centre is `centre`: the target eases towards `centre + pan`
    /// with a time constant of 0.15 s (`dt` seconds since the last call), so a kick's hip
    /// sway does not shake the picture but a travelling character stays framed.
    pub fn follow(&mut self, centre: Vec3, dt: f32) {
        if !centre.is_finite() || !dt.is_finite() {
            return;
        }
        let k = 1.0 - (-dt.max(0.0) / 0.15).exp();
        self.target = self.target.lerp(centre + self.pan, k);
    }

    /// Near and far clip distances for a scene of about `radius` metres around the target
    /// (the ground plane reaches 5 m out).
    pub fn clip_range(&self, radius: f32) -> (f32, f32) {
        let near = (self.distance - 2.0 * radius)
            .max(self.distance * 0.01)
            .max(0.01);
        (near, self.distance + 2.0 * radius.max(8.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orbit_keeps_distance_and_clamps_elevation() {
        let mut c = OrbitCamera::default();
        let d0 = (c.eye() - c.target).length();
        c.orbit(400.0, 1000.0);
        assert!(((c.eye() - c.target).length() - d0).abs() < 1e-4);
        assert_eq!(c.elevation, 85.0);
        assert!(c.azimuth > -180.0 && c.azimuth <= 180.0);
        c.orbit(f32::NAN, 0.0);
        assert!(c.azimuth.is_finite());
    }

    #[test]
    fn pan_moves_target_in_view_plane_and_zoom_scales_distance() {
        let mut c = OrbitCamera::default();
        let (t0, e0) = (c.target, c.eye());
        c.pan(100.0, 0.0, 800.0);
        let moved = c.target - t0;
        // Dragging right moves the world right, i.e. the camera left.
        let (right, _) = c.axes();
        assert!(moved.dot(right) < 0.0);
        assert!(moved.dot(c.to_eye()).abs() < 1e-5);
        assert!(((c.eye() - e0) - moved).length() < 1e-5);
        let d = c.distance;
        c.zoom(1.0);
        assert!((c.distance - 0.9 * d).abs() < 1e-5);
        c.zoom(-1000.0);
        assert_eq!(c.distance, 100.0);
    }

    #[test]
    fn framing_fits_the_bounding_sphere() {
        let mut c = OrbitCamera::default();
        let b = (Vec3::new(-0.5, 0.0, -0.3), Vec3::new(0.5, 1.8, 0.3));
        c.frame(b, 16.0 / 9.0);
        assert!((c.target - Vec3::new(0.0, 0.9, 0.0)).length() < 1e-5);
        let r = (b.1 - b.0).length() * 0.5;
        let half = (FOV_Y_DEG.to_radians() * 0.5).sin();
        assert!(c.distance * half >= r);
        assert!(c.distance * half < 1.2 * r);
    }
}
