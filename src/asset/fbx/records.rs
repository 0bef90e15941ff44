//! The pieces the FBX writer builds its records from: object ids, `Properties70` entries (`P`
//! records: name, type, label, flags, value), times in FBX ticks, and Euler angles unwrapped so
//! that consecutive keys never jump by a whole turn.

use glam::{DQuat, DVec3};

use super::binary::{Node, Prop};
use super::scene::{quat_euler_xyz, TICKS_PER_SECOND};

/// Object ids, handed out in order.
pub(super) struct Ids(pub(super) i64);

impl Ids {
    pub(super) fn next(&mut self) -> i64 {
        self.0 += 1;
        self.0
    }
}

/// An FBX 7 object name property: `"Hips\0\x01Model"`.
pub(super) fn name_prop(name: &str, class: &str) -> Prop {
    Prop::Str(format!("{name}\0\u{1}{class}"))
}

/// One `P` record: name, type, label, flags (`"A"` = animatable), then the value(s).
fn p(
    name: &str,
    kind: &str,
    label: &str,
    flags: &str,
    values: impl IntoIterator<Item = Prop>,
) -> Node {
    let mut props = vec![
        Prop::Str(name.into()),
        Prop::Str(kind.into()),
        Prop::Str(label.into()),
        Prop::Str(flags.into()),
    ];
    props.extend(values);
    Node::new("P", props)
}

pub(super) fn p_vec(name: &str, kind: &str, v: DVec3, animatable: bool) -> Node {
    let label = if kind == "ColorRGB" { "Color" } else { "" };
    let flags = if animatable { "A" } else { "" };
    p(
        name,
        kind,
        label,
        flags,
        [Prop::F64(v.x), Prop::F64(v.y), Prop::F64(v.z)],
    )
}

pub(super) fn p_int(name: &str, kind: &str, v: i32) -> Node {
    p(name, kind, "", "", [Prop::I32(v)])
}

pub(super) fn p_num(name: &str, v: f64) -> Node {
    p(name, "Number", "", "A", [Prop::F64(v)])
}

pub(super) fn p_double(name: &str, v: f64) -> Node {
    p(name, "double", "Number", "", [Prop::F64(v)])
}

pub(super) fn p_time(name: &str, ticks: i64) -> Node {
    p(name, "KTime", "Time", "", [Prop::I64(ticks)])
}

pub(super) fn leaf(name: &str, p: Prop) -> Node {
    Node::new(name, vec![p])
}

pub(super) fn props70(children: Vec<Node>) -> Node {
    Node::new("Properties70", vec![]).with(children)
}

/// Seconds → FBX ticks.
pub(super) fn ticks(t: f32) -> i64 {
    (t as f64 * TICKS_PER_SECOND).round() as i64
}

/// Euler XYZ degrees of `q`, shifted by whole turns towards `prev` (so curves do not jump).
pub(super) fn unwrap_euler(q: DQuat, prev: Option<DVec3>) -> DVec3 {
    let mut e = quat_euler_xyz(q);
    if let Some(p) = prev {
        // The same rotation as the other Euler branch: (x+180, 180-y, z+180).
        let alt = DVec3::new(e.x + 180.0, 180.0 - e.y, e.z + 180.0);
        let near = |v: DVec3| {
            DVec3::new(
                v.x - 360.0 * ((v.x - p.x) / 360.0).round(),
                v.y - 360.0 * ((v.y - p.y) / 360.0).round(),
                v.z - 360.0 * ((v.z - p.z) / 360.0).round(),
            )
        };
        let (a, b) = (near(e), near(alt));
        e = if (a - p).length_squared() <= (b - p).length_squared() {
            a
        } else {
            b
        };
    }
    e
}
