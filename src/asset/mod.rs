//! asset
pub mod export;
