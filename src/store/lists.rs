//! Lists of values in SQL, written so that the number of distinct statement texts stays small.
//!
//! Every pooled connection keeps the statements it prepared, keyed by their text, up to
//! [`crate::store::database::STATEMENT_CACHE`] of them. An `IN (?, ?, …)` list or an `OR` of pairs has
//! one text per length, so a page of 1 to 100 records made up to 100 texts of each such
//! statement, and SQLite holds a compiled program for each in the server's own memory (an `OR`
//! of 100 pairs compiles to tens of KiB): a soak with pages of every size kept filling the 16
//! connections' caches for tens of minutes, and they were most of the server's heap (heaptrack:
//! 26 of 40 MiB in prepared statements after 11,000 requests; docs/BENCHMARKS.md, "Soak").
//!
//! [`padded`] repeats the last value up to the next power of two: the same rows (an `IN` list
//! and an `OR` do not care about repeats), and at most 8 texts for lists of 1 to 128 values.

/// `values` with its last value repeated up to the next power of two (empty stays empty).
pub(crate) fn padded<T: Clone>(mut values: Vec<T>) -> Vec<T> {
    if let Some(last) = values.last().cloned() {
        values.resize(values.len().next_power_of_two(), last);
    }
    values
}

#[cfg(test)]
mod tests {
    use super::padded;

    #[test]
    fn pads_to_a_power_of_two_with_the_last_value() {
        assert_eq!(padded(Vec::<u8>::new()), Vec::<u8>::new());
        assert_eq!(padded(vec![7]), vec![7]);
        assert_eq!(padded(vec![1, 2]), vec![1, 2]);
        assert_eq!(padded(vec![1, 2, 3]), vec![1, 2, 3, 3]);
        assert_eq!(padded(vec![1, 2, 3, 4, 5]), vec![1, 2, 3, 4, 5, 5, 5, 5]);
        assert_eq!(padded((0..100).collect::<Vec<_>>()).len(), 128);
    }

    #[test]
    fn lists_of_1_to_128_values_make_8_lengths() {
        let lengths: std::collections::BTreeSet<usize> =
            (1..=128).map(|n| padded(vec![0; n]).len()).collect();
        assert_eq!(lengths.len(), 8);
    }
}
