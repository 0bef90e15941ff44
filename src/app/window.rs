//! The window: winit's event loop, a wgpu surface, egui, and the [`Viewer`] they drive.
//!
//! Per redraw: apply the Actions gathered since the last one (panel, keys, mouse, dropped
//! files, `--action`s due this frame), advance the simulation within its time budget, move the
//! camera, lay out the panel, then record the 3D frame (`SceneRenderer`) and egui's into the
//! surface texture and present it. A screenshot (`--screenshot`) reads back exactly the
//! texture that is presented (or, where the surface cannot be copied from, renders the same
//! frame again into an offscreen texture of the same format).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use winit::application::ApplicationHandler;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::window::{Window, WindowId};

use super::draw::SceneRenderer;
use super::panel::{self, PanelState};
use super::settings::{SettingsStore, ViewerSettings};
use super::viewer::{Action, Level, Viewer};
use crate::gpu::GpuContext;
use crate::skin::SkinMethod;

/// How to run the window.
#[derive(Clone, Debug)]
pub struct Options {
    /// A .glb/.gltf/.fbx to open; `None`: the built-in ninja.
    pub character: Option<PathBuf>,
    /// Files whose clips are put on the character by bone name (`--clips-from`).
    pub clips_from: Vec<PathBuf>,
    /// Meshes taken off the character (`--hide`, see [`crate::Rig::hide_meshes`]).
    pub hide: Vec<String>,
    /// Where settings are read and written (none for tests).
    pub settings: SettingsStore,
    /// Inner size of the window, physical pixels.
    pub size: (u32, u32),
    /// Write the frame presented at `after_frames` to this PNG and exit.
    pub screenshot: Option<PathBuf>,
    /// Frame number (from 1) of the screenshot, or of the exit for `quit_after`.
    pub after_frames: u32,
    /// Exit after this many frames and report the frame rate (a benchmark run).
    pub quit_after: Option<u32>,
    /// Actions to apply at given frames (`--action KEY=VALUE@FRAME`), through the same path as
    /// the panel's.
    pub actions: Vec<(u32, Action)>,
    /// Every frame advances the world by exactly 1/60 s with no time budget (screenshots are
    /// then the same on any machine); otherwise by the wall time.
    pub fixed_step: bool,
    /// Wait for the display's vertical blank (default on).
    pub vsync: bool,
}

/// Why the viewer could not run.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error(
        "no display to open a window on ({0}). To render without a display use \
         `drape render --garments all --out frames/` (offscreen PNGs and a GIF), or run the \
         viewer under a virtual display: `xvfb-run -a drape view`"
    )]
    NoDisplay(String),
    #[error("{0}")]
    Gpu(String),
    #[error("{0}")]
    Character(String),
    #[error("screenshot: {0}")]
    Screenshot(String),
}

/// What a run measured (printed by `drape view` for screenshots and `--quit-after`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunReport {
    pub frames: u32,
    /// Wall seconds from the first frame to the last.
    pub seconds: f64,
    /// CPU seconds spent stepping the scene, summed.
    pub sim_seconds: f64,
    /// Wall seconds spent recording, submitting and presenting, summed.
    pub draw_seconds: f64,
    /// Frames where the simulation lagged behind real time.
    pub lagging_frames: u32,
    pub adapter: String,
    pub particles: usize,
    pub size: (u32, u32),
}

impl RunReport {
    pub fn fps(&self) -> f64 {
        if self.seconds > 0.0 {
            (self.frames.saturating_sub(1)) as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// Fails with [`ViewError::NoDisplay`] when there is plainly no display to connect to.
fn check_display() -> Result<(), ViewError> {
    if cfg!(all(unix, not(target_os = "macos"))) {
        let set = |v: &str| std::env::var_os(v).is_some_and(|x| !x.is_empty());
        if !set("DISPLAY") {
            let why = if set("WAYLAND_DISPLAY") {
                "WAYLAND_DISPLAY is set but DISPLAY is not: drape's window needs X11 or XWayland"
            } else {
                "DISPLAY is not set"
            };
            return Err(ViewError::NoDisplay(why.into()));
        }
    }
    Ok(())
}

/// Opens the window and runs until it is closed (or the screenshot is written).
pub fn run(opts: Options) -> Result<RunReport, ViewError> {
    check_display()?;
    let (settings, warnings) = opts.settings.load();
    let mut rig = crate::cli::load_character(opts.character.as_deref(), &Default::default())
        .map_err(|e| ViewError::Character(e.to_string()))?;
    crate::cli::clips_from::add_clips(&mut rig, &opts.clips_from, &Default::default())
        .map_err(|e| ViewError::Character(e.to_string()))?;
    rig.hide_meshes(&opts.hide)
        .map_err(|e| ViewError::Character(format!("--hide: {e}")))?;
    let name = opts
        .character
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "built-in ninja".into());
    let mut viewer = Viewer::new(rig, &name, settings)
        .map_err(|e| ViewError::Character(format!("cannot show {name}: {e}")))?;
    for w in warnings {
        eprintln!("drape view: {w}");
        viewer.message(Level::Warning, w);
    }
    if opts.fixed_step {
        viewer.budget = std::time::Duration::from_secs(3600);
    }
    let event_loop = EventLoop::new().map_err(|e| ViewError::NoDisplay(e.to_string()))?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let panel_state = PanelState {
        settings_path: match &opts.settings.path {
            Some(p) => format!("settings: {}", p.display()),
            None => "settings: not saved (--no-settings)".into(),
        },
        ..Default::default()
    };
    let mut app = App {
        opts,
        viewer,
        gfx: None,
        error: None,
        frame: 0,
        panel: panel_state,
        pending: Vec::new(),
        drag: None,
        cursor: None,
        panel_width: 0.0,
        last: None,
        first: None,
        stats: Stats::default(),
        report: RunReport::default(),
        saved: None,
    };
    event_loop
        .run_app(&mut app)
        .map_err(|e| ViewError::NoDisplay(e.to_string()))?;
    if let Some(e) = app.error.take() {
        return Err(e);
    }
    app.save_settings();
    Ok(app.report)
}

struct Gfx {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    /// The surface texture can be copied from (screenshots read it directly).
    copy_src: bool,
    ctx: GpuContext,
    scene: SceneRenderer,
    egui_ctx: egui::Context,
    egui_state: egui_winit::State,
    egui_renderer: egui_wgpu::Renderer,
}

/// Per-stage times summed over the current half-second window, for the stats line.
#[derive(Default)]
struct Stats {
    frames: u32,
    since: Option<Instant>,
    stage: [f64; 5],
    draw: f64,
    sim_s: f64,
    wanted_s: f64,
    lagging: bool,
}

struct App {
    opts: Options,
    viewer: Viewer,
    gfx: Option<Gfx>,
    error: Option<ViewError>,
    /// Frames drawn so far.
    frame: u32,
    panel: PanelState,
    /// Actions from keys, mouse and drops since the last redraw.
    pending: Vec<Action>,
    drag: Option<MouseButton>,
    cursor: Option<(f64, f64)>,
    /// Width of the side panel, physical pixels.
    panel_width: f32,
    last: Option<Instant>,
    first: Option<Instant>,
    stats: Stats,
    report: RunReport,
    /// The settings last written (saved again only when they change).
    saved: Option<ViewerSettings>,
}

impl App {
    fn fail(&mut self, event_loop: &ActiveEventLoop, e: ViewError) {
        self.error = Some(e);
        event_loop.exit();
    }

    fn save_settings(&mut self) {
        if self.saved.as_ref() == Some(&self.viewer.settings) {
            return;
        }
        if let Err(e) = self.opts.settings.save(&self.viewer.settings) {
            eprintln!("drape view: {e}");
        }
        self.saved = Some(self.viewer.settings.clone());
    }

    fn init(&mut self, event_loop: &ActiveEventLoop) -> Result<Gfx, ViewError> {
        let (w, h) = self.opts.size;
        let attrs = Window::default_attributes()
            .with_title("drape — dressed character viewer")
            .with_inner_size(winit::dpi::PhysicalSize::new(w, h));
        let window = Arc::new(
            event_loop
                .create_window(attrs)
                .map_err(|e| ViewError::NoDisplay(format!("cannot create a window: {e}")))?,
        );
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_with_display_handle_from_env(
                Box::new(event_loop.owned_display_handle()),
            ));
        let surface = instance
            .create_surface(window.clone())
            .map_err(|e| ViewError::Gpu(format!("cannot draw into the window: {e}")))?;
        let ctx = pollster::block_on(GpuContext::from_instance(instance, Some(&surface)))
            .map_err(|e| ViewError::Gpu(e.to_string()))?;
        let caps = surface.get_capabilities(&ctx.adapter);
        // The renderer writes linear colour: an sRGB surface encodes it for the display.
        let format = caps
            .formats
            .iter()
            .copied()
            .find(|f| {
                matches!(
                    f,
                    wgpu::TextureFormat::Bgra8UnormSrgb | wgpu::TextureFormat::Rgba8UnormSrgb
                )
            })
            .or_else(|| caps.formats.first().copied())
            .ok_or_else(|| ViewError::Gpu("the window's surface supports no format".into()))?;
        let copy_src = caps.usages.contains(wgpu::TextureUsages::COPY_SRC);
        let size = window.inner_size();
        let config = wgpu::SurfaceConfiguration {
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT
                | if copy_src {
                    wgpu::TextureUsages::COPY_SRC
                } else {
                    wgpu::TextureUsages::empty()
                },
            format,
            width: size.width.max(1),
            height: size.height.max(1),
            present_mode: if self.opts.vsync {
                wgpu::PresentMode::AutoVsync
            } else {
                wgpu::PresentMode::AutoNoVsync
            },
            desired_maximum_frame_latency: 2,
            alpha_mode: caps
                .alpha_modes
                .first()
                .copied()
                .unwrap_or(wgpu::CompositeAlphaMode::Auto),
            view_formats: Vec::new(),
            color_space: wgpu::SurfaceColorSpace::Auto,
        };
        surface.configure(&ctx.device, &config);
        let scene = SceneRenderer::new(&ctx, format, &self.viewer)
            .map_err(|e| ViewError::Gpu(format!("cannot upload the character: {e}")))?;
        let egui_ctx = egui::Context::default();
        let egui_state = egui_winit::State::new(
            egui_ctx.clone(),
            egui::ViewportId::ROOT,
            &window,
            Some(window.scale_factor() as f32),
            window.theme(),
            Some(ctx.device.limits().max_texture_dimension_2d as usize),
        );
        let egui_renderer =
            egui_wgpu::Renderer::new(&ctx.device, format, egui_wgpu::RendererOptions::default());
        eprintln!(
            "drape view: {} on {}, {}×{} {:?}",
            self.viewer.character, ctx.summary, config.width, config.height, format
        );
        self.report.adapter = ctx.summary.to_string();
        Ok(Gfx {
            window,
            surface,
            config,
            copy_src,
            ctx,
            scene,
            egui_ctx,
            egui_state,
            egui_renderer,
        })
    }

    /// Writes `<screenshot>.json` beside the picture: the image size, the side panel's width
    /// and the camera (eye, target, field of view, `clip_from_world`), so a test can find a
    /// joint in the picture, and what was shown.
    fn write_sidecar(&self, png: &std::path::Path) -> Result<(), ViewError> {
        let Some(gfx) = &self.gfx else {
            return Ok(());
        };
        let (w, h) = (gfx.config.width, gfx.config.height);
        let cam = SceneRenderer::camera(&self.viewer);
        let clip_from_world = cam.clip_from_world(w as f32 / h as f32);
        let v = &self.viewer;
        let json = serde_json::json!({
            "width": w,
            "height": h,
            "panel_width": self.panel_width,
            "frame": self.frame,
            "camera": {
                "eye": cam.eye.to_array(),
                "target": cam.target.to_array(),
                "fov_y": cam.fov_y,
                "near": cam.near,
                "far": cam.far,
                "clip_from_world": clip_from_world.to_cols_array(),
            },
            "character": v.character,
            "method": v.settings.method.name(),
            "clip": v.scene.clip.map(|c| v.rig().clips[c].name.clone()),
            "clip_time": v.clip_time().map(|(t, _)| t),
            "garments": v.scene.garments.iter().map(|g| g.kind.name()).collect::<Vec<_>>(),
            "particles": v.scene.particle_count(),
            "adapter": self.report.adapter,
        });
        let mut name = png.as_os_str().to_owned();
        name.push(".json");
        let path = std::path::PathBuf::from(name);
        let text = serde_json::to_string_pretty(&json).unwrap_or_default();
        crate::output::write_atomic(&path, text.as_bytes())
            .map_err(|e| ViewError::Screenshot(format!("{}: {e}", path.display())))
    }

    fn shortcut(&mut self, key: &Key) {
        let a = match key {
            Key::Named(NamedKey::Space) => Action::TogglePlay,
            Key::Named(NamedKey::F1) => Action::ToggleHelp,
            Key::Named(NamedKey::ArrowLeft) | Key::Named(NamedKey::ArrowRight) => {
                let Some((t, _)) = self.viewer.clip_time() else {
                    return;
                };
                let start = self
                    .viewer
                    .scene
                    .clip
                    .map(|c| self.viewer.rig().clips[c].start)
                    .unwrap_or(0.0);
                let d = if *key == Key::Named(NamedKey::ArrowLeft) {
                    -1.0 / 30.0
                } else {
                    1.0 / 30.0
                };
                self.pending.push(Action::Pause);
                Action::Seek(start + t + d)
            }
            Key::Character(c) => {
                let s = &self.viewer.settings;
                match c.to_ascii_lowercase().as_str() {
                    "1" => Action::SetMethod(SkinMethod::Lbs),
                    "2" => Action::SetMethod(SkinMethod::Dqs),
                    "3" => Action::SetMethod(SkinMethod::Cor),
                    "r" => Action::ResetSim,
                    "f" => Action::FrameCamera,
                    "g" => Action::SetFollow(!s.follow),
                    "h" | "?" => Action::ToggleHelp,
                    "p" => Action::ShowProxies(!s.show_proxies),
                    "i" => Action::ShowInside(!self.viewer.inspect.show_inside),
                    "b" => Action::ShowBvh(!s.show_bvh),
                    "k" => Action::ShowSkeleton(!s.show_skeleton),
                    "w" => Action::SetWireframe(!s.wireframe),
                    _ => return,
                }
            }
            _ => return,
        };
        self.pending.push(a);
    }

    fn redraw(&mut self, event_loop: &ActiveEventLoop) {
        let now = Instant::now();
        let real_dt = self
            .last
            .map(|l| (now - l).as_secs_f32())
            .unwrap_or(1.0 / 60.0);
        self.last = Some(now);
        self.first.get_or_insert(now);
        self.frame += 1;
        let frame = self.frame;

        // 1. Actions: injected ones due now, then the user's.
        let due: Vec<Action> = self
            .opts
            .actions
            .iter()
            .filter(|(f, _)| *f == frame)
            .map(|(_, a)| a.clone())
            .collect();
        for a in due.into_iter().chain(std::mem::take(&mut self.pending)) {
            self.viewer.apply(a);
        }
        // Fabric sliders rebuild the scene once they are let go.
        let pointer_down = self
            .gfx
            .as_ref()
            .is_some_and(|g| g.egui_ctx.input(|i| i.pointer.any_down()));
        if !pointer_down {
            self.viewer.flush();
        }

        // 2. The simulation.
        let dt = if self.opts.fixed_step {
            1.0 / 60.0
        } else {
            real_dt
        };
        let before = self.viewer.scene.times.secs;
        let tick = self.viewer.tick(dt);
        let after = self.viewer.scene.times.secs;
        let Some(gfx) = self.gfx.as_mut() else {
            return;
        };

        // 3. The camera.
        let (w, h) = (gfx.config.width as f32, gfx.config.height as f32);
        let free_width = (w - self.panel_width).max(w * 0.3);
        if let Some(bounds) = self.viewer.body_bounds() {
            let centre = (bounds.0 + bounds.1) * 0.5;
            if self.viewer.frame_requested {
                self.viewer.camera.frame(bounds, free_width / h);
                // Centre the character in the part of the window the panel leaves free.
                self.viewer.camera.pan(-self.panel_width * 0.5, 0.0, h);
                self.viewer.frame_requested = false;
            } else if self.viewer.settings.follow {
                self.viewer.camera.follow(centre, dt);
            }
        }

        // 4. The panel.
        let raw = gfx.egui_state.take_egui_input(&gfx.window);
        let mut actions = Vec::new();
        let mut panel_points = 0.0;
        let viewer = &self.viewer;
        let panel_state = &mut self.panel;
        let output = gfx.egui_ctx.run_ui(raw, |ui| {
            panel_points = panel::show(ui, viewer, panel_state, &mut actions);
        });
        gfx.egui_state
            .handle_platform_output(&gfx.window, output.platform_output);
        let ppp = output.pixels_per_point;
        self.panel_width = panel_points * ppp;
        let paint_jobs = gfx.egui_ctx.tessellate(output.shapes, ppp);
        self.pending.extend(actions);

        // 5. Draw. egui's texture changes are applied (and its freed textures released after
        // the frame) whether or not the surface gives us a texture this time.
        let mut textures = output.textures_delta;
        for (id, deltas) in textures.set.drain() {
            for delta in deltas.iter() {
                gfx.egui_renderer
                    .update_texture(&gfx.ctx.device, &gfx.ctx.queue, id, delta);
            }
        }
        let free: Vec<egui::TextureId> = textures.free.drain().collect();
        let release = |r: &mut egui_wgpu::Renderer| {
            for id in &free {
                r.free_texture(id);
            }
        };
        let draw_start = Instant::now();
        let texture = match gfx.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(t)
            | wgpu::CurrentSurfaceTexture::Suboptimal(t) => t,
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                gfx.surface.configure(&gfx.ctx.device, &gfx.config);
                release(&mut gfx.egui_renderer);
                return;
            }
            wgpu::CurrentSurfaceTexture::Timeout | wgpu::CurrentSurfaceTexture::Occluded => {
                release(&mut gfx.egui_renderer);
                return;
            }
            wgpu::CurrentSurfaceTexture::Validation => {
                let e = ViewError::Gpu("the surface texture failed validation".into());
                self.fail(event_loop, e);
                return;
            }
        };
        let screen = egui_wgpu::ScreenDescriptor {
            size_in_pixels: [gfx.config.width, gfx.config.height],
            pixels_per_point: ppp,
        };
        let shot_now = self.opts.screenshot.is_some() && frame == self.opts.after_frames;
        let view = texture.texture.create_view(&Default::default());
        let mut encoder = gfx
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("viewer frame"),
            });
        if let Err(e) = encode_frame(gfx, &mut encoder, &view, &self.viewer, &paint_jobs, &screen) {
            self.viewer
                .message(Level::Error, format!("drawing failed: {e}"));
        }
        let mut shot = None;
        if shot_now {
            let size = (gfx.config.width, gfx.config.height);
            let result = if gfx.copy_src {
                crate::gpu::renderer::read_texture(
                    &gfx.ctx,
                    encoder,
                    &texture.texture,
                    size.0,
                    size.1,
                )
            } else {
                gfx.ctx.queue.submit([encoder.finish()]);
                screenshot_offscreen(gfx, &self.viewer, &paint_jobs, &screen)
            };
            shot = Some(result.map(|img| to_rgba(img, gfx.config.format)));
        } else {
            gfx.ctx.queue.submit([encoder.finish()]);
        }
        gfx.window.pre_present_notify();
        gfx.ctx.queue.present(texture);
        release(&mut gfx.egui_renderer);
        let draw_s = draw_start.elapsed().as_secs_f64();

        // 6. Stats.
        let st = &mut self.stats;
        st.frames += 1;
        for k in 0..5 {
            st.stage[k] += after[k] - before[k];
        }
        st.draw += draw_s;
        st.sim_s += tick.sim_seconds as f64;
        st.wanted_s += if self.viewer.settings.playing {
            (dt * self.viewer.settings.speed) as f64
        } else {
            0.0
        };
        st.lagging |= tick.lagging;
        self.report.frames = frame;
        self.report.seconds = (now - *self.first.get_or_insert(now)).as_secs_f64();
        self.report.sim_seconds += (0..5).map(|k| after[k] - before[k]).sum::<f64>();
        self.report.draw_seconds += draw_s;
        self.report.lagging_frames += tick.lagging as u32;
        self.report.particles = self.viewer.scene.particle_count();
        self.report.size = (gfx.config.width, gfx.config.height);
        let since = *st.since.get_or_insert(now);
        let window_s = (now - since).as_secs_f64();
        if window_s >= 0.5 || self.panel.stats.is_empty() {
            let n = st.frames.max(1) as f64;
            let ms = |s: f64| s * 1e3 / n;
            let rate = if st.wanted_s > 0.0 {
                st.sim_s / st.wanted_s
            } else {
                1.0
            };
            let sim = if !self.viewer.settings.playing {
                "paused".to_string()
            } else if self.opts.fixed_step {
                "fixed 1/60 s per frame".to_string()
            } else if st.lagging || rate < 0.97 {
                format!("sim slower than real time ({rate:.2}×; coarser particle spacing helps)")
            } else {
                "sim real time".to_string()
            };
            self.panel.stats = format!(
                "{:.1} fps | pose {:.1} · skin {:.1} · proxies {:.1} · cloth {:.1} · draw {:.1} ms | {} particles | {} | {}",
                if window_s > 0.0 { n / window_s } else { 0.0 },
                ms(st.stage[0]),
                ms(st.stage[1]),
                ms(st.stage[2] + st.stage[3]),
                ms(st.stage[4]),
                ms(st.draw),
                self.viewer.scene.particle_count(),
                self.viewer.settings.method.name().to_uppercase(),
                sim,
            );
            *st = Stats {
                since: Some(now),
                ..Default::default()
            };
        }

        // 7. Screenshot and scripted exits.
        if let Some(result) = shot {
            let path = self.opts.screenshot.clone().unwrap_or_default();
            let written = result
                .map_err(|e| ViewError::Screenshot(e.to_string()))
                .and_then(|img| {
                    crate::output::save_image(&img, &path)
                        .map_err(|e| ViewError::Screenshot(format!("{}: {e}", path.display())))
                });
            let written = written.and_then(|()| self.write_sidecar(&path));
            match written {
                Ok(()) => {
                    eprintln!("drape view: wrote {}", path.display());
                    event_loop.exit();
                }
                Err(e) => self.fail(event_loop, e),
            }
            return;
        }
        if self.opts.quit_after.is_some_and(|n| frame >= n) {
            event_loop.exit();
        }
    }
}

/// Records the 3D frame and the panel into `view`.
fn encode_frame(
    gfx: &mut Gfx,
    encoder: &mut wgpu::CommandEncoder,
    view: &wgpu::TextureView,
    viewer: &Viewer,
    paint_jobs: &[egui::ClippedPrimitive],
    screen: &egui_wgpu::ScreenDescriptor,
) -> Result<(), crate::gpu::GpuError> {
    gfx.scene.encode(&gfx.ctx, encoder, view, viewer)?;
    let extra = gfx.egui_renderer.update_buffers(
        &gfx.ctx.device,
        &gfx.ctx.queue,
        encoder,
        paint_jobs,
        screen,
    );
    if !extra.is_empty() {
        gfx.ctx.queue.submit(extra);
    }
    let pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some("egui pass"),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view,
            resolve_target: None,
            depth_slice: None,
            ops: wgpu::Operations {
                load: wgpu::LoadOp::Load,
                store: wgpu::StoreOp::Store,
            },
        })],
        depth_stencil_attachment: None,
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    });
    let mut pass = pass.forget_lifetime();
    gfx.egui_renderer.render(&mut pass, paint_jobs, screen);
    Ok(())
}

/// The same frame drawn again into an offscreen texture of the surface's format and read back
/// (for surfaces that cannot be copied from).
fn screenshot_offscreen(
    gfx: &mut Gfx,
    viewer: &Viewer,
    paint_jobs: &[egui::ClippedPrimitive],
    screen: &egui_wgpu::ScreenDescriptor,
) -> Result<image::RgbaImage, crate::gpu::GpuError> {
    let (w, h) = (gfx.config.width, gfx.config.height);
    let texture = gfx.ctx.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("screenshot target"),
        size: wgpu::Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: gfx.config.format,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let view = texture.create_view(&Default::default());
    let mut encoder = gfx
        .ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("screenshot frame"),
        });
    encode_frame(gfx, &mut encoder, &view, viewer, paint_jobs, screen)?;
    crate::gpu::renderer::read_texture(&gfx.ctx, encoder, &texture, w, h)
}

/// Bytes read from a BGRA texture reordered to RGBA.
fn to_rgba(mut img: image::RgbaImage, format: wgpu::TextureFormat) -> image::RgbaImage {
    if matches!(
        format,
        wgpu::TextureFormat::Bgra8Unorm | wgpu::TextureFormat::Bgra8UnormSrgb
    ) {
        for p in img.pixels_mut() {
            p.0.swap(0, 2);
        }
    }
    // The window's alpha means nothing in a picture.
    for p in img.pixels_mut() {
        p.0[3] = 255;
    }
    img
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.gfx.is_some() {
            return;
        }
        match self.init(event_loop) {
            Ok(g) => {
                g.window.request_redraw();
                self.gfx = Some(g);
            }
            Err(e) => self.fail(event_loop, e),
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(gfx) = self.gfx.as_mut() else {
            return;
        };
        let response = gfx.egui_state.on_window_event(&gfx.window, &event);
        let over_egui = gfx.egui_ctx.is_pointer_over_egui();
        match event {
            WindowEvent::CloseRequested => {
                self.save_settings();
                event_loop.exit();
            }
            // A minimised window has size 0: keep the last configuration until it returns.
            WindowEvent::Resized(size) if size.width > 0 && size.height > 0 => {
                gfx.config.width = size.width;
                gfx.config.height = size.height;
                gfx.surface.configure(&gfx.ctx.device, &gfx.config);
                gfx.window.request_redraw();
            }
            WindowEvent::DroppedFile(path) => {
                self.pending.push(Action::LoadCharacter(path));
            }
            WindowEvent::KeyboardInput { event, .. }
                if !response.consumed
                    && event.state == ElementState::Pressed
                    && !gfx.egui_ctx.egui_wants_keyboard_input() =>
            {
                self.shortcut(&event.logical_key);
            }
            WindowEvent::MouseInput { state, button, .. } => match state {
                ElementState::Pressed if !response.consumed && !over_egui => {
                    self.drag = Some(button);
                }
                ElementState::Released => self.drag = None,
                _ => {}
            },
            WindowEvent::CursorMoved { position, .. } => {
                let p = (position.x, position.y);
                if let (Some(button), Some(last)) = (self.drag, self.cursor) {
                    let (dx, dy) = ((p.0 - last.0) as f32, (p.1 - last.1) as f32);
                    let h = gfx.config.height as f32;
                    self.pending.push(match button {
                        MouseButton::Left => Action::Orbit(dx, dy),
                        _ => Action::Pan(dx, dy, h),
                    });
                }
                self.cursor = Some(p);
            }
            WindowEvent::MouseWheel { delta, .. } if !response.consumed && !over_egui => {
                let notches = match delta {
                    MouseScrollDelta::LineDelta(_, y) => y,
                    MouseScrollDelta::PixelDelta(p) => (p.y / 40.0) as f32,
                };
                self.pending.push(Action::Zoom(notches));
            }
            WindowEvent::RedrawRequested => self.redraw(event_loop),
            _ => {}
        }
    }

    fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(g) = &self.gfx {
            g.window.request_redraw();
        }
    }

    fn exiting(&mut self, _event_loop: &ActiveEventLoop) {
        if self.error.is_none() {
            self.save_settings();
        }
    }
}
