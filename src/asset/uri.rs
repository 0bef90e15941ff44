//! Buffer and image URIs: `data:` URIs (RFC 2397, base64 only, as glTF writers emit) and relative
//! file references (RFC 3986 relative references, percent-encoded), with the check that a file
//! reference stays inside the glTF file's folder.

use std::path::{Component, Path, PathBuf};

use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;

/// What a URI refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UriKind<'a> {
    /// `data:[mime][;base64],payload`: the media type and the still-encoded payload.
    Data {
        mime: &'a str,
        base64: bool,
        payload: &'a str,
    },
    /// A relative reference, percent-decoded into a relative path.
    Relative(PathBuf),
}

/// Classifies a URI. A URI that leaves the folder (absolute, with a scheme, a drive letter, or
/// `..` segments, whether written plainly or percent-encoded) is returned as
/// `Err(reason)` — unless `allow_outside` is set, in which case absolute paths and `..` come back
/// as [`UriKind::Relative`] paths (joining an absolute path replaces the base).
pub fn classify(uri: &str, allow_outside: bool) -> Result<UriKind<'_>, String> {
    if let Some(rest) = strip_prefix_ignore_case(uri, "data:") {
        let Some((meta, payload)) = rest.split_once(',') else {
            return Err("data URI without a ',' separating the media type from the data".into());
        };
        let (mime, base64) = match meta.strip_suffix(";base64") {
            Some(m) => (m, true),
            None => (meta, false),
        };
        return Ok(UriKind::Data {
            mime,
            base64,
            payload,
        });
    }
    // A scheme is ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) followed by ':' (RFC 3986 §3.1).
    // One letter followed by ':' is a Windows drive, which is just as absolute.
    if let Some(colon) = uri.find(':') {
        let scheme = &uri[..colon];
        let is_scheme = !scheme.is_empty()
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
        if is_scheme {
            if scheme.eq_ignore_ascii_case("file") && allow_outside {
                let path = percent_decode(uri[colon + 1..].trim_start_matches("//"))?;
                return Ok(UriKind::Relative(PathBuf::from(path)));
            }
            if scheme.len() == 1 && allow_outside {
                return Ok(UriKind::Relative(PathBuf::from(percent_decode(uri)?)));
            }
            return Err(if scheme.len() == 1 {
                "an absolute Windows path".into()
            } else {
                format!("the {scheme}: scheme is not a file next to the glTF file")
            });
        }
    }
    let decoded = percent_decode(uri)?;
    if decoded.is_empty() {
        return Err("empty URI".into());
    }
    if decoded.contains('\0') {
        return Err("a NUL byte in the path".into());
    }
    // Backslashes are separators on Windows; treat them as such everywhere so that `..\x` is
    // caught on every platform.
    let normalised = decoded.replace('\\', "/");
    if !allow_outside {
        if normalised.starts_with('/') {
            return Err("an absolute path".into());
        }
        if normalised.split('/').any(|seg| seg == "..") {
            return Err("a '..' segment leaves the file's folder".into());
        }
    }
    let path = PathBuf::from(&normalised);
    if !allow_outside
        && path
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err("a path that is not relative to the file's folder".into());
    }
    Ok(UriKind::Relative(path))
}

/// Resolves a relative path against `base_dir` and, unless `allow_outside`, checks that the
/// file really lies inside `base_dir` once symbolic links are followed.
pub fn resolve(base_dir: &Path, rel: &Path, allow_outside: bool) -> Result<PathBuf, String> {
    let full = base_dir.join(rel);
    if allow_outside {
        return Ok(full);
    }
    // Both canonicalize calls touch the file system; a missing file is reported by the caller
    // when it tries to read it, so only check containment when both resolve.
    if let (Ok(base), Ok(target)) = (base_dir.canonicalize(), full.canonicalize()) {
        if !target.starts_with(&base) {
            return Err(format!(
                "it resolves to {} outside {} (through a symbolic link)",
                target.display(),
                base.display()
            ));
        }
    }
    Ok(full)
}

/// Decodes `%XX` escapes (RFC 3986 §2.1). Invalid escapes and non-UTF-8 results are errors.
pub fn percent_decode(s: &str) -> Result<String, String> {
    if !s.contains('%') {
        return Ok(s.to_string());
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3).ok_or("a truncated %-escape")?;
            let v = std::str::from_utf8(hex)
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or("an invalid %-escape")?;
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "a %-escape that is not UTF-8".to_string())
}

/// The number of bytes a base64 payload of this length decodes to at most.
pub fn base64_decoded_len_bound(encoded_len: usize) -> u64 {
    (encoded_len as u64).div_ceil(4) * 3
}

/// Decodes a base64 payload (standard alphabet, padding optional).
pub fn decode_base64(payload: &str) -> Result<Vec<u8>, String> {
    const ENGINE: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    ENGINE
        .decode(payload.trim_end())
        .map_err(|e| format!("invalid base64 data: {e}"))
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_accepted() {
        assert_eq!(
            classify("Fox.bin", false),
            Ok(UriKind::Relative("Fox.bin".into()))
        );
        assert_eq!(
            classify("tex/a%20b.png", false),
            Ok(UriKind::Relative("tex/a b.png".into()))
        );
        assert!(classify("./a/../b.bin", false).is_err());
    }

    #[test]
    fn escapes_are_refused() {
        for uri in [
            "../secret.bin",
            "a/../../secret.bin",
            "%2e%2e/secret.bin",
            "%2E%2E%2Fsecret.bin",
            "..%5Csecret.bin",
            "..\\secret.bin",
            "/etc/passwd",
            "%2Fetc%2Fpasswd",
            "C:/Windows/win.ini",
            "c:\\x.bin",
            "file:///etc/passwd",
            "http://example.com/x.bin",
            "\\\\server\\share\\x.bin",
        ] {
            assert!(classify(uri, false).is_err(), "{uri} must be refused");
        }
        assert!(classify("../x.bin", true).is_ok());
        assert!(classify("/abs/x.bin", true).is_ok());
    }

    #[test]
    fn data_uris() {
        let k = classify("data:application/octet-stream;base64,AAEC", false).unwrap();
        let UriKind::Data {
            mime,
            base64,
            payload,
        } = k
        else {
            panic!()
        };
        assert_eq!((mime, base64), ("application/octet-stream", true));
        assert_eq!(decode_base64(payload).unwrap(), vec![0, 1, 2]);
        assert_eq!(decode_base64("AAE").unwrap(), vec![0, 1]);
        assert!(decode_base64("A!==").is_err());
        assert!(classify("data:nocomma", false).is_err());
    }
}
