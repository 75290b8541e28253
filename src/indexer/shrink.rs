//! The one loop that asks the provider again with a smaller range while it refuses one as too
//! large, for the follower and the history fetches (the sizes are [`super::range`]'s).

use std::future::Future;

use super::range::Shrinking;
use super::rpc::RpcFailure;

/// Fetches `[from, at most last]` in the widest range `sizing` allows, asking again with a
/// smaller range while the provider refuses one as too large (a [`RpcFailure::TooLarge`]).
/// Returns the range's last block and what `fetch` returned. A single block refused is a
/// transient failure; any other failure is returned as it is. Telling `sizing` of the success
/// is the caller's (the follower also weighs the logs it got).
pub async fn fetch_shrinking<S, T, F, Fut>(
    sizing: &mut S,
    from: u64,
    last: u64,
    mut fetch: F,
) -> Result<(u64, T), RpcFailure>
where
    S: Shrinking,
    F: FnMut(u64, u64) -> Fut,
    Fut: Future<Output = Result<T, RpcFailure>>,
{
    loop {
        let to = (from + sizing.next_span().max(1) - 1).min(last);
        match fetch(from, to).await {
            Ok(got) => return Ok((to, got)),
            Err(RpcFailure::TooLarge { message, suggested }) => {
                if !sizing.shrink(to - from + 1, suggested) {
                    return Err(RpcFailure::Transient(format!(
                        "even one block is refused: {message}"
                    )));
                }
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indexer::range::RangeSizer;

    /// A provider that refuses any range wider than `max` blocks, suggesting `suggest`; it
    /// records the ranges asked for and answers with the range's width.
    fn provider(
        max: u64,
        suggest: Option<u64>,
        asked: &mut Vec<(u64, u64)>,
    ) -> impl FnMut(u64, u64) -> std::future::Ready<Result<u64, RpcFailure>> + '_ {
        move |from, to| {
            asked.push((from, to));
            std::future::ready(if to - from + 1 > max {
                Err(RpcFailure::TooLarge {
                    message: "block range too large".into(),
                    suggested: suggest,
                })
            } else {
                Ok(to - from + 1)
            })
        }
    }

    #[tokio::test]
    async fn a_refused_range_is_asked_again_smaller() {
        let mut sizer = RangeSizer::new(1000, 1, 10_000);
        let mut asked = vec![];
        let got = fetch_shrinking(&mut sizer, 100, 5_000, provider(300, None, &mut asked)).await;
        assert_eq!(got.expect("fetched"), (349, 250));
        assert_eq!(asked, [(100, 1099), (100, 599), (100, 349)]);
        assert_eq!(
            sizer.size(),
            250,
            "the next range starts from the size accepted"
        );

        // A suggested span is taken as it is; the range never passes `last`.
        let mut sizer = RangeSizer::new(1000, 1, 10_000);
        let mut asked = vec![];
        let got = fetch_shrinking(&mut sizer, 0, 49, provider(30, Some(20), &mut asked)).await;
        assert_eq!(got.expect("fetched"), (19, 20));
        assert_eq!(asked, [(0, 49), (0, 19)]);
    }

    #[tokio::test]
    async fn a_single_block_refused_is_an_error() {
        let mut sizer = RangeSizer::new(8, 1, 8);
        let mut asked = vec![];
        let got = fetch_shrinking(&mut sizer, 10, 100, provider(0, None, &mut asked)).await;
        match got {
            Err(RpcFailure::Transient(m)) => {
                assert_eq!(m, "even one block is refused: block range too large")
            }
            other => panic!("expected a transient failure, got {other:?}"),
        }
        assert_eq!(asked, [(10, 17), (10, 13), (10, 11), (10, 10)]);
    }

    #[tokio::test]
    async fn other_failures_are_returned_at_once() {
        let mut sizer = RangeSizer::new(8, 1, 8);
        let mut calls = 0;
        let got: Result<(u64, ()), _> = fetch_shrinking(&mut sizer, 0, 100, |_, _| {
            calls += 1;
            std::future::ready(Err(RpcFailure::Permanent("no".into())))
        })
        .await;
        assert!(matches!(got, Err(RpcFailure::Permanent(_))));
        assert_eq!((calls, sizer.size()), (1, 8));
    }
}
