//! The changing part of a cloth world: positions, velocities, wetness and current masses, pin
//! targets. Everything a substep reads and writes besides scratch space.

use crate::math::{Vec3, Vec3A};

use super::model::ClothModel;

/// Per-particle state (structs of arrays, indexed by particle) plus the pin targets.
#[derive(Clone, Debug, PartialEq)]
pub struct ClothState {
    /// Positions, m.
    pub x: Vec<Vec3A>,
    /// Positions at the start of the last substep, m (Verlet's `x_prev`; also the start of the
    /// segment the collision stage and friction look at).
    pub x_prev: Vec<Vec3A>,
    /// Velocities, m/s: `(x − x_prev) / Δt` after each substep.
    pub v: Vec<Vec3A>,
    /// Absorbed water A_i, g of water per g of dry fabric (Park & Byun 2019 Eqs. 3–4). Zero when
    /// dry. Change it with [`ClothState::set_wetness`] so the mass follows.
    pub wet: Vec<f32>,
    /// Current mass m_i = m_dry (1 + A_i), kg.
    pub mass: Vec<f32>,
    /// 1 / m_i, 1/kg; zero for pinned particles (they follow their targets, not forces).
    pub inv_mass: Vec<f32>,
    /// Pin targets at the start of the current frame, m, one per `model.pins` entry.
    pub pin_prev: Vec<Vec3A>,
    /// Pin targets at the end of the current frame, m. Set them (with
    /// [`ClothState::set_pin_targets`]) before each frame; each substep places the pinned
    /// particles by linear interpolation between `pin_prev` and `pin_target`, so a pin never
    /// lags its attachment by a frame.
    pub pin_target: Vec<Vec3A>,
    /// Simulated time, s.
    pub time: f64,
    /// Frames stepped.
    pub frame: u64,
}

impl ClothState {
    /// The rest shape, at rest, dry.
    pub fn new(model: &ClothModel) -> Self {
        let n = model.len();
        let pins: Vec<Vec3A> = model.pins.iter().map(|&i| model.rest[i as usize]).collect();
        let mut s = Self {
            x: model.rest.clone(),
            x_prev: model.rest.clone(),
            v: vec![Vec3A::ZERO; n],
            wet: vec![0.0; n],
            mass: model.mass_dry.clone(),
            inv_mass: vec![0.0; n],
            pin_prev: pins.clone(),
            pin_target: pins,
            time: 0.0,
            frame: 0,
        };
        for i in 0..n {
            s.update_mass(model, i);
        }
        s
    }

    fn update_mass(&mut self, model: &ClothModel, i: usize) {
        self.mass[i] = model.mass_dry[i] * (1.0 + self.wet[i]);
        self.inv_mass[i] = if model.is_pinned(i) {
            0.0
        } else {
            1.0 / self.mass[i]
        };
    }

    /// Sets the absorbed water of particle `i` (g/g, ≥ 0) and its mass with it. The velocity is
    /// kept (PHYSICS.md §5: water is absorbed from rest relative to the fabric).
    pub fn set_wetness(&mut self, model: &ClothModel, i: usize, absorbed: f32) {
        self.wet[i] = absorbed.max(0.0);
        self.update_mass(model, i);
    }

    /// Sets where the pins must be at the end of the next frame; the current targets become the
    /// start of the interpolation. `targets[k]` is for particle `model.pins[k]`.
    pub fn set_pin_targets(&mut self, targets: &[Vec3]) {
        for (k, t) in targets.iter().enumerate().take(self.pin_target.len()) {
            self.pin_prev[k] = self.pin_target[k];
            self.pin_target[k] = Vec3A::from(*t);
        }
    }

    /// Keeps the pins where they are for the next frame (their previous target = current).
    pub fn hold_pins(&mut self) {
        self.pin_prev.copy_from_slice(&self.pin_target);
    }

    /// Moves every particle by `offset` (m), keeping velocities (used to place a garment).
    pub fn translate(&mut self, offset: Vec3) {
        let o = Vec3A::from(offset);
        for x in self.x.iter_mut().chain(self.x_prev.iter_mut()) {
            *x += o;
        }
        for p in self.pin_prev.iter_mut().chain(self.pin_target.iter_mut()) {
            *p += o;
        }
    }

    /// Kinetic energy ½ Σ m v², J.
    pub fn kinetic_energy(&self) -> f64 {
        self.v
            .iter()
            .zip(&self.mass)
            .map(|(v, &m)| 0.5 * m as f64 * v.length_squared() as f64)
            .sum()
    }

    /// Centre of mass, m.
    pub fn centre_of_mass(&self) -> Vec3 {
        let mut s = glam::DVec3::ZERO;
        let mut mt = 0.0f64;
        for (x, &m) in self.x.iter().zip(&self.mass) {
            s += glam::DVec3::new(x.x as f64, x.y as f64, x.z as f64) * m as f64;
            mt += m as f64;
        }
        (s / mt.max(1e-30)).as_vec3()
    }

    /// True if every position and velocity is finite.
    pub fn is_finite(&self) -> bool {
        self.x.iter().all(|x| x.is_finite()) && self.v.iter().all(|v| v.is_finite())
    }
}
