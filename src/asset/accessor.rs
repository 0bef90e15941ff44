//! A bounds-checked reader for glTF accessors (glTF 2.0 spec §3.6 "Binary Data Storage").
//!
//! The loader converts each glTF accessor into a plain [`AccessorDesc`] (no `gltf` types here), and
//! this module turns it into typed arrays. Every size is computed with checked arithmetic and
//! compared with the bytes present *before* anything is allocated; errors are sentences that the
//! loader prefixes with the file name and the accessor's role.

/// A component type (glTF `componentType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    I8,
    U8,
    I16,
    U16,
    U32,
    F32,
}

impl Component {
    pub fn size(self) -> usize {
        match self {
            Component::I8 | Component::U8 => 1,
            Component::I16 | Component::U16 => 2,
            Component::U32 | Component::F32 => 4,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Component::I8 => "BYTE",
            Component::U8 => "UNSIGNED_BYTE",
            Component::I16 => "SHORT",
            Component::U16 => "UNSIGNED_SHORT",
            Component::U32 => "UNSIGNED_INT",
            Component::F32 => "FLOAT",
        }
    }

    /// Reads one component at the start of `b` (which holds at least `size()` bytes) as f32,
    /// applying the glTF normalisation (§3.11 "Animations", table of normalised ints) when asked.
    #[inline(always)]
    fn read_f32(self, b: &[u8], normalized: bool) -> f32 {
        match (self, normalized) {
            (Component::F32, _) => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            (Component::I8, false) => b[0] as i8 as f32,
            (Component::U8, false) => b[0] as f32,
            (Component::I16, false) => i16::from_le_bytes([b[0], b[1]]) as f32,
            (Component::U16, false) => u16::from_le_bytes([b[0], b[1]]) as f32,
            (Component::U32, false) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32,
            (Component::I8, true) => (b[0] as i8 as f32 / 127.0).max(-1.0),
            (Component::U8, true) => b[0] as f32 / 255.0,
            (Component::I16, true) => (i16::from_le_bytes([b[0], b[1]]) as f32 / 32767.0).max(-1.0),
            (Component::U16, true) => u16::from_le_bytes([b[0], b[1]]) as f32 / 65535.0,
            (Component::U32, true) => {
                (u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64 / u32::MAX as f64) as f32
            }
        }
    }

    /// Reads one component as an unsigned integer; `None` for negative or fractional values.
    #[inline(always)]
    fn read_u32(self, b: &[u8]) -> Option<u32> {
        match self {
            Component::U8 => Some(b[0] as u32),
            Component::U16 => Some(u16::from_le_bytes([b[0], b[1]]) as u32),
            Component::U32 => Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            Component::I8 => u32::try_from(b[0] as i8).ok(),
            Component::I16 => u32::try_from(i16::from_le_bytes([b[0], b[1]])).ok(),
            Component::F32 => {
                let f = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                (f >= 0.0 && f <= u32::MAX as f32 && f.fract() == 0.0).then_some(f as u32)
            }
        }
    }
}

/// Element shape (glTF `type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Scalar,
    Vec2,
    Vec3,
    Vec4,
    Mat2,
    Mat3,
    Mat4,
}

impl Shape {
    pub fn components(self) -> usize {
        match self {
            Shape::Scalar => 1,
            Shape::Vec2 => 2,
            Shape::Vec3 => 3,
            Shape::Vec4 | Shape::Mat2 => 4,
            Shape::Mat3 => 9,
            Shape::Mat4 => 16,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Shape::Scalar => "SCALAR",
            Shape::Vec2 => "VEC2",
            Shape::Vec3 => "VEC3",
            Shape::Vec4 => "VEC4",
            Shape::Mat2 => "MAT2",
            Shape::Mat3 => "MAT3",
            Shape::Mat4 => "MAT4",
        }
    }

    /// (columns, rows) for matrices, (1, components) otherwise.
    fn columns_rows(self) -> (usize, usize) {
        match self {
            Shape::Mat2 => (2, 2),
            Shape::Mat3 => (3, 3),
            Shape::Mat4 => (4, 4),
            s => (1, s.components()),
        }
    }
}

/// A buffer view resolved to its bytes.
#[derive(Clone, Copy, Debug)]
pub struct ViewData<'a> {
    /// glTF index of the view, for messages.
    pub index: usize,
    /// The view's bytes (already checked to lie inside its buffer).
    pub bytes: &'a [u8],
    /// `byteStride`, if the view declares one.
    pub stride: Option<usize>,
}

/// Sparse storage (§3.6.2.3): `count` (index, value) pairs that replace elements.
#[derive(Clone, Copy, Debug)]
pub struct SparseDesc<'a> {
    pub count: u64,
    pub indices_view: ViewData<'a>,
    pub indices_offset: u64,
    pub indices_component: Component,
    pub values_view: ViewData<'a>,
    pub values_offset: u64,
}

/// An accessor with its data located; the input of [`read_f32`] and [`read_u32`].
#[derive(Clone, Copy, Debug)]
pub struct AccessorDesc<'a> {
    /// glTF index of the accessor, for messages.
    pub index: usize,
    pub count: u64,
    pub component: Component,
    pub shape: Shape,
    pub normalized: bool,
    /// `None`: the accessor has no bufferView and reads as zeros (before sparse substitution).
    pub view: Option<ViewData<'a>>,
    pub byte_offset: u64,
    pub sparse: Option<SparseDesc<'a>>,
}

/// The byte layout of one element: where each component lies relative to the element's start.
#[derive(Clone, Copy, Debug)]
struct Layout {
    /// Bytes from one element to the next.
    stride: usize,
    /// Bytes one element spans (the last element needs only this many).
    span: usize,
    columns: usize,
    rows: usize,
    column_stride: usize,
    csize: usize,
}

impl Layout {
    fn new(component: Component, shape: Shape, stride: Option<usize>) -> Layout {
        let csize = component.size();
        let (columns, rows) = shape.columns_rows();
        // Matrix columns start on 4-byte boundaries (§3.6.2.4 "Data Alignment"), which only
        // matters for 1- and 2-byte matrix components.
        let column_stride = if columns > 1 {
            (rows * csize).next_multiple_of(4)
        } else {
            rows * csize
        };
        let span = column_stride * (columns - 1) + rows * csize;
        let stride = stride.filter(|&s| s > 0).unwrap_or(column_stride * columns);
        Layout {
            stride,
            span,
            columns,
            rows,
            column_stride,
            csize,
        }
    }

    /// Byte offset of component `k` within an element.
    #[inline(always)]
    fn component_offset(&self, k: usize) -> usize {
        (k / self.rows) * self.column_stride + (k % self.rows) * self.csize
    }
}

/// Checks that `count` elements starting at `offset` fit in `view` with the given layout, and
/// returns the byte range they span.
fn check_fits(
    count: u64,
    offset: u64,
    layout: &Layout,
    view: &ViewData,
    what: impl Fn() -> String,
) -> Result<(), String> {
    if count == 0 {
        return Ok(());
    }
    let needed = (count - 1)
        .checked_mul(layout.stride as u64)
        .and_then(|v| v.checked_add(layout.span as u64))
        .and_then(|v| v.checked_add(offset));
    match needed {
        Some(n) if n <= view.bytes.len() as u64 => Ok(()),
        Some(n) => Err(format!(
            "{} needs {n} bytes (count {count}, stride {}, offset {offset}) but buffer view {} has {}",
            what(),
            layout.stride,
            view.index,
            view.bytes.len()
        )),
        None => Err(format!(
            "{}: count {count} × stride {} overflows",
            what(),
            layout.stride
        )),
    }
}

/// Validates sizes without reading: can the source data hold `count` elements (and the sparse
/// substitutions)?
pub fn check(acc: &AccessorDesc) -> Result<(), String> {
    if let Some(view) = &acc.view {
        let layout = Layout::new(acc.component, acc.shape, view.stride);
        if let Some(s) = view.stride {
            if s < layout.span {
                return Err(format!(
                    "accessor {} has {} elements of {} bytes but buffer view {} has byteStride {s}",
                    acc.index,
                    acc.shape.name(),
                    layout.span,
                    view.index
                ));
            }
        }
        check_fits(acc.count, acc.byte_offset, &layout, view, || {
            format!("accessor {}", acc.index)
        })?;
    }
    if let Some(sp) = &acc.sparse {
        if sp.count > acc.count {
            return Err(format!(
                "accessor {}: sparse count {} exceeds the accessor count {}",
                acc.index, sp.count, acc.count
            ));
        }
        let il = Layout::new(sp.indices_component, Shape::Scalar, None);
        check_fits(sp.count, sp.indices_offset, &il, &sp.indices_view, || {
            format!("accessor {} sparse indices", acc.index)
        })?;
        // Sparse values are tightly packed (§3.6.2.3: the views must not define byteStride).
        let vl = Layout::new(acc.component, acc.shape, None);
        check_fits(sp.count, sp.values_offset, &vl, &sp.values_view, || {
            format!("accessor {} sparse values", acc.index)
        })?;
    }
    Ok(())
}

/// Reads an accessor as `N` floats per element (`N` must equal the shape's component count),
/// normalising integers when the accessor says so. The caller has charged the output size to its
/// memory budget; this checks the source sizes.
pub fn read_f32<const N: usize>(acc: &AccessorDesc) -> Result<Vec<[f32; N]>, String> {
    if acc.shape.components() != N {
        return Err(format!(
            "accessor {} is {} but {} components are needed",
            acc.index,
            acc.shape.name(),
            N
        ));
    }
    check(acc)?;
    let count = usize::try_from(acc.count)
        .map_err(|_| format!("accessor {}: count too large", acc.index))?;
    let mut out: Vec<[f32; N]> = Vec::new();
    out.try_reserve_exact(count)
        .map_err(|_| format!("accessor {}: cannot allocate {count} elements", acc.index))?;
    match &acc.view {
        None => out.resize(count, [0.0; N]),
        Some(view) => {
            let layout = Layout::new(acc.component, acc.shape, view.stride);
            let start = acc.byte_offset as usize; // fits: checked by check_fits
            let norm = acc.normalized;
            if count > 0 {
                let data = &view.bytes[start..start + (count - 1) * layout.stride + layout.span];
                if acc.component == Component::F32 && layout.columns == 1 {
                    // Fast path: plain floats, possibly interleaved.
                    for i in 0..count {
                        let e = &data[i * layout.stride..i * layout.stride + 4 * N];
                        let mut v = [0.0f32; N];
                        for (k, c) in e.chunks_exact(4).enumerate() {
                            v[k] = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                        }
                        out.push(v);
                    }
                } else {
                    // One monomorphised loop per component type: the dispatch leaves the loop.
                    let _ = match acc.component {
                        Component::I8 => decode(data, count, &layout, &mut out, |b| {
                            Some(Component::I8.read_f32(b, norm))
                        }),
                        Component::U8 => decode(data, count, &layout, &mut out, |b| {
                            Some(Component::U8.read_f32(b, norm))
                        }),
                        Component::I16 => decode(data, count, &layout, &mut out, |b| {
                            Some(Component::I16.read_f32(b, norm))
                        }),
                        Component::U16 => decode(data, count, &layout, &mut out, |b| {
                            Some(Component::U16.read_f32(b, norm))
                        }),
                        Component::U32 => decode(data, count, &layout, &mut out, |b| {
                            Some(Component::U32.read_f32(b, norm))
                        }),
                        Component::F32 => decode(data, count, &layout, &mut out, |b| {
                            Some(Component::F32.read_f32(b, norm))
                        }),
                    };
                }
            }
        }
    }
    if let Some(sp) = &acc.sparse {
        let idx = sparse_indices(acc, sp, count)?;
        let vl = Layout::new(acc.component, acc.shape, None);
        let vstart = sp.values_offset as usize;
        for (j, &i) in idx.iter().enumerate() {
            let at = vstart + j * vl.stride;
            let e = &sp.values_view.bytes[at..at + vl.span];
            let mut v = [0.0f32; N];
            for (k, slot) in v.iter_mut().enumerate() {
                *slot = acc
                    .component
                    .read_f32(&e[vl.component_offset(k)..], acc.normalized);
            }
            out[i as usize] = v;
        }
    }
    Ok(out)
}

/// Reads an accessor as `N` unsigned integers per element (indices, joint numbers). Float or
/// negative components are errors.
pub fn read_u32<const N: usize>(acc: &AccessorDesc) -> Result<Vec<[u32; N]>, String> {
    if acc.shape.components() != N {
        return Err(format!(
            "accessor {} is {} but {} components are needed",
            acc.index,
            acc.shape.name(),
            N
        ));
    }
    if acc.normalized {
        return Err(format!(
            "accessor {} is normalized but integers are needed",
            acc.index
        ));
    }
    check(acc)?;
    let count = usize::try_from(acc.count)
        .map_err(|_| format!("accessor {}: count too large", acc.index))?;
    let mut out: Vec<[u32; N]> = Vec::new();
    out.try_reserve_exact(count)
        .map_err(|_| format!("accessor {}: cannot allocate {count} elements", acc.index))?;
    let bad = |i: usize| {
        format!(
            "accessor {} element {i} is not a non-negative integer ({})",
            acc.index,
            acc.component.name()
        )
    };
    match &acc.view {
        None => out.resize(count, [0; N]),
        Some(view) => {
            let layout = Layout::new(acc.component, acc.shape, view.stride);
            let start = acc.byte_offset as usize;
            if count > 0 {
                let data = &view.bytes[start..start + (count - 1) * layout.stride + layout.span];
                let r = match acc.component {
                    Component::U8 => decode(data, count, &layout, &mut out, |b| {
                        Component::U8.read_u32(b)
                    }),
                    Component::U16 => decode(data, count, &layout, &mut out, |b| {
                        Component::U16.read_u32(b)
                    }),
                    Component::U32 => decode(data, count, &layout, &mut out, |b| {
                        Component::U32.read_u32(b)
                    }),
                    c => decode(data, count, &layout, &mut out, |b| c.read_u32(b)),
                };
                r.map_err(bad)?;
            }
        }
    }
    if let Some(sp) = &acc.sparse {
        let idx = sparse_indices(acc, sp, count)?;
        let vl = Layout::new(acc.component, acc.shape, None);
        let vstart = sp.values_offset as usize;
        for (j, &i) in idx.iter().enumerate() {
            let at = vstart + j * vl.stride;
            let e = &sp.values_view.bytes[at..at + vl.span];
            let mut v = [0u32; N];
            for (k, slot) in v.iter_mut().enumerate() {
                *slot = acc
                    .component
                    .read_u32(&e[vl.component_offset(k)..])
                    .ok_or_else(|| bad(i as usize))?;
            }
            out[i as usize] = v;
        }
    }
    Ok(out)
}

/// Decodes `count` elements of `N` components from `data` (already checked to hold them) with
/// `read`, which decodes one component from the start of a slice; `Err(i)` if element `i` has
/// a component `read` rejects.
#[inline(always)]
fn decode<T: Copy + Default, const N: usize>(
    data: &[u8],
    count: usize,
    layout: &Layout,
    out: &mut Vec<[T; N]>,
    read: impl Fn(&[u8]) -> Option<T>,
) -> Result<(), usize> {
    let offsets: [usize; N] = std::array::from_fn(|k| layout.component_offset(k));
    for i in 0..count {
        let e = &data[i * layout.stride..i * layout.stride + layout.span];
        let mut v = [T::default(); N];
        for (slot, &o) in v.iter_mut().zip(&offsets) {
            *slot = read(&e[o..]).ok_or(i)?;
        }
        out.push(v);
    }
    Ok(())
}

/// Reads and range-checks the sparse indices (sizes already checked by [`check`]).
fn sparse_indices(acc: &AccessorDesc, sp: &SparseDesc, count: usize) -> Result<Vec<u32>, String> {
    if !matches!(
        sp.indices_component,
        Component::U8 | Component::U16 | Component::U32
    ) {
        return Err(format!(
            "accessor {}: sparse indices must be unsigned integers, not {}",
            acc.index,
            sp.indices_component.name()
        ));
    }
    let n = sp.count as usize; // ≤ acc.count, which fitted in usize
    let csize = sp.indices_component.size();
    let start = sp.indices_offset as usize;
    let mut idx = Vec::with_capacity(n);
    for j in 0..n {
        let at = start + j * csize;
        let i = sp
            .indices_component
            .read_u32(&sp.indices_view.bytes[at..at + csize])
            .unwrap_or(u32::MAX);
        if i as usize >= count {
            return Err(format!(
                "accessor {}: sparse index {j} is {i}, beyond the accessor count {count}",
                acc.index
            ));
        }
        idx.push(i);
    }
    Ok(idx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(bytes: &[u8], stride: Option<usize>) -> ViewData<'_> {
        ViewData {
            index: 0,
            bytes,
            stride,
        }
    }

    fn acc<'a>(v: Option<ViewData<'a>>, count: u64, c: Component, s: Shape) -> AccessorDesc<'a> {
        AccessorDesc {
            index: 7,
            count,
            component: c,
            shape: s,
            normalized: false,
            view: v,
            byte_offset: 0,
            sparse: None,
        }
    }

    #[test]
    fn strided_floats() {
        let mut b = Vec::new();
        for i in 0..3 {
            for k in 0..3 {
                b.extend_from_slice(&((i * 10 + k) as f32).to_le_bytes());
            }
            b.extend_from_slice(&[0xAA; 4]); // interleaved padding
        }
        let a = acc(Some(view(&b, Some(16))), 3, Component::F32, Shape::Vec3);
        let v = read_f32::<3>(&a).unwrap();
        assert_eq!(v, vec![[0., 1., 2.], [10., 11., 12.], [20., 21., 22.]]);
    }

    #[test]
    fn normalized_ints() {
        let b = [255u8, 0, 128, 255, 0x81, 0x7f, 0, 0];
        let mut a = acc(Some(view(&b, None)), 1, Component::U8, Shape::Vec4);
        a.normalized = true;
        let v = read_f32::<4>(&a).unwrap();
        assert_eq!(v[0][0], 1.0);
        assert!((v[0][2] - 128.0 / 255.0).abs() < 1e-7);
        let mut a = acc(Some(view(&b[4..], None)), 1, Component::I8, Shape::Vec2);
        a.normalized = true;
        assert_eq!(read_f32::<2>(&a).unwrap(), vec![[-1.0, 1.0]]);
    }

    #[test]
    fn too_short_and_overflow() {
        let b = [0u8; 40];
        let a = acc(Some(view(&b, None)), 4, Component::F32, Shape::Vec3);
        let e = read_f32::<3>(&a).unwrap_err();
        assert!(e.contains("needs 48 bytes") && e.contains("has 40"), "{e}");
        let a = acc(
            Some(view(&b, Some(u32::MAX as usize))),
            u64::MAX,
            Component::F32,
            Shape::Vec3,
        );
        assert!(read_f32::<3>(&a).is_err());
    }

    #[test]
    fn zeros_and_sparse() {
        let idx = [1u16, 3];
        let ib: Vec<u8> = idx.iter().flat_map(|i| i.to_le_bytes()).collect();
        let vb: Vec<u8> = [5.0f32, 7.0].iter().flat_map(|f| f.to_le_bytes()).collect();
        let mut a = acc(None, 4, Component::F32, Shape::Scalar);
        a.sparse = Some(SparseDesc {
            count: 2,
            indices_view: view(&ib, None),
            indices_offset: 0,
            indices_component: Component::U16,
            values_view: view(&vb, None),
            values_offset: 0,
        });
        assert_eq!(read_f32::<1>(&a).unwrap(), vec![[0.], [5.], [0.], [7.]]);
        let bad = [9u16, 0];
        let ib: Vec<u8> = bad.iter().flat_map(|i| i.to_le_bytes()).collect();
        a.sparse.as_mut().unwrap().indices_view = view(&ib, None);
        assert!(read_f32::<1>(&a)
            .unwrap_err()
            .contains("beyond the accessor count"));
    }

    #[test]
    fn mat3_u8_columns_are_padded() {
        // MAT3 of u8: each column of 3 bytes is padded to 4 (§3.6.2.4).
        let b = [1u8, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9];
        let a = acc(Some(view(&b, None)), 1, Component::U8, Shape::Mat3);
        let v = read_u32::<9>(&a).unwrap();
        assert_eq!(v[0], [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    }

    #[test]
    fn ints_reject_negative() {
        let b = [0xffu8, 0xff];
        let a = acc(Some(view(&b, None)), 1, Component::I16, Shape::Scalar);
        assert!(read_u32::<1>(&a).is_err());
    }
}
