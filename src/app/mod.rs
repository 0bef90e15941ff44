//! The interactive viewer (`drape view`, and `drape` with no subcommand): a winit window with
//! the renderer's view of the dressed character and an egui panel.
//!
//! Layers, thinnest on top:
//!
//! - [`settings`] — the plain values the UI edits, remembered in the user's config folder;
//! - [`viewer`] — [`Viewer`]: settings + the CPU [`crate::scene::Scene`] + the orbit camera,
//!   changed only through [`Action`]s (tested without a window);
//! - [`inspect`] — the garment check in the viewer: cloth inside the skin now, and `drape check`'s
//!   verdict on the clip, run in the background;
//! - [`orbit`] — the camera as numbers;
//! - `window` (feature `app`) — winit + wgpu surface + egui: turns clicks, keys and drops into
//!   Actions, draws the scene with `drape::gpu`, takes screenshots for tests.
//!
//! The first four build without the `app` feature, so the mapping from UI state to scene
//! parameters is part of the fast core test run.

pub mod inspect;
pub mod orbit;
pub mod settings;
pub mod viewer;

#[cfg(feature = "app")]
mod draw;
#[cfg(feature = "app")]
mod panel;
#[cfg(feature = "app")]
pub mod window;

pub use orbit::OrbitCamera;
pub use settings::{FabricParam, FabricPreset, SettingsStore, ViewerSettings};
pub use viewer::{Action, Level, TickReport, Viewer};
