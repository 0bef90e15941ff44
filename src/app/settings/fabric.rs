//! The viewer's fabric knobs: dry-fabric presets for every garment at once ([`FabricPreset`])
//! and the single fabric parameters the panel's sliders edit ([`FabricParam`]), with their
//! ranges.

use crate::cloth::GarmentParams;
use crate::garments::GarmentKind;

/// A dry-fabric preset for every garment at once. `Garment` keeps each garment's own fabric
/// ([`GarmentKind::fabric`]); the others replace it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FabricPreset {
    #[default]
    Garment,
    Silk,
    Cotton,
    Wool,
    Denim,
}

impl FabricPreset {
    pub const ALL: [FabricPreset; 5] = [
        FabricPreset::Garment,
        FabricPreset::Silk,
        FabricPreset::Cotton,
        FabricPreset::Wool,
        FabricPreset::Denim,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FabricPreset::Garment => "per garment",
            FabricPreset::Silk => "silk",
            FabricPreset::Cotton => "cotton",
            FabricPreset::Wool => "wool",
            FabricPreset::Denim => "denim",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        let s = s.trim().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|p| p.name() == s || (s == "garment" && *p == FabricPreset::Garment))
    }

    /// The fabric of `kind` under this preset. Areal densities are typical fabric weights (silk
    /// habotai ~80 g/m², cotton shirting ~150 g/m², wool suiting ~300 g/m², denim ~400 g/m²);
    /// stiffnesses (N/m per spring), damping ratios, thicknesses (m) and friction coefficients
    /// are **chosen** to rank the fabrics from limp to stiff within the ranges
    /// [`GarmentParams`] documents (the engine softens what the substep cannot carry).
    pub fn fabric(self, kind: GarmentKind) -> GarmentParams {
        let p =
            |k_structural, k_shear, k_bend, area_density, damping_ratio, thickness, friction| {
                GarmentParams {
                    k_structural,
                    k_shear,
                    k_bend,
                    area_density,
                    damping_ratio,
                    thickness,
                    friction,
                }
            };
        match self {
            FabricPreset::Garment => kind.fabric(),
            FabricPreset::Silk => p(40.0, 25.0, 1.5, 0.08, 0.1, 0.002, 0.3),
            FabricPreset::Cotton => p(50.0, 35.0, 4.0, 0.15, 0.15, 0.002, 0.5),
            FabricPreset::Wool => p(70.0, 45.0, 8.0, 0.3, 0.15, 0.003, 0.6),
            FabricPreset::Denim => p(100.0, 70.0, 15.0, 0.4, 0.2, 0.003, 0.6),
        }
    }
}

/// One fabric parameter of [`GarmentParams`], for [`crate::app::Action::SetFabric`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FabricParam {
    /// N/m per spring, 0 … 1e7.
    KStructural,
    /// N/m per spring, 0 … 1e7.
    KShear,
    /// N/m per spring, 0 … 1e7.
    KBend,
    /// kg/m², 0.01 … 10.
    AreaDensity,
    /// Dimensionless, 0 … 1.
    Damping,
    /// m, 1e-4 … 0.05.
    Thickness,
    /// Dimensionless, 0 … 2.
    Friction,
}

impl FabricParam {
    pub const ALL: [FabricParam; 7] = [
        FabricParam::KStructural,
        FabricParam::KShear,
        FabricParam::KBend,
        FabricParam::AreaDensity,
        FabricParam::Damping,
        FabricParam::Thickness,
        FabricParam::Friction,
    ];

    /// Name for the command line (`fabric.cape.k_bend=3`) and the settings file.
    pub fn key(self) -> &'static str {
        match self {
            FabricParam::KStructural => "k_structural",
            FabricParam::KShear => "k_shear",
            FabricParam::KBend => "k_bend",
            FabricParam::AreaDensity => "area_density",
            FabricParam::Damping => "damping",
            FabricParam::Thickness => "thickness",
            FabricParam::Friction => "friction",
        }
    }

    /// Label with the unit, for the panel.
    pub fn label(self) -> &'static str {
        match self {
            FabricParam::KStructural => "k structural (N/m)",
            FabricParam::KShear => "k shear (N/m)",
            FabricParam::KBend => "k bend (N/m)",
            FabricParam::AreaDensity => "density (kg/m²)",
            FabricParam::Damping => "damping ratio ζ",
            FabricParam::Thickness => "thickness (m)",
            FabricParam::Friction => "friction μ",
        }
    }

    /// The parameter's entry in the one table of allowed values ([`crate::limits`]), shared
    /// with scene files.
    pub fn limit(self) -> &'static crate::limits::Limit {
        use crate::limits as l;
        match self {
            FabricParam::KStructural => &l::K_STRUCTURAL,
            FabricParam::KShear => &l::K_SHEAR,
            FabricParam::KBend => &l::K_BEND,
            FabricParam::AreaDensity => &l::AREA_DENSITY,
            FabricParam::Damping => &l::DAMPING,
            FabricParam::Thickness => &l::THICKNESS,
            FabricParam::Friction => &l::FRICTION,
        }
    }

    /// The UI's slider range (within the documented range of the field; the engine's full
    /// range is wider, e.g. stiffness up to 1e7, which the sliders do not need).
    pub fn range(self) -> (f32, f32) {
        self.limit().slider_f32()
    }

    /// The field's full documented range (what a settings file or `--action` may set).
    pub fn limits(self) -> (f32, f32) {
        self.limit().f32()
    }

    pub fn from_key(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.key() == s)
    }

    pub fn get(self, f: &GarmentParams) -> f32 {
        match self {
            FabricParam::KStructural => f.k_structural,
            FabricParam::KShear => f.k_shear,
            FabricParam::KBend => f.k_bend,
            FabricParam::AreaDensity => f.area_density,
            FabricParam::Damping => f.damping_ratio,
            FabricParam::Thickness => f.thickness,
            FabricParam::Friction => f.friction,
        }
    }

    /// Sets the field when `value` lies within [`FabricParam::limits`]; refuses it otherwise
    /// (the error names the parameter, the value and the range), leaving the field as it was.
    pub fn set(self, f: &mut GarmentParams, value: f32) -> Result<(), String> {
        let v = self.limit().check_f32(self.key(), value)?;
        match self {
            FabricParam::KStructural => f.k_structural = v,
            FabricParam::KShear => f.k_shear = v,
            FabricParam::KBend => f.k_bend = v,
            FabricParam::AreaDensity => f.area_density = v,
            FabricParam::Damping => f.damping_ratio = v,
            FabricParam::Thickness => f.thickness = v,
            FabricParam::Friction => f.friction = v,
        }
        Ok(())
    }
}
