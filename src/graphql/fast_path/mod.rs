//! The fast path: what answers a request without async-graphql's per-field resolution, and
//! what finishes its answer. Every part gives the answer the ordinary resolvers would (the
//! `graphql_api` and `graphql_http` tests ask the same documents each way).
//!
//! - [`plain`]: a list's page whose nodes ask only plain fields, written in one pass from the
//!   page's answer;
//! - [`written`]: over HTTP, such a page written as JSON text while the request runs, and the
//!   response written around it;
//! - [`documents`]: parsed documents kept by their text, so a document sent again is not
//!   parsed again;
//! - [`order`]: the answer's fields put back in the document's order.

pub mod documents;
pub mod order;
pub mod plain;
pub mod written;
