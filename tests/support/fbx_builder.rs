//! Builds small binary FBX files inside tests, record by record, with drape's own FBX record
//! types: models with their Properties70, meshes with polygons, skins and clusters, animation
//! stacks with curves. Used by tests/fbx.rs.
#![allow(dead_code)]

use drape::asset::fbx::binary::{self, ArrayEncoding, Document, Node, Prop};
use glam::DMat4;

pub const TICKS: i64 = 46_186_158_000;

pub fn s(v: &str) -> Prop {
    Prop::Str(v.into())
}

/// `P: name, type, "", "A", x, y, z`.
pub fn p3(name: &str, v: [f64; 3]) -> Node {
    Node::new(
        "P",
        vec![
            s(name),
            s(name),
            s(""),
            s("A"),
            Prop::F64(v[0]),
            Prop::F64(v[1]),
            Prop::F64(v[2]),
        ],
    )
}

/// `P: name, "int", "", "", v` (enums, bools).
pub fn pi(name: &str, v: i32) -> Node {
    Node::new("P", vec![s(name), s("int"), s(""), s(""), Prop::I32(v)])
}

pub fn pd(name: &str, v: f64) -> Node {
    Node::new(
        "P",
        vec![s(name), s("double"), s("Number"), s(""), Prop::F64(v)],
    )
}

fn leaf(name: &str, p: Prop) -> Node {
    Node::new(name, vec![p])
}

fn named(name: &str, class: &str) -> Prop {
    Prop::Str(format!("{name}\0\u{1}{class}"))
}

pub struct Fbx {
    pub version: u32,
    pub global: Vec<Node>,
    pub objects: Vec<Node>,
    pub conns: Vec<Node>,
    next: i64,
}

impl Fbx {
    /// Centimetres, Y up (Mixamo's settings).
    pub fn new(version: u32) -> Self {
        Fbx {
            version,
            global: vec![
                pi("UpAxis", 1),
                pi("UpAxisSign", 1),
                pi("FrontAxis", 2),
                pi("FrontAxisSign", 1),
                pi("CoordAxis", 0),
                pi("CoordAxisSign", 1),
                pd("UnitScaleFactor", 1.0),
            ],
            objects: Vec::new(),
            conns: Vec::new(),
            next: 100,
        }
    }

    fn id(&mut self) -> i64 {
        self.next += 1;
        self.next
    }

    pub fn oo(&mut self, child: i64, parent: i64) {
        self.conns.push(Node::new(
            "C",
            vec![s("OO"), Prop::I64(child), Prop::I64(parent)],
        ));
    }

    pub fn op(&mut self, child: i64, parent: i64, prop: &str) {
        self.conns.push(Node::new(
            "C",
            vec![s("OP"), Prop::I64(child), Prop::I64(parent), s(prop)],
        ));
    }

    /// A model (`LimbNode`, `Null`, `Mesh`) under `parent` (0 = the scene root).
    pub fn model(&mut self, name: &str, kind: &str, parent: i64, props: Vec<Node>) -> i64 {
        let id = self.id();
        self.objects.push(
            Node::new("Model", vec![Prop::I64(id), named(name, "Model"), s(kind)]).with(vec![
                leaf("Version", Prop::I32(232)),
                Node::new("Properties70", vec![]).with(props),
            ]),
        );
        self.oo(id, parent);
        id
    }

    /// A mesh model with its geometry: control points (file units) and polygons (control point
    /// indices; the builder writes the negative end marker). Returns (model, geometry).
    pub fn mesh(
        &mut self,
        name: &str,
        parent: i64,
        points: &[[f64; 3]],
        polys: &[&[i32]],
    ) -> (i64, i64) {
        let model = self.model(name, "Mesh", parent, vec![]);
        let gid = self.id();
        let mut pvi = Vec::new();
        for p in polys {
            for (k, &i) in p.iter().enumerate() {
                pvi.push(if k + 1 == p.len() { !i } else { i });
            }
        }
        self.objects.push(
            Node::new(
                "Geometry",
                vec![Prop::I64(gid), named(name, "Geometry"), s("Mesh")],
            )
            .with(vec![
                leaf(
                    "Vertices",
                    Prop::ArrF64(points.iter().flatten().copied().collect()),
                ),
                leaf("PolygonVertexIndex", Prop::ArrI32(pvi)),
            ]),
        );
        self.oo(gid, model);
        (model, gid)
    }

    /// Adds a layer element record to the geometry `gid`.
    pub fn layer(&mut self, gid: i64, element: Node) {
        let id = Prop::I64(gid);
        if let Some(g) = self
            .objects
            .iter_mut()
            .find(|o| o.props.first() == Some(&id))
        {
            g.children.push(element);
        }
    }

    pub fn skin(&mut self, gid: i64) -> i64 {
        let id = self.id();
        self.objects.push(
            Node::new(
                "Deformer",
                vec![Prop::I64(id), named("Skin", "Deformer"), s("Skin")],
            )
            .with(vec![leaf("Version", Prop::I32(101))]),
        );
        self.oo(id, gid);
        id
    }

    /// A cluster of `skin` on `bone`; `weights` `None` writes no Indexes/Weights records at all.
    pub fn cluster(
        &mut self,
        skin: i64,
        bone: i64,
        weights: Option<(&[i32], &[f64])>,
        transform: DMat4,
        link: DMat4,
    ) -> i64 {
        let id = self.id();
        let mut c = vec![leaf("Version", Prop::I32(100))];
        if let Some((i, w)) = weights {
            c.push(leaf("Indexes", Prop::ArrI32(i.to_vec())));
            c.push(leaf("Weights", Prop::ArrF64(w.to_vec())));
        }
        c.push(leaf(
            "Transform",
            Prop::ArrF64(transform.to_cols_array().to_vec()),
        ));
        c.push(leaf(
            "TransformLink",
            Prop::ArrF64(link.to_cols_array().to_vec()),
        ));
        self.objects.push(
            Node::new(
                "Deformer",
                vec![Prop::I64(id), named("", "SubDeformer"), s("Cluster")],
            )
            .with(c),
        );
        self.oo(id, skin);
        self.oo(bone, id);
        id
    }

    /// An animation stack with one layer. Returns (stack, layer).
    pub fn stack(&mut self, name: &str) -> (i64, i64) {
        let (st, la) = (self.id(), self.id());
        self.objects.push(Node::new(
            "AnimationStack",
            vec![Prop::I64(st), named(name, "AnimStack"), s("")],
        ));
        self.objects.push(Node::new(
            "AnimationLayer",
            vec![Prop::I64(la), named("BaseLayer", "AnimLayer"), s("")],
        ));
        self.oo(la, st);
        (st, la)
    }

    /// A curve node on `model`'s `prop` (`Lcl Rotation`, …) with one curve per axis given.
    pub fn curves(
        &mut self,
        layer: i64,
        model: i64,
        prop: &str,
        times: &[i64],
        axes: [Option<&[f32]>; 3],
    ) {
        let cn = self.id();
        self.objects.push(
            Node::new(
                "AnimationCurveNode",
                vec![Prop::I64(cn), named("", "AnimCurveNode"), s("")],
            )
            .with(vec![Node::new("Properties70", vec![])]),
        );
        self.oo(cn, layer);
        self.op(cn, model, prop);
        for (a, v) in axes.iter().enumerate() {
            let Some(v) = v else { continue };
            let c = self.id();
            self.objects.push(
                Node::new(
                    "AnimationCurve",
                    vec![Prop::I64(c), named("", "AnimCurve"), s("")],
                )
                .with(vec![
                    leaf("KeyTime", Prop::ArrI64(times.to_vec())),
                    leaf("KeyValueFloat", Prop::ArrF32(v.to_vec())),
                ]),
            );
            self.op(c, cn, ["d|X", "d|Y", "d|Z"][a]);
        }
    }

    pub fn document(&self) -> Document {
        Document {
            version: self.version,
            nodes: vec![
                Node::new("GlobalSettings", vec![]).with(vec![
                    Node::new("Properties70", vec![]).with(self.global.clone())
                ]),
                Node::new("Objects", vec![]).with(self.objects.clone()),
                Node::new("Connections", vec![]).with(self.conns.clone()),
            ],
        }
    }

    pub fn bytes(&self, compress: bool) -> Vec<u8> {
        binary::write(
            &self.document(),
            if compress {
                ArrayEncoding::Zlib { min_bytes: 0 }
            } else {
                ArrayEncoding::Plain
            },
        )
    }
}
