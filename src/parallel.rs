//! Work spread over the cores: at most a given number of threads, each taking the next piece of
//! work as it finishes one, and the results in the order of the pieces, whichever finished first,
//! so that output never depends on scheduling.

use std::sync::atomic::{AtomicUsize, Ordering};

/// How many threads run at once: the cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// `work(index)` for each index of `start_order` (a permutation of `0..start_order.len()`, the
/// order in which the pieces are started: the largest first keeps the cores busy to the end), on
/// at most `threads` threads at once. The results are in index order.
pub fn map_in_order<T: Send>(start_order: &[usize], threads: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let threads = threads.clamp(1, start_order.len().max(1));
    let mut done: Vec<(usize, T)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    while let Some(&index) = start_order.get(next.fetch_add(1, Ordering::Relaxed)) {
                        done.push((index, work(index)));
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    done.sort_unstable_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, result)| result).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn results_come_in_index_order_from_no_more_threads_than_asked() {
        let running = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        // Later pieces are quicker: they finish out of order.
        let order: Vec<usize> = (0..12).collect();
        let results = map_in_order(&order, 3, |index| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(30 - 2 * index as u64));
            running.fetch_sub(1, Ordering::SeqCst);
            index * 10
        });
        assert_eq!(results, (0..12).map(|index| index * 10).collect::<Vec<_>>());
        assert_eq!(most.load(Ordering::SeqCst), 3, "three at once, never more");
    }

    #[test]
    fn pieces_start_in_the_order_given() {
        let started = Mutex::new(Vec::new());
        let results = map_in_order(&[2, 0, 3, 1], 1, |index| {
            started.lock().unwrap().push(index);
            index
        });
        assert_eq!(*started.lock().unwrap(), [2, 0, 3, 1]);
        assert_eq!(results, [0, 1, 2, 3]);
        assert!(map_in_order(&[], 4, |index| index).is_empty());
    }
}
