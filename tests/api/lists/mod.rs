//! Spam lists, verified allow-lists, labels, token lists, the spam heuristics and the admin's
//! overrides, black-box on every backend: imported through the functions the `tokenql lists` and
//! `tokenql contract` commands run (and through the real binary), read back through REST and
//! GraphQL. The expected flags and labels come from the bundled files, read here independently.

mod binary;
mod bundled;
mod chain;
mod overrides;
mod support;
