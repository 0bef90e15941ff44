//! Nothing half-written: the `drape` binary, killed or interrupted (Ctrl-C) in the middle of a
//! run that was told to overwrite (`--force`), leaves the previous output whole, says what it
//! wrote, and shows progress as plain lines when stderr is not a terminal.

#![cfg(unix)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("drape_interrupted_{name}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn files_in(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args(["-s", sig, &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -s {sig} {pid}");
}

#[test]
fn a_forced_bake_killed_half_way_leaves_the_old_file_whole() {
    let dir = temp_dir("bake");
    let out = dir.join("baked.glb");
    let old = b"the previous bake, which must survive".to_vec();
    for sig in ["INT", "KILL"] {
        std::fs::write(&out, &old).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_drape"))
            .args([
                "bake",
                "--force",
                "--seconds",
                "60",
                "--every",
                "1",
                "--out",
            ])
            .arg(&out)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = BufReader::new(child.stderr.take().unwrap());
        // Wait until it simulates: stderr is a pipe, so progress comes as plain lines.
        let mut seen = String::new();
        loop {
            let mut line = String::new();
            if err.read_line(&mut line).unwrap() == 0 {
                panic!("drape bake ended before simulating:\n{seen}");
            }
            seen += &line;
            if line.starts_with("baking: ") && line.contains(" frames (") {
                break;
            }
        }
        assert!(seen.contains("estimated"), "{seen}");
        signal(child.id(), sig);
        let mut rest = String::new();
        err.read_to_string(&mut rest).unwrap();
        let status = child.wait().unwrap();
        assert!(!status.success());
        if sig == "INT" {
            // Ctrl-C: stops between frames and says what (not) was written.
            assert_eq!(status.code(), Some(130), "{rest}");
            assert!(rest.contains("interrupted (Ctrl-C) after"), "{rest}");
            assert!(
                rest.contains(&format!("{} is unchanged", out.display())),
                "{rest}"
            );
        }
        assert_eq!(std::fs::read(&out).unwrap(), old, "after SIG{sig}");
        assert_eq!(files_in(&dir), ["baked.glb"], "after SIG{sig}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Runs `drape ARGS --out DIR`, sends Ctrl-C (SIGINT) after 1.5 s, and returns its exit status
/// and what it said on stderr.
fn run_and_interrupt(args: &[&str], dir: &Path) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_drape"))
        .args(args)
        .arg("--out")
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    signal(child.id(), "INT");
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap(), err)
}

#[test]
fn an_interrupted_experiment_says_nothing_was_written() {
    let dir = temp_dir("experiment");
    let (status, err) = run_and_interrupt(&["experiment", "wet-fig7"], &dir);
    if status.success() {
        // It finished within the wait on a fast machine: nothing to check.
        return;
    }
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted (Ctrl-C); nothing was written to"),
        "{err}"
    );
    assert!(files_in(&dir).is_empty(), "{:?}", files_in(&dir));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_interrupted_scene_keeps_the_previous_run_whole() {
    let dir = temp_dir("scene");
    let old = b"frame,time_s\n0,0.0\n".to_vec();
    std::fs::write(dir.join("stats.csv"), &old).unwrap();
    let (status, err) = run_and_interrupt(
        &[
            "scene", "drop", "--n", "100", "--frames", "2000", "--force", "--quiet",
        ],
        &dir,
    );
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted (Ctrl-C); nothing was written to"),
        "{err}"
    );
    assert_eq!(files_in(&dir), vec!["stats.csv".to_string()]);
    assert_eq!(std::fs::read(dir.join("stats.csv")).unwrap(), old);
    std::fs::remove_dir_all(&dir).ok();
}
