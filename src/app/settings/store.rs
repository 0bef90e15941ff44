//! Where the settings file lives ([`SettingsStore`]) and how it is read and written: a missing
//! file means defaults, an unreadable one a warning, and writes are atomic (a temporary file
//! in the same folder, then a rename).

use std::path::PathBuf;

use super::ViewerSettings;

/// Where the settings live, or nowhere (`--no-settings`, `DRAPE_NO_SETTINGS=1`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsStore {
    pub path: Option<PathBuf>,
}

impl SettingsStore {
    /// The user's settings file: `$XDG_CONFIG_HOME/drape/viewer.toml`, else
    /// `$HOME/.config/drape/viewer.toml`; none when neither variable is set or
    /// `DRAPE_NO_SETTINGS=1`.
    pub fn user() -> Self {
        if std::env::var("DRAPE_NO_SETTINGS").is_ok_and(|v| v == "1") {
            return Self::none();
        }
        let dir = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| PathBuf::from(h).join(".config"))
            });
        Self {
            path: dir.map(|d| d.join("drape").join("viewer.toml")),
        }
    }

    /// No file: defaults in, nothing out.
    pub fn none() -> Self {
        Self { path: None }
    }

    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self {
            path: Some(path.into()),
        }
    }

    /// Reads the settings: defaults (no warning) when there is no file, defaults plus warnings
    /// for what could not be read.
    pub fn load(&self) -> (ViewerSettings, Vec<String>) {
        let Some(path) = &self.path else {
            return (ViewerSettings::default(), Vec::new());
        };
        match std::fs::read(path) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                let (s, w) = ViewerSettings::from_toml(&text);
                let w = w
                    .into_iter()
                    .map(|m| format!("{}: {m}", path.display()))
                    .collect();
                (s, w)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                (ViewerSettings::default(), Vec::new())
            }
            Err(e) => (
                ViewerSettings::default(),
                vec![format!(
                    "cannot read {}: {e}; using defaults",
                    path.display()
                )],
            ),
        }
    }

    /// Writes the settings atomically (temporary file, then rename), creating the folder.
    /// Does nothing without a path.
    pub fn save(&self, settings: &ViewerSettings) -> Result<(), String> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        crate::output::write_atomic(path, settings.to_toml().as_bytes())
            .map_err(|e| format!("cannot save settings to {}: {e}", path.display()))
    }
}
