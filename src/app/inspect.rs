//! The viewer's garment check (issue 19, point 5): the same measurements as `drape check`, shown
//! where the user is looking.
//!
//! - **Inside the skin, now.** On request ([`Inspect::show_inside`]) every garment particle of the
//!   current frame is asked against the visible skin (every body mesh as skinned now, generalized
//!   winding number; [`crate::check::garment_inside`]). The panel prints, per garment, how many
//!   unpinned vertices are more than 3 mm and more than 1 cm inside and the deepest one, and the
//!   window marks those vertices (see `draw.rs`). About 15 ms a frame for the dressed ninja, so it
//!   is off by default.
//! - **The verdict on the clip.** [`Inspect::start_check`] runs [`crate::check::check_clip`] — the
//!   very function behind `drape check` — on a copy of the character and the scene's current
//!   settings (clip, skinning method, garments, fabric, spacing, model) in a background thread.
//!   The panel shows its progress, then the verdict with each failure, as the command prints it.
//!   The viewer keeps running meanwhile; one check runs at a time, and a check runs to its end
//!   (closing the viewer drops it).

use std::sync::mpsc::{self, Receiver, TryRecvError};

use crate::check::{self, ClipReport, Inside, SkinQuery, Thresholds};
use crate::scene::Scene;

/// How one garment sits against the skin at the current frame (unpinned vertices only, as
/// `drape check` counts them).
#[derive(Clone, Debug, PartialEq)]
pub struct GarmentInside {
    pub name: String,
    /// Unpinned vertices.
    pub vertices: usize,
    /// Of those, inside the skin by more than [`Thresholds::shallow`] (3 mm).
    pub shallow: usize,
    /// Inside by more than [`Thresholds::deep`] (1 cm).
    pub deep: usize,
    /// Deepest unpinned vertex inside the skin, m (0 when none is inside).
    pub deepest: f32,
}

impl GarmentInside {
    /// Share of unpinned vertices more than 3 mm inside.
    pub fn share(&self) -> f32 {
        self.shallow as f32 / self.vertices.max(1) as f32
    }
}

/// A running or finished background check.
#[derive(Clone, Debug, PartialEq)]
pub enum CheckStatus {
    /// Frames simulated of the total the check needs.
    Running { clip: String, done: u32, total: u32 },
    /// The report, or why the scene could not be built.
    Done {
        clip: String,
        /// What it was run with, for the panel ("LBS, spacing ×1.00, mass_spring").
        setup: String,
        result: Result<ClipReport, String>,
    },
}

enum Msg {
    Progress(u32, u32),
    Done(Result<ClipReport, String>),
}

/// The viewer's check state: the per-frame inside figures and the background check.
pub struct Inspect {
    /// Whether the current frame's cloth is measured (and drawn) against the skin.
    pub show_inside: bool,
    pub thresholds: Thresholds,
    query: SkinQuery,
    /// Per particle of the scene's cloth model, for the frame in `measured_at`.
    inside: Vec<Inside>,
    /// Per garment, for the frame in `measured_at`.
    garments: Vec<GarmentInside>,
    /// (scene generation, scene time) the figures are for.
    measured_at: Option<(u64, f32)>,
    status: Option<CheckStatus>,
    rx: Option<Receiver<Msg>>,
    /// The running check's setup line.
    pending_setup: String,
}

impl Default for Inspect {
    fn default() -> Self {
        Self {
            show_inside: false,
            thresholds: Thresholds::default(),
            query: SkinQuery::default(),
            inside: Vec::new(),
            garments: Vec::new(),
            measured_at: None,
            status: None,
            rx: None,
            pending_setup: String::new(),
        }
    }
}

impl Inspect {
    /// Measures `scene`'s cloth against its skin if it changed since the last call (another
    /// generation or another time) and [`Inspect::show_inside`] is on; otherwise nothing.
    pub fn update(&mut self, scene: &Scene, generation: u64) {
        if !self.show_inside {
            self.measured_at = None;
            return;
        }
        let key = (generation, scene.time);
        if self.measured_at == Some(key) {
            return;
        }
        check::garment_inside(scene, &mut self.query, &mut self.inside);
        let th = &self.thresholds;
        let model = &scene.model;
        self.garments = model
            .garments
            .iter()
            .map(|g| {
                let mut r = GarmentInside {
                    name: g.name.clone(),
                    vertices: 0,
                    shallow: 0,
                    deep: 0,
                    deepest: 0.0,
                };
                for i in g.particles.clone().filter(|&i| !model.is_pinned(i)) {
                    r.vertices += 1;
                    let s = self.inside[i];
                    if s.is_inside() {
                        r.shallow += (s.depth > th.shallow) as usize;
                        r.deep += (s.depth > th.deep) as usize;
                        r.deepest = r.deepest.max(s.depth);
                    }
                }
                r
            })
            .collect();
        self.measured_at = Some(key);
    }

    /// Per garment at the last measured frame (empty while [`Inspect::show_inside`] is off).
    pub fn garments(&self) -> &[GarmentInside] {
        if self.measured_at.is_some() {
            &self.garments
        } else {
            &[]
        }
    }

    /// Unpinned particles of `scene` inside the skin at the last measured frame, with their
    /// depth, m (for drawing). Empty while off.
    pub fn inside_particles<'a>(
        &'a self,
        scene: &'a Scene,
    ) -> impl Iterator<Item = (usize, f32)> + 'a {
        let on = self.measured_at.is_some() && self.inside.len() == scene.state.x.len();
        let n = if on { self.inside.len() } else { 0 };
        (0..n).filter_map(move |i| {
            let s = self.inside[i];
            (s.is_inside() && !scene.model.is_pinned(i)).then_some((i, s.depth))
        })
    }

    /// Whether a background check is running.
    pub fn checking(&self) -> bool {
        matches!(self.status, Some(CheckStatus::Running { .. }))
    }

    /// The running or last finished check.
    pub fn status(&self) -> Option<&CheckStatus> {
        self.status.as_ref()
    }

    /// Starts `drape check`'s measurement of `scene`'s clip with its current settings in a
    /// background thread. Refused (with the reason) while one runs or when no clip plays.
    pub fn start_check(&mut self, scene: &Scene) -> Result<String, String> {
        if self.checking() {
            return Err("a check is already running; wait for its verdict".into());
        }
        let Some(clip) = scene.clip else {
            return Err("no clip is playing: choose a clip to check".into());
        };
        let rig = scene.rig.clone();
        let name = rig.clips[clip].name.clone();
        let config = scene.config.clone();
        let th = self.thresholds;
        let setup = format!(
            "{}, {} garment(s), model {}",
            config.method,
            scene.garments.len(),
            config.sim.model.name()
        );
        let (tx, rx) = mpsc::channel();
        let progress_tx = tx.clone();
        std::thread::Builder::new()
            .name("drape check".into())
            .spawn(move || {
                let mut last = 0;
                let r = check::check_clip(&rig, clip, &config, &th, &mut |done, total| {
                    // A few dozen updates are plenty for a progress bar.
                    if done == total || done >= last + total.div_ceil(50) {
                        last = done;
                        let _ = progress_tx.send(Msg::Progress(done, total));
                    }
                });
                let _ = tx.send(Msg::Done(r.map_err(|e| e.to_string())));
            })
            .map_err(|e| format!("could not start the check: {e}"))?;
        self.rx = Some(rx);
        self.status = Some(CheckStatus::Running {
            clip: name.clone(),
            done: 0,
            total: 0,
        });
        self.pending_setup = setup;
        Ok(name)
    }

    /// Takes the background check's news; returns the finished status once, when it ends.
    pub fn poll(&mut self) -> Option<&CheckStatus> {
        let rx = self.rx.as_ref()?;
        let mut finished = None;
        loop {
            match rx.try_recv() {
                Ok(Msg::Progress(d, t)) => {
                    if let Some(CheckStatus::Running { done, total, .. }) = &mut self.status {
                        (*done, *total) = (d, t);
                    }
                }
                Ok(Msg::Done(r)) => {
                    finished = Some(r);
                    break;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    finished = Some(Err("the check stopped without a verdict".into()));
                    break;
                }
            }
        }
        let result = finished?;
        self.rx = None;
        let clip = match &self.status {
            Some(CheckStatus::Running { clip, .. }) => clip.clone(),
            _ => String::new(),
        };
        self.status = Some(CheckStatus::Done {
            clip,
            setup: std::mem::take(&mut self.pending_setup),
            result,
        });
        self.status.as_ref()
    }
}

/// One line for the panel's message list about a finished check.
pub fn verdict_line(status: &CheckStatus) -> Option<(bool, String)> {
    let CheckStatus::Done { clip, result, .. } = status else {
        return None;
    };
    Some(match result {
        Ok(r) if r.passed() => (true, format!("check of '{clip}': passed")),
        Ok(r) => (
            false,
            format!(
                "check of '{clip}': FAILED ({} problem(s)): {}",
                r.failures.len(),
                r.failures.first().cloned().unwrap_or_default()
            ),
        ),
        Err(e) => (false, format!("check of '{clip}' could not run: {e}")),
    })
}
