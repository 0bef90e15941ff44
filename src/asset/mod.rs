//! Reading and writing assets: glTF in, glTF and OBJ out.

pub mod obj;
