//! The metadata worker (helper A).
