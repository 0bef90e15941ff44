//! Every key of a scene file: a good value is taken as written, a bad one (out of range,
//! non-finite, wrong type) is an error naming the file, the key, the value and the allowed
//! range, before anything is built. Table-driven over `drape::limits::{SCENE_KEYS,
//! GARMENT_KEYS}`, so a key added to the table is covered here too.

use drape::limits::{Accepts, Limit, GARMENT_KEYS, SCENE_KEYS};
use drape::scene::{SceneConfig, SceneFile};

/// Parses and configures, giving the first error.
fn config(text: &str) -> Result<SceneConfig, String> {
    SceneFile::parse(text)?.config()
}

/// `key = value` at the top level, or in one `[[garment]]` (the second one, so the index shows).
fn doc(garment: bool, key: &str, value: &str) -> (String, String) {
    if garment {
        let kind = match key {
            "kind" => "",
            // A mesh garment's keys go on a mesh garment (the others refuse them).
            "mesh" => "pin = \"top\"\n",
            "pin" => "mesh = \"Body\"\n",
            "max_distance" => "mesh = \"Body\"\npin = \"top\"\n",
            _ => "kind = \"hakama\"\n",
        };
        (
            format!("[[garment]]\nkind = \"cape\"\n[[garment]]\n{kind}{key} = {value}\n"),
            format!("garment[1].{key}"),
        )
    } else {
        (format!("{key} = {value}\n"), key.to_string())
    }
}

/// A value inside the limit, away from both ends (the ends are tested on their own).
fn inside(l: &Limit) -> f64 {
    let (lo, hi) = (l.min, l.max);
    if l.min < 1.0 && l.max > 1.0 {
        1.0
    } else {
        lo + (hi - lo) * 0.25
    }
}

fn every_key() -> Vec<(bool, &'static str, Accepts)> {
    SCENE_KEYS
        .iter()
        .map(|(k, a)| (false, *k, *a))
        .chain(GARMENT_KEYS.iter().map(|(k, a)| (true, *k, *a)))
        .collect()
}

#[test]
fn every_numeric_key_takes_its_range_and_refuses_beyond_it() {
    let mut checked = 0;
    for (garment, key, accepts) in every_key() {
        let (limit, whole) = match accepts {
            Accepts::Number(l) => (l, false),
            Accepts::Whole(l) => (l, true),
            _ => continue,
        };
        let fmt = |v: f64| {
            if whole {
                format!("{}", v as i64)
            } else {
                format!("{v:e}")
            }
        };
        // Both ends and a middle value are taken.
        for v in [limit.min, limit.max, inside(limit)] {
            let v = if whole { v.round() } else { v };
            let (text, _) = doc(garment, key, &fmt(v));
            config(&text).unwrap_or_else(|e| panic!("{key} = {v} refused: {e}"));
        }
        // Beyond either end: refused, naming the key, the value and the range.
        let step = if whole {
            1.0
        } else {
            (limit.max - limit.min).max(1e-3) * 0.5
        };
        for v in [limit.min - step, limit.max + step] {
            let (text, path) = doc(garment, key, &fmt(v));
            let e = config(&text).expect_err(&format!("{key} = {v} was taken"));
            assert!(e.contains(&path), "{e}");
            assert!(e.contains("out of range"), "{e}");
            assert!(e.contains(&limit.range_text()), "{e}");
        }
        // Non-finite numbers (TOML writes them nan, inf) and a string.
        for bad in ["nan", "inf", "-inf", "\"3\"", "true"] {
            let (text, path) = doc(garment, key, bad);
            let e = config(&text).expect_err(&format!("{key} = {bad} was taken"));
            assert!(e.contains(&path), "{key} = {bad}: {e}");
            assert!(e.contains(&limit.range_text()), "{key} = {bad}: {e}");
        }
        if whole {
            let (text, path) = doc(garment, key, "2.5");
            let e = config(&text).unwrap_err();
            assert!(e.contains(&path) && e.contains("whole number"), "{e}");
        } else {
            // An integer is a number.
            let v = limit.max.floor();
            if v >= limit.min {
                let (text, _) = doc(garment, key, &format!("{}", v as i64));
                config(&text).unwrap_or_else(|e| panic!("{key} = {v} refused: {e}"));
            }
        }
        checked += 1;
    }
    assert!(checked >= 14, "only {checked} numeric keys");
}

#[test]
fn every_other_key_refuses_the_wrong_type() {
    for (garment, key, accepts) in every_key() {
        let (good, bad): (&[&str], &[&str]) = match accepts {
            Accepts::Number(_) | Accepts::Whole(_) => continue,
            Accepts::Bool => (&["true", "false"], &["1", "\"yes\""]),
            Accepts::Word(_) => {
                let good: &[&str] = match key {
                    "skinning" => &["\"lbs\"", "\"dqs\"", "\"cor\""],
                    "model" => &["\"mass_spring\"", "\"xpbd\""],
                    "root_motion" => &["\"in_place\"", "\"travel\"", "\"authored\""],
                    "kind" => &["\"cape\"", "\"hakama\"", "\"sash\"", "\"headband\""],
                    "style" => &["\"half_skirts\"", "\"divided\""],
                    other => panic!("no good values listed for the word key '{other}'"),
                };
                (good, &["\"bogus\"", "3"])
            }
            Accepts::Text => (&["\"stance\""], &["3", "[\"a\"]"]),
            Accepts::TextList => (&["[]", "[\"a.fbx\"]"], &["\"a.fbx\"", "[1]"]),
            Accepts::TextTable => (&["{}"], &["\"x\"", "{ Head = 1 }"]),
            Accepts::Garments => (&["[]"], &["\"cape\"", "[1]", "[{ spacing = 0.02 }]"]),
            Accepts::MeshSource => (
                &[
                    "\"Cape\"",
                    "\"skirt.glb\"",
                    "{ file = \"coat.glb\", node = \"Coat\" }",
                ],
                &[
                    "3",
                    "{ node = \"Coat\" }",
                    "{ file = 1 }",
                    "{ file = \"a.glb\", nod = \"x\" }",
                ],
            ),
            Accepts::PinRule => (
                &[
                    "\"weights\"",
                    "\"top\"",
                    "{ within = 0.01 }",
                    "{ within = 0 }",
                ],
                &[
                    "\"bottom\"",
                    "1",
                    "{ within = -1 }",
                    "{ within = 0.6 }",
                    "{ near = 0.01 }",
                ],
            ),
        };
        for v in good {
            if key == "clips" && *v != "[]" {
                continue; // a real file would be loaded later; parsing is what is tested
            }
            let (text, _) = doc(garment, key, v);
            SceneFile::parse(&text).unwrap_or_else(|e| panic!("{key} = {v} refused: {e}"));
        }
        for v in bad {
            let (text, path) = doc(garment, key, v);
            let e = config(&text).expect_err(&format!("{key} = {v} was taken"));
            assert!(e.contains(&path), "{key} = {v}: {e}");
        }
    }
}

#[test]
fn each_key_reaches_the_configuration() {
    let c = config(
        "rig = \"ninja\"\nclip = \"stance\"\nskinning = \"cor\"\nsubsteps = 12\n\
         self_collision = false\nskin_contact = 2\nface_contact = true\nmodel = \"xpbd\"\nsettle = 0.25\nblend = 0.75\nfps = 30\n\
         root_motion = \"travel\"\nhide = [\"Mug\", \"*Axe*\"]\n[bones]\nHead = \"head_node\"\n\
         [[garment]]\nkind = \"sash\"\nspacing = 0.02\nclearance = 0.01\nlength = 0.8\n\
         k_structural = 123\nk_shear = 45\nk_bend = 6\narea_density = 0.3\ndamping = 0.4\n\
         thickness = 0.004\nfriction = 0.7\n\
         [[garment]]\nmesh = { file = \"coat.glb\", node = \"Coat\" }\npin = { within = 0.02 }\n\
         max_distance = 0.05\n[[garment]]\nkind = \"hakama\"\nstyle = \"divided\"\nwear_unfit = true\n",
    )
    .unwrap();
    assert_eq!(c.garments[2].style, drape::garments::HakamaStyle::Divided);
    assert!(c.garments[2].wear_unfit && !c.garments[0].wear_unfit);
    let m = c.garments[1].mesh.as_ref().expect("a mesh garment");
    assert_eq!(m.max_distance, 0.05);
    assert_eq!(m.pin, drape::garments::mesh::PinRule::Within(0.02));
    assert_eq!(c.clip.as_deref(), Some("stance"));
    assert_eq!(c.method, drape::skin::SkinMethod::Cor);
    assert_eq!(c.sim.substeps, 12);
    assert!(!c.sim.self_collision);
    assert_eq!(c.sim.skin_contact, 2);
    assert!(c.sim.face_contact);
    assert_eq!(c.sim.model, drape::cloth::ClothModelKind::Xpbd);
    assert_eq!((c.settle, c.blend), (0.25, 0.75));
    assert!((c.sim.frame_dt - 1.0 / 30.0).abs() < 1e-7);
    assert_eq!(c.root_motion, drape::anim::player::RootMotion::Travel);
    assert_eq!(c.bones, vec![("Head".into(), "head_node".into())]);
    assert_eq!(c.hide, vec!["Mug".to_string(), "*Axe*".to_string()]);
    let g = &c.garments[0];
    assert_eq!(g.kind, drape::garments::GarmentKind::Sash);
    assert_eq!((g.spacing, g.clearance, g.length), (0.02, 0.01, 0.8));
    let f = &g.fabric;
    assert_eq!(
        [
            f.k_structural,
            f.k_shear,
            f.k_bend,
            f.area_density,
            f.damping_ratio,
            f.thickness,
            f.friction
        ],
        [123.0, 45.0, 6.0, 0.3, 0.4, 0.004, 0.7]
    );
    // Every key of the table was set by the file above (a key added to the table needs a line
    // here too).
    let text =
        "rig clip skinning substeps self_collision skin_contact face_contact model settle blend fps root_motion bones hide \
                garment kind spacing clearance length k_structural k_shear k_bend area_density \
                damping thickness friction mesh pin max_distance style wear_unfit";
    for (_, key, _) in every_key() {
        if key != "clips" {
            assert!(text.split(' ').any(|k| k == key), "{key} is not tested");
        }
    }
}

#[test]
fn unknown_keys_are_refused_with_a_suggestion() {
    let e = config("substep = 8\n").unwrap_err();
    assert!(
        e.contains("unknown key 'substep'") && e.contains("did you mean 'substeps'"),
        "{e}"
    );
    let e = config("[[garment]]\nkind = \"cape\"\nk_structual = 5\n").unwrap_err();
    assert!(
        e.contains("garment[0].k_structual") && e.contains("did you mean 'k_structural'"),
        "{e}"
    );
    let e = config("colour = \"red\"\n").unwrap_err();
    assert!(
        e.contains("unknown key 'colour'") && !e.contains("did you mean"),
        "{e}"
    );
    let e = config("[bones]\nHeda = \"x\"\n").unwrap_err();
    assert!(e.contains("did you mean 'Head'"), "{e}");
    let e = config("[[garment]]\nspacing = 0.02\n").unwrap_err();
    assert!(e.contains("garment[0] has no kind"), "{e}");
}

#[test]
fn the_issue_examples_are_refused_naming_the_file() {
    let dir = std::env::temp_dir().join(format!("drape_scene_file_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.toml");
    for (text, want) in [
        (
            "[[garment]]\nkind = \"cape\"\n[[garment]]\nkind = \"hakama\"\nk_structural = -5\n",
            "garment[1].k_structural = -5 is out of range: allowed 0 … 10000000 N/m",
        ),
        (
            "[[garment]]\nkind = \"cape\"\nspacing = 0.00001\n",
            "garment[0].spacing = 0.00001 is out of range: allowed 0.005 … 0.1 m",
        ),
        (
            "substeps = 100000\n",
            "substeps = 100000 is out of range: allowed 1 … 1000",
        ),
        ("settle = \"long\"\n", "settle = \"long\" is a string"),
    ] {
        std::fs::write(&path, text).unwrap();
        let e = drape::scene::Scene::from_file(&path)
            .err()
            .expect("a bad file was taken")
            .to_string();
        assert!(e.contains(&path.display().to_string()), "{e}");
        assert!(e.contains(want), "{e}\nwanted: {want}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
