//! The garment library's pins: bound like skinned vertices and placed with the scene's skinning
//! method by the same kernels as the body (LBS, DQS, CoR).

use drape::anim::Pose;
use drape::garments::PinBinding;
use drape::skin::{SkinMethod, Skinner};

/// A pin bound exactly to a skin vertex (its influences and bind position) must land exactly on
/// that vertex as the body's skinning places it, for every method, at a strongly bent pose
/// (mid roundhouse kick).
#[test]
fn pins_follow_the_body_skinning_method() {
    let ninja = drape::ninja::build().unwrap();
    let rig = ninja.rig;
    let clip = &rig.clips[rig.clip("roundhouse_kick").unwrap()];
    let mut pose = Pose::rest(&rig.skeleton);
    clip.sample(0.9, &mut pose);
    let mut world_from_node = Vec::new();
    pose.world_from_node(&rig.skeleton, &mut world_from_node);
    let mesh = &rig.meshes[0];
    let skin = mesh.skin.unwrap() as usize;
    // Every 7th vertex of the body.
    let mut pins = PinBinding::default();
    for v in (0..mesh.positions.len()).step_by(7) {
        pins.joints.push(mesh.joints[v]);
        pins.weights.push(mesh.weights[v]);
        pins.p_bind.push(mesh.positions[v]);
        pins.mesh.push(0);
        pins.vertex.push(v as u32);
    }
    let mut skinner = Skinner::new(&rig);
    skinner.prepare_cor(&rig, &mut |_, _| {});
    let mut centers = Vec::new();
    pins.cor_centers(&skinner, &mut centers);
    // Vertices bound to one joint have no centre (CoR is rigid there); blended ones have one.
    let with_centre = centers.iter().filter(|c| c.is_finite()).count();
    assert!(
        with_centre > 10,
        "only {with_centre} of {} pins have a centre",
        pins.len()
    );
    let mut placed = Vec::new();
    let mut lbs = Vec::new();
    for method in SkinMethod::ALL {
        skinner.update(&rig, &world_from_node, method);
        pins.place(
            skinner.palette(skin).unwrap(),
            method,
            &centers,
            &mut placed,
        );
        let body = skinner.positions(0);
        let worst = pins
            .vertex
            .iter()
            .zip(&placed)
            .map(|(&v, p)| p.distance(body[v as usize]))
            .fold(0.0f32, f32::max);
        assert!(worst < 2e-5, "{method}: a pin is {worst} m off its vertex");
        if method == SkinMethod::Lbs {
            lbs = placed.clone();
        } else {
            // The methods really differ at this pose, so the test can tell them apart.
            let differ = lbs
                .iter()
                .zip(&placed)
                .map(|(a, b)| a.distance(*b))
                .fold(0.0f32, f32::max);
            assert!(
                differ > 1e-3,
                "{method} placed the pins like LBS ({differ} m)"
            );
        }
    }
}
