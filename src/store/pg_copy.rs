//! PostgreSQL's binary `COPY` format, written and read: rows streamed to and from the server
//! without a statement per batch or an array per column (`super::backfill_balances` sums a
//! chain's balances this way). The format: a fixed header, then per row a 16-bit field count
//! and per field a 32-bit length (−1: NULL) and its bytes in the type's binary form, then −1
//! as a row count (<https://www.postgresql.org/docs/current/sql-copy.html>).

use std::sync::Arc;

use sea_orm::{DbErr, RuntimeErr};

/// The header of every binary `COPY`: the signature, no flags, no extension.
const HEADER: &[u8; 19] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";

/// A sqlx error of a statement that writes, as sea-orm reports it (the store's one error type).
pub(super) fn error(e: sea_orm::sqlx::Error) -> DbErr {
    DbErr::Exec(RuntimeErr::SqlxError(Arc::new(e)))
}

/// Rows in binary `COPY` form, built field by field.
#[derive(Debug)]
pub(super) struct CopyWriter {
    buf: Vec<u8>,
}

impl Default for CopyWriter {
    fn default() -> Self {
        Self {
            buf: HEADER.to_vec(),
        }
    }
}

impl CopyWriter {
    /// Starts a row of `fields` fields.
    pub(super) fn row(&mut self, fields: i16) -> &mut Self {
        self.buf.extend_from_slice(&fields.to_be_bytes());
        self
    }

    /// A `bytea` field.
    pub(super) fn bytes(&mut self, b: &[u8]) -> &mut Self {
        let len = i32::try_from(b.len()).unwrap_or(i32::MAX);
        self.buf.extend_from_slice(&len.to_be_bytes());
        self.buf.extend_from_slice(b);
        self
    }

    /// An `int8` field.
    pub(super) fn int8(&mut self, v: i64) -> &mut Self {
        self.buf.extend_from_slice(&8i32.to_be_bytes());
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }

    /// An `int4` field.
    pub(super) fn int4(&mut self, v: i32) -> &mut Self {
        self.buf.extend_from_slice(&4i32.to_be_bytes());
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }

    /// A NULL field.
    pub(super) fn null(&mut self) -> &mut Self {
        self.buf.extend_from_slice(&(-1i32).to_be_bytes());
        self
    }

    /// Bytes written so far.
    pub(super) fn len(&self) -> usize {
        self.buf.len()
    }

    /// Takes what is written so far, to send it (the next bytes continue the stream).
    pub(super) fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }

    /// Ends the stream: what is left to send.
    pub(super) fn finish(mut self) -> Vec<u8> {
        self.buf.extend_from_slice(&(-1i16).to_be_bytes());
        self.buf
    }
}

/// Reads rows of binary `COPY` form from chunks as they arrive, whatever their boundaries.
#[derive(Debug, Default)]
pub(super) struct CopyReader {
    buf: Vec<u8>,
    at: usize,
    header_read: bool,
    ended: bool,
}

impl CopyReader {
    /// Appends a chunk received.
    pub(super) fn push(&mut self, chunk: &[u8]) {
        if self.at > 0 && self.at == self.buf.len() {
            self.buf.clear();
            self.at = 0;
        } else if self.at > (1 << 20) {
            self.buf.drain(..self.at);
            self.at = 0;
        }
        self.buf.extend_from_slice(chunk);
    }

    /// The next complete row's fields (`None` a NULL), or `None` until more bytes arrive (or
    /// after the end).
    pub(super) fn next_row(&mut self) -> Result<Option<Vec<Option<&[u8]>>>, DbErr> {
        if !self.header_read {
            if self.buf.len() - self.at < HEADER.len() {
                return Ok(None);
            }
            if self.buf[self.at..self.at + 11] != HEADER[..11] {
                return Err(bad("the stream does not start with PGCOPY's signature"));
            }
            let ext = u32::from_be_bytes(self.array(self.at + 15)) as usize;
            if self.buf.len() - self.at < HEADER.len() + ext {
                return Ok(None);
            }
            self.at += HEADER.len() + ext;
            self.header_read = true;
        }
        if self.ended || self.buf.len() - self.at < 2 {
            return Ok(None);
        }
        let count = i16::from_be_bytes(self.array(self.at));
        if count == -1 {
            self.ended = true;
            self.at += 2;
            return Ok(None);
        }
        // Find the row's end before handing out its fields.
        let mut spans = Vec::with_capacity(count.max(0) as usize);
        let mut p = self.at + 2;
        for _ in 0..count {
            if self.buf.len() < p + 4 {
                return Ok(None);
            }
            let len = i32::from_be_bytes(self.array(p));
            p += 4;
            if len < 0 {
                spans.push(None);
                continue;
            }
            let len = len as usize;
            if self.buf.len() < p + len {
                return Ok(None);
            }
            spans.push(Some((p, len)));
            p += len;
        }
        self.at = p;
        Ok(Some(
            spans
                .into_iter()
                .map(|s| s.map(|(p, len)| &self.buf[p..p + len]))
                .collect(),
        ))
    }

    /// Whether the stream's end marker was read.
    pub(super) fn ended(&self) -> bool {
        self.ended
    }

    fn array<const N: usize>(&self, p: usize) -> [u8; N] {
        let mut a = [0u8; N];
        a.copy_from_slice(&self.buf[p..p + N]);
        a
    }
}

fn bad(what: &str) -> DbErr {
    DbErr::Custom(format!("binary COPY: {what}"))
}

/// A `bytea` field that may not be NULL.
pub(super) fn field<'a>(f: Option<&'a [u8]>, name: &str) -> Result<&'a [u8], DbErr> {
    f.ok_or_else(|| bad(&format!("{name} is NULL")))
}

/// An `int8` field that may not be NULL.
pub(super) fn int8(f: Option<&[u8]>, name: &str) -> Result<i64, DbErr> {
    let b = field(f, name)?;
    let a: [u8; 8] = b
        .try_into()
        .map_err(|_| bad(&format!("{name} is not 8 bytes")))?;
    Ok(i64::from_be_bytes(a))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the writer writes, the reader reads back, whatever the chunks it arrives in.
    #[test]
    fn rows_written_read_back_in_any_chunks() {
        let mut w = CopyWriter::default();
        for i in 0..50i64 {
            w.row(3)
                .bytes(&[i as u8; 20])
                .int8(i - 25)
                .bytes(&i.to_be_bytes()[7 - (i as usize % 8)..]);
        }
        let bytes = w.finish();
        for chunk in [1, 2, 7, 19, 64, bytes.len()] {
            let mut r = CopyReader::default();
            let mut rows = Vec::new();
            for c in bytes.chunks(chunk) {
                r.push(c);
                while let Some(row) = r.next_row().expect("row") {
                    let a = field(row[0], "a").expect("a").to_vec();
                    let b = int8(row[1], "b").expect("b");
                    let c = field(row[2], "c").expect("c").to_vec();
                    rows.push((a, b, c));
                }
            }
            assert!(r.ended(), "chunks of {chunk}");
            assert_eq!(rows.len(), 50, "chunks of {chunk}");
            for (i, (a, b, c)) in rows.into_iter().enumerate() {
                let i = i as i64;
                assert_eq!(a, vec![i as u8; 20]);
                assert_eq!(b, i - 25);
                assert_eq!(c, i.to_be_bytes()[7 - (i as usize % 8)..].to_vec());
            }
        }
    }

    #[test]
    fn a_stream_without_the_signature_is_refused() {
        let mut r = CopyReader::default();
        r.push(b"COPYPG\n\xff\r\n\0\0\0\0\0\0\0\0\0\0\x01");
        assert!(r.next_row().is_err());
    }
}
