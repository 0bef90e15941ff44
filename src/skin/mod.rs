//! skin
