//! The wgpu instance, adapter, device and queue, created headless (offscreen rendering, tests,
//! `drape render`) or for a window surface (the viewer).

use std::fmt;

/// Everything that can go wrong on the GPU side, phrased for the user.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No adapter at all: no Vulkan/GL driver (install `mesa-vulkan-drivers libvulkan1` for a
    /// software one) or none compatible with the surface.
    #[error("no GPU adapter found ({0}); on Linux without a GPU install mesa-vulkan-drivers")]
    NoAdapter(String),
    #[error("the GPU adapter refused to create a device: {0}")]
    RequestDevice(String),
    #[error("reading back from the GPU failed: {0}")]
    Readback(String),
    #[error("invalid input for the GPU: {0}")]
    InvalidInput(String),
}

/// Which adapter we got, for logs and for the user (`drape` prints it at start).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterSummary {
    /// Driver's name for the device, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)" for lavapipe.
    pub name: String,
    pub backend: wgpu::Backend,
    /// `Cpu` for software rasterisers (lavapipe, llvmpipe), `DiscreteGpu`, `IntegratedGpu`, …
    pub device_type: wgpu::DeviceType,
    pub driver: String,
}

impl AdapterSummary {
    /// True for a software rasteriser: images then still match a real GPU's within the golden
    /// tolerance, but frame times mean little.
    pub fn is_software(&self) -> bool {
        self.device_type == wgpu::DeviceType::Cpu
    }
}

impl fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({:?}, {:?}",
            self.name, self.backend, self.device_type
        )?;
        if !self.driver.is_empty() {
            write!(f, ", {}", self.driver)?;
        }
        write!(f, ")")
    }
}

/// The device and queue everything else is created from. Cheap to share by reference; the
/// renderer and the skinning pass take `&GpuContext`.
pub struct GpuContext {
    pub instance: wgpu::Instance,
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub summary: AdapterSummary,
}

impl GpuContext {
    /// A context for offscreen work: no window, no display handle. wgpu's instance
    /// environment variables apply, e.g. `WGPU_BACKEND=gl` forces OpenGL (llvmpipe where
    /// Vulkan is missing or broken).
    pub fn headless() -> Result<Self, GpuError> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        pollster::block_on(Self::from_instance(instance, None))
    }

    /// A context whose adapter can present to `surface` (created by the caller from `instance`,
    /// e.g. with `instance.create_surface(window)` in the winit viewer).
    pub async fn from_instance(
        instance: wgpu::Instance,
        compatible_surface: Option<&wgpu::Surface<'_>>,
    ) -> Result<Self, GpuError> {
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: false,
                compatible_surface,
                apply_limit_buckets: false,
            })
            .await
            .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
        let info = adapter.get_info();
        let summary = AdapterSummary {
            name: info.name.clone(),
            backend: info.backend,
            device_type: info.device_type,
            driver: format!("{} {}", info.driver, info.driver_info)
                .trim()
                .to_string(),
        };
        // The shader suite stays within WebGPU's default limits, so any adapter that exists can
        // run it; ask for the adapter's own limits only where they are larger (storage buffer
        // size for big meshes).
        let mut limits = wgpu::Limits::downlevel_defaults();
        let adapter_limits = adapter.limits();
        limits.max_storage_buffer_binding_size = adapter_limits.max_storage_buffer_binding_size;
        limits.max_buffer_size = adapter_limits.max_buffer_size;
        limits.max_texture_dimension_2d = adapter_limits.max_texture_dimension_2d;
        limits.max_compute_workgroups_per_dimension =
            adapter_limits.max_compute_workgroups_per_dimension;
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("drape device"),
                required_limits: limits,
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::RequestDevice(e.to_string()))?;
        Ok(Self {
            instance,
            adapter,
            device,
            queue,
            summary,
        })
    }

    /// Blocks until all submitted work has finished.
    pub fn wait_idle(&self) -> Result<(), GpuError> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| GpuError::Readback(e.to_string()))
    }

    /// Copies `size` bytes of `buffer` (which must have `COPY_SRC`) back to the CPU. Slow (a
    /// full GPU sync): for tests, screenshots and tools, never per frame in the viewer.
    pub fn read_buffer(&self, buffer: &wgpu::Buffer, size: u64) -> Result<Vec<u8>, GpuError> {
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("drape readback staging"),
            size,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("drape readback"),
            });
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, size);
        self.queue.submit([encoder.finish()]);
        self.map_and_read(&staging)
    }

    /// Maps a `MAP_READ` buffer, waits, and copies its contents out.
    pub(crate) fn map_and_read(&self, staging: &wgpu::Buffer) -> Result<Vec<u8>, GpuError> {
        let (tx, rx) = std::sync::mpsc::channel();
        staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.wait_idle()?;
        rx.recv()
            .map_err(|e| GpuError::Readback(e.to_string()))?
            .map_err(|e| GpuError::Readback(e.to_string()))?;
        let bytes = {
            let view = staging
                .slice(..)
                .get_mapped_range()
                .map_err(|e| GpuError::Readback(e.to_string()))?;
            view.to_vec()
        };
        staging.unmap();
        Ok(bytes)
    }
}

/// For GPU tests: a headless context, or `None` (after printing why) when the machine has no
/// adapter. With `DRAPE_REQUIRE_GPU=1` (set in CI) a missing adapter panics instead, so a broken
/// driver install cannot silently skip every GPU test.
pub fn headless_for_tests(test: &str) -> Option<GpuContext> {
    match GpuContext::headless() {
        Ok(ctx) => Some(ctx),
        Err(e) => {
            let required = std::env::var("DRAPE_REQUIRE_GPU")
                .map(|v| v == "1")
                .unwrap_or(false);
            if required {
                panic!("{test}: DRAPE_REQUIRE_GPU=1 but {e}");
            }
            eprintln!("{test}: SKIPPED, {e}");
            None
        }
    }
}
