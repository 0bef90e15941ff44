//! `drape proxies FILE`: fits the body proxies to a character (or the built-in ninja) and prints
//! their quality at the bind pose (coverage, gaps; `body::ProxyQuality`), and with `--worst N`
//! the N worst-fitted bones (`body::quality_by_joint`). The body measured is the one a scene
//! fits its proxies to: the skin and the meshes that follow a joint rigidly or belong to another
//! skin (`body::with_rigid_parts`: RobotExpressive's pieces, KayKit's hats and props), less the
//! meshes `--hide` names.

use std::path::PathBuf;

use clap::Args as ClapArgs;

use super::CliError;
use crate::body::{
    quality_at_bind, quality_by_joint, stand_off_at_bind, Proxies, ProxyOptions, QUALITY_TOLERANCE,
};

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// A glTF/GLB character, or `ninja` for the built-in one.
    pub file: PathBuf,
    /// Skin index.
    #[arg(long, default_value_t = 0)]
    pub skin: usize,
    /// Exit non-zero unless at least 95 % of the surface is within 1.5 cm of a proxy.
    #[arg(long)]
    pub check: bool,
    /// Take a mesh off the character first, as `drape check --hide` does (a mesh or node name,
    /// or a node above it; `*` and `?` as in a shell). Repeatable.
    #[arg(long, value_name = "NAME")]
    pub hide: Vec<String>,
    /// Also list the N worst-fitted bones: each one's share of the surface, of it within
    /// 1.5 cm of a proxy, deeper inside one (proxies sticking out) and farther outside (too thin).
    #[arg(long, value_name = "N")]
    pub worst: Option<usize>,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let name = args.file.to_string_lossy().to_string();
    let mut rig =
        crate::scene::load_rig_named(&name, None).map_err(|e| CliError::new(e.to_string()))?;
    rig.hide_meshes(&args.hide)
        .map_err(|e| CliError::new(format!("--hide: {e}")))?;
    if rig.skins.get(args.skin).is_none() {
        return Err(CliError::new(format!(
            "{name}: no skin {} (it has {})",
            args.skin,
            rig.skins.len()
        )));
    }
    // The body the scene fits: the rigid parts and other skins' meshes bound to this skin.
    let with_parts = crate::body::with_rigid_parts(&rig, args.skin);
    let rig = with_parts.as_ref().unwrap_or(&rig);
    let proxies = Proxies::fit(rig, args.skin, &ProxyOptions::default())
        .map_err(|e| CliError::new(format!("{name}: {e}")))?;
    let q = quality_at_bind(rig, args.skin, &proxies);
    println!("{name} (skin {}):", args.skin);
    println!("{q}");
    println!("{}", stand_off_at_bind(rig, args.skin, &proxies));
    if let Some(n) = args.worst {
        let per = quality_by_joint(rig, args.skin, &proxies);
        println!("worst-fitted bones (share of the surface; within / inside / outside 1.5 cm):");
        for j in per.iter().take(n) {
            println!(
                "  {:28} {:5.1} %   within {:5.1} %   inside {:5.1} %   outside {:5.1} %   {} spheres",
                j.name,
                100.0 * j.area,
                100.0 * j.within,
                100.0 * j.deep,
                100.0 * j.far,
                j.spheres
            );
        }
    }
    if args.check && q.within < 0.95 {
        return Err(CliError::new(format!(
            "{name}: only {:.1} % of the surface is within {:.1} cm of a proxy (target 95 %)",
            100.0 * q.within,
            100.0 * QUALITY_TOLERANCE
        )));
    }
    Ok(())
}
