//! The direction of a list: `order=ASC|DESC`.

use super::ParseError;

/// The order of a list by its position on the chain (block number, then log index).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum SortOrder {
    /// Oldest first.
    Asc,
    /// Newest first (the default of every list).
    #[default]
    Desc,
}

impl SortOrder {
    /// `ASC` or `DESC`, in any letter case.
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        if s.eq_ignore_ascii_case("asc") {
            Ok(Self::Asc)
        } else if s.eq_ignore_ascii_case("desc") {
            Ok(Self::Desc)
        } else {
            Err(ParseError::new(format!(
                "'{}' is not an order; expected ASC or DESC",
                s.chars().take(64).collect::<String>()
            )))
        }
    }

    /// `ASC` or `DESC`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Asc => "ASC",
            Self::Desc => "DESC",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_directions_in_any_case() {
        assert_eq!(SortOrder::parse("ASC"), Ok(SortOrder::Asc));
        assert_eq!(SortOrder::parse("desc"), Ok(SortOrder::Desc));
        assert_eq!(SortOrder::parse("Desc"), Ok(SortOrder::Desc));
        assert!(SortOrder::parse("up").is_err());
        assert!(SortOrder::parse("").is_err());
        assert_eq!(SortOrder::default(), SortOrder::Desc);
    }
}
