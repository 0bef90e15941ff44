//! Every file drape writes goes through here: it is written to a temporary file in the same
//! folder (`.NAME.PID-N.part`) and renamed over the destination only once it is complete and
//! flushed to disk. A run that is interrupted (Ctrl-C, a kill, a full disk, an error) leaves
//! the previous file whole, or no file — never a truncated one. Rename within one folder is
//! atomic on POSIX file systems (rename(2)); on Windows `std::fs::rename` replaces the file too.
//!
//! A kill that gives the process no chance to clean up (SIGKILL, a power cut) can leave the
//! `.part` file behind; it is hidden, named after the destination, and never read by drape. The
//! next write of the same destination removes such leftovers whose process is gone
//! ([`remove_stale_parts`]); a `.part` of a process still running (another drape writing the
//! same file) is left alone.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A file being written to a temporary path, renamed over `dest` by [`AtomicFile::commit`];
/// dropped without a commit, it removes the temporary file and leaves `dest` as it was.
pub struct AtomicFile {
    dest: PathBuf,
    tmp: PathBuf,
    file: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Starts writing `dest` (its folder is created when missing).
    pub fn create(dest: &Path) -> io::Result<AtomicFile> {
        static SERIAL: AtomicU64 = AtomicU64::new(0);
        let dir = dest
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
        let tmp = dir.join(format!(
            ".{name}.{}-{}.part",
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::Relaxed)
        ));
        remove_stale_parts(dir, &name);
        let file = File::create(&tmp)?;
        Ok(AtomicFile {
            dest: dest.to_path_buf(),
            tmp,
            file: Some(BufWriter::new(file)),
        })
    }

    /// Where the file goes.
    pub fn path(&self) -> &Path {
        &self.dest
    }

    /// Flushes, syncs and renames the file into place.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.take().expect("not yet committed");
        let file = file.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&self.tmp, &self.dest)
        // On failure, Drop removes the temporary file.
    }

    fn inner(&mut self) -> &mut BufWriter<File> {
        self.file.as_mut().expect("not yet committed")
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner().write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.inner().write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner().flush()
    }
}

impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner().seek(pos)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Removed whether or not the rename happened (after it, there is nothing to remove).
        self.file.take();
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// Removes `.NAME.PID-N.part` files in `dir` left by killed runs writing `name`: those whose
/// process no longer exists. Only files of exactly that pattern are touched; errors are
/// ignored (a leftover is harmless, only untidy).
pub fn remove_stale_parts(dir: &Path, name: &str) {
    let prefix = format!(".{name}.");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(file) = file.to_str() else {
            continue;
        };
        let Some(rest) = file
            .strip_prefix(&prefix)
            .and_then(|r| r.strip_suffix(".part"))
        else {
            continue;
        };
        let Some((pid, serial)) = rest.split_once('-') else {
            continue;
        };
        let (Ok(pid), Ok(_)) = (pid.parse::<u32>(), serial.parse::<u64>()) else {
            continue;
        };
        if !process_alive(pid) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Whether a process with this id exists (when that cannot be told: assume it does).
fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return true;
        };
        // SAFETY: signal 0 only checks that the process exists and may be signalled.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        true
    }
}

/// Writes `bytes` to `dest` atomically.
pub fn write_atomic(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    write_with(dest, |f| f.write_all(bytes))
}

/// Writes `dest` atomically with `write` (which gets a buffered, seekable file): `dest` is
/// replaced only when `write` succeeds.
pub fn write_with<E: From<io::Error>>(
    dest: &Path,
    write: impl FnOnce(&mut AtomicFile) -> Result<(), E>,
) -> Result<(), E> {
    let mut f = AtomicFile::create(dest)?;
    write(&mut f)?;
    f.commit()?;
    Ok(())
}

/// Saves an image atomically, in the format its extension names (as `image::save` would).
pub fn save_image<I: ImageWrite>(img: &I, dest: &Path) -> image::ImageResult<()> {
    let format = image::ImageFormat::from_path(dest)?;
    write_with(dest, |f| img.write_image(f, format))
}

/// Images [`save_image`] can write: `image`'s buffers and `DynamicImage`.
pub trait ImageWrite {
    fn write_image(&self, w: &mut AtomicFile, format: image::ImageFormat)
        -> image::ImageResult<()>;
}

impl<P, C> ImageWrite for image::ImageBuffer<P, C>
where
    P: image::PixelWithColorType,
    [P::Subpixel]: image::EncodableLayout,
    C: std::ops::Deref<Target = [P::Subpixel]>,
{
    fn write_image(
        &self,
        w: &mut AtomicFile,
        format: image::ImageFormat,
    ) -> image::ImageResult<()> {
        self.write_to(w, format)
    }
}

impl ImageWrite for image::DynamicImage {
    fn write_image(
        &self,
        w: &mut AtomicFile,
        format: image::ImageFormat,
    ) -> image::ImageResult<()> {
        self.write_to(w, format)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("drape_output_{name}_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn entries(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_failed_or_abandoned_write_leaves_the_old_file_whole() {
        let d = dir("abandon");
        let p = d.join("out.bin");
        std::fs::write(&p, "old contents").unwrap();
        // An error half-way.
        let r: io::Result<()> = write_with(&p, |f| {
            f.write_all(b"new, half")?;
            Err(io::Error::other("disk full"))
        });
        assert!(r.is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old contents");
        // Abandoned (dropped without commit).
        {
            let mut f = AtomicFile::create(&p).unwrap();
            f.write_all(b"new").unwrap();
        }
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old contents");
        assert_eq!(entries(&d), ["out.bin"], "no temporary file left");
        // Committed.
        write_atomic(&p, b"new contents").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new contents");
        assert_eq!(entries(&d), ["out.bin"]);
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn leftovers_of_killed_runs_are_removed_by_the_next_write() {
        let d = dir("stale");
        let p = d.join("out.glb");
        // A pid that cannot be running: above the kernel's pid_max (at most 2^22).
        let dead = d.join(".out.glb.4999999-0.part");
        let alive = d.join(format!(".out.glb.{}-77.part", std::process::id()));
        let other = d.join(".other.glb.4999999-0.part");
        let unrelated = d.join(".out.glb.notes.part");
        for f in [&dead, &alive, &other, &unrelated] {
            std::fs::write(f, "left over").unwrap();
        }
        write_atomic(&p, b"new").unwrap();
        assert_eq!(
            entries(&d),
            [
                ".other.glb.4999999-0.part".to_string(),
                format!(".out.glb.{}-77.part", std::process::id()),
                ".out.glb.notes.part".to_string(),
                "out.glb".to_string(),
            ]
        );
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn images_are_saved_in_the_format_of_their_extension() {
        let d = dir("image");
        let img = image::RgbImage::from_pixel(4, 3, image::Rgb([10, 20, 30]));
        let p = d.join("sub/x.png");
        save_image(&img, &p).unwrap();
        let back = image::open(&p).unwrap().to_rgb8();
        assert_eq!(back, img);
        assert!(save_image(&img, &d.join("x.unknown")).is_err());
        assert_eq!(entries(&d.join("sub")), ["x.png"]);
        std::fs::remove_dir_all(&d).ok();
    }
}
