//! asset
