//! Work split in two halves done at once, on two cores.
//!
//! The planner decides each cluster on its own (`plan`), so the clusters
//! can be split in two and the halves decided at once: for a million
//! releases, about half the time. The split depends on the input alone
//! and the halves are joined in order, so the result is the same whether
//! a second thread ran or not (on one core, or where threads are not
//! available, as in WebAssembly): only the time differs.

use std::ops::Range;

/// Whether a second thread can run beside this one.
pub(crate) fn two_cores() -> bool {
    std::thread::available_parallelism().is_ok_and(|p| p.get() > 1)
}

/// `combine(work(0..k), work(k..n))`, `n` being the number of `weights`
/// and `k` where their sum is halved; the second `work` on another
/// thread where there is a second core and the weights add up to `worth`
/// at least (less is not worth starting a thread for).
pub(crate) fn in_two<T: Send>(
    weights: &[usize],
    worth: usize,
    work: impl Fn(Range<usize>) -> T + Sync,
    combine: impl FnOnce(T, T) -> T,
) -> T {
    let n = weights.len();
    let total: usize = weights.iter().sum();
    let k = halfway(weights, total);
    if total < worth || !two_cores() {
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

/// The position that splits the weights closest to two halves of
/// `total`: the first of them, if two are as close.
fn halfway(weights: &[usize], total: usize) -> usize {
    let mut best = (total, 0);
    let mut before: usize = 0;
    for at in 0..=weights.len() {
        let off = (2 * before).abs_diff(total);
        if off < best.0 {
            best = (off, at);
        }
        before += weights.get(at).copied().unwrap_or(0);
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_halves_split_the_weight_and_join_in_order() {
        assert_eq!(halfway(&[], 0), 0);
        assert_eq!(halfway(&[5], 5), 0);
        assert_eq!(halfway(&[1, 1, 1, 1], 4), 2);
        assert_eq!(halfway(&[10, 1, 1, 1], 13), 1);
        assert_eq!(halfway(&[1, 10, 1], 12), 1);
        assert_eq!(halfway(&[1, 1, 1, 10], 13), 3);
        for weights in [vec![], vec![3], vec![100; 5], vec![1, 2, 3, 4, 5]] {
            // Below and above the weight worth a thread.
            let joined = in_two(
                &weights,
                10,
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
