//! Deciding the clusters on two cores.
//!
//! Each cluster is decided on its own from what the planner has read-only,
//! so the clusters can be split in two and the halves decided at once:
//! a plan of a million releases takes its rules' time about halved. The
//! split depends on the snapshot alone and the halves are joined in
//! order, so the plan is the same whether a second thread ran or not (on
//! one core, or where threads are not available, as in WebAssembly): only
//! the time differs.

use std::ops::Range;

/// Less work than this (in [`in_two`]'s weights: about releases) is done
/// on the calling thread alone: starting a thread would cost more than
/// the half it takes over.
const WORTH_A_THREAD: usize = 20_000;

/// `combine(work(0..k), work(k..n))`, `n` being the number of `weights`
/// and `k` where their sum is halved; the second `work` on another
/// thread where there is a second core and enough work to share.
pub(super) fn in_two<T: Send>(
    weights: &[usize],
    work: impl Fn(Range<usize>) -> T + Sync,
    combine: impl FnOnce(T, T) -> T,
) -> T {
    let n = weights.len();
    let total: usize = weights.iter().sum();
    let k = halfway(weights, total);
    let two_cores = std::thread::available_parallelism().is_ok_and(|p| p.get() > 1);
    if total < WORTH_A_THREAD || !two_cores {
        return combine(work(0..k), work(k..n));
    }
    let work = &work;
    std::thread::scope(|scope| {
        let second = std::thread::Builder::new().spawn_scoped(scope, move || work(k..n));
        let first = work(0..k);
        let second = match second {
            Ok(thread) => match thread.join() {
                Ok(second) => second,
                // The work's own panic, carried on as one here would.
                Err(panic) => std::panic::resume_unwind(panic),
            },
            // No thread to be had: the work is done here, the same.
            Err(_) => work(k..n),
        };
        combine(first, second)
    })
}

/// The first position where the weights before it reach half of `total`.
fn halfway(weights: &[usize], total: usize) -> usize {
    let mut sum = 0;
    for (at, w) in weights.iter().enumerate() {
        if sum * 2 >= total {
            return at;
        }
        sum += w;
    }
    weights.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_halves_split_the_weight_and_join_in_order() {
        assert_eq!(halfway(&[], 0), 0);
        assert_eq!(halfway(&[5], 5), 1);
        assert_eq!(halfway(&[1, 1, 1, 1], 4), 2);
        assert_eq!(halfway(&[10, 1, 1, 1], 13), 1);
        assert_eq!(halfway(&[1, 1, 1, 10], 13), 3);
        for weights in [
            vec![],
            vec![3],
            vec![WORTH_A_THREAD; 5],
            vec![1, 2, 3, 4, 5],
        ] {
            let joined = in_two(
                &weights,
                |r| r.collect::<Vec<_>>(),
                |mut a, b| {
                    a.extend(b);
                    a
                },
            );
            assert_eq!(joined, (0..weights.len()).collect::<Vec<_>>());
        }
    }
}
