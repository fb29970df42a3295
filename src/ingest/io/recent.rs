//! A small per-reader cache in front of the process-wide interner.
//!
//! Ledger rows repeat the ids, names and statuses of the few rounds running at the time. The
//! interner is one shared table of every distinct text, mostly out of cache and behind a lock;
//! the last few thousand texts a reader saw answer most lookups from a table that fits in cache.
//! The same for the scopes of rows, by their cells as written (`scope_of_cells`), and for details.

use std::hash::{BuildHasher, BuildHasherDefault};

use rustc_hash::FxHasher;

use crate::model::event::{Extra, Handle};
use crate::model::item::ItemTexts;
use crate::model::{Item, Scope, Text};

/// Slots in the cache (2^12): enough for the rounds that overlap in time in a busy ledger.
const SLOT_BITS: u32 = 12;
/// Slots for details (2^8): statuses and reasons are few.
const EXTRA_BITS: u32 = 8;
/// Slots for the scope cells of recent rounds (2^10): a round's rows are seldom further apart.
const ROUND_BITS: u32 = 10;

/// The cells a row's scope is made of (run, job, slot, worker, sweep, queue), absent ones empty.
pub type ScopeCells<'a> = [&'a str; 6];

/// A recent row's scope cells, as written, and the scope they made.
#[derive(Default)]
struct RoundCells {
    /// The cells one after another; `ends` says where each ends.
    text: String,
    ends: [u16; 6],
    scope: Handle<Scope>,
}

impl RoundCells {
    fn holds(&self, cells: &ScopeCells<'_>) -> bool {
        let mut start = 0;
        // The lengths first: a row of another round usually differs in one of them.
        let lengths = cells.iter().zip(self.ends).all(|(cell, end)| {
            let same = usize::from(end) - start == cell.len();
            start = usize::from(end);
            same
        });
        let mut start = 0;
        lengths
            && cells.iter().zip(self.ends).all(|(cell, end)| {
                let kept = &self.text.as_bytes()[start..usize::from(end)];
                start = usize::from(end);
                same_bytes(kept, cell.as_bytes())
            })
    }
}

/// `a == b` for two slices of the same length, compared in place 8 bytes at a time: a row's
/// cells are a few dozen bytes, for which a call to `memcmp` each costs more than the comparison.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let ((a_words, a_rest), (b_words, b_rest)) = (a.as_chunks::<8>(), b.as_chunks::<8>());
    a_words.iter().zip(b_words).all(|(x, y)| u64::from_ne_bytes(*x) == u64::from_ne_bytes(*y))
        && a_rest.iter().zip(b_rest).all(|(x, y)| x == y)
}

pub struct RecentTexts {
    slots: Box<[Option<Text>]>,
    /// The same for items, which are kept by this reader, not interned (see `Item`): a round's
    /// effect row names the item its selection row named a moment before.
    items: ItemTexts,
    item_slots: Box<[Option<Item>]>,
    /// The same for details without lease columns (`Extra`): a ledger has a few, repeated.
    extras: Box<[Option<Handle<Extra>>]>,
    /// The scopes of recent rows by their cells as written, by the run cell's hash: every row of
    /// a round repeats its round's cells, and a row whose cells were seen recently needs none of
    /// them interned, nor its slot read, to know its scope.
    rounds: Box<[RoundCells]>,
    hasher: BuildHasherDefault<FxHasher>,
}

impl Default for RecentTexts {
    fn default() -> Self {
        RecentTexts {
            slots: vec![None; 1 << SLOT_BITS].into_boxed_slice(),
            items: ItemTexts::default(),
            item_slots: vec![None; 1 << SLOT_BITS].into_boxed_slice(),
            extras: vec![None; 1 << EXTRA_BITS].into_boxed_slice(),
            rounds: std::iter::repeat_with(RoundCells::default).take(1 << ROUND_BITS).collect(),
            hasher: BuildHasherDefault::default(),
        }
    }
}

impl RecentTexts {
    /// The interned `text`; a text seen recently is not looked up in the interner again.
    pub fn text(&mut self, text: &str) -> Text {
        // The hash only picks a slot (by its top bits: Fx mixes those best); a collision replaces
        // the older text and costs one lookup in the interner.
        let slot = &mut self.slots[(self.hasher.hash_one(text) >> (64 - SLOT_BITS)) as usize];
        match slot {
            Some(known) if known.as_str() == text => *known,
            _ => *slot.insert(Text::from(text)),
        }
    }

    /// `text` as an item: the recent item with that text, else kept anew.
    pub fn item(&mut self, text: &str) -> Item {
        let slot = (crate::model::item::key_of(text) >> (32 - SLOT_BITS)) as usize;
        match self.item_slots[slot] {
            Some(known) if self.items.text(known) == text => known,
            _ => *self.item_slots[slot].insert(self.items.keep(text)),
        }
    }

    /// The scope a row with these cells has: the one a recent row with the same cells got, else
    /// `make()`'s (kept for the rows after).
    pub fn scope_of_cells<E>(
        &mut self,
        cells: &ScopeCells<'_>,
        make: impl FnOnce(&mut Self) -> Result<Scope, E>,
    ) -> Result<Handle<Scope>, E> {
        let slot = (self.hasher.hash_one(cells[0]) >> (64 - ROUND_BITS)) as usize;
        if self.rounds[slot].holds(cells) {
            return Ok(self.rounds[slot].scope);
        }
        let scope = make(self)?;
        let scope = scope.interned();
        // Cells longer than 64 KiB together are not kept: such rows take the long way.
        if u16::try_from(cells.iter().map(|cell| cell.len()).sum::<usize>()).is_ok() {
            let kept = &mut self.rounds[slot];
            kept.text.clear();
            for (cell, end) in cells.iter().zip(&mut kept.ends) {
                kept.text.push_str(cell);
                *end = u16::try_from(kept.text.len()).unwrap_or(u16::MAX);
            }
            kept.scope = scope;
        }
        Ok(scope)
    }

    /// The interned `extra` (see `Extra::interned`); a detail seen recently, without lease
    /// columns, is not looked up in the process-wide set again. (Lease columns differ on nearly
    /// every row: they go to the set.)
    pub fn extra(&mut self, extra: Extra) -> Handle<Extra> {
        if extra.lease.is_some() {
            return extra.interned();
        }
        let slot = &mut self.extras[(self.hasher.hash_one(extra.detail) >> (64 - EXTRA_BITS)) as usize];
        match slot {
            Some(known) if **known == extra => *known,
            _ => *slot.insert(extra.interned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_compared_in_words_are_equal_exactly_when_they_are_the_same() {
        for len in 0..40 {
            let a: Vec<u8> = (b'a'..=b'z').cycle().take(len).collect();
            assert!(same_bytes(&a, &a.clone()), "length {len}");
            for at in 0..len {
                for change in [1u8, 0x80, 0xff] {
                    let mut b = a.clone();
                    b[at] ^= change;
                    assert!(!same_bytes(&a, &b), "length {len}, byte {at} ^ {change:#x}");
                    assert!(!same_bytes(&b, &a), "length {len}, byte {at} ^ {change:#x}, swapped");
                }
            }
        }
    }

    #[test]
    fn the_same_text_gives_the_same_interned_text() {
        let mut recent = RecentTexts::default();
        let a = recent.text("run-261007-0933-a");
        assert_eq!(recent.text("run-261007-0933-a"), a);
        assert_eq!(a, Text::from("run-261007-0933-a"));
        // Thousands of other texts later (the slot may have been reused), still the same text.
        for n in 0..10_000 {
            recent.text(&format!("run-{n}"));
        }
        assert_eq!(recent.text("run-261007-0933-a"), a);
        assert_ne!(recent.text("run-261007-0933-b"), a);
    }

    #[test]
    fn a_recent_item_is_shared_and_items_are_told_apart_by_text() {
        let mut recent = RecentTexts::default();
        let selected = recent.item("PR-4412");
        let posted = recent.item("PR-4412");
        assert_eq!(selected.place_for_tests(), posted.place_for_tests(), "the recent item, not a new one");
        assert_eq!(recent.items.text(posted), "PR-4412", "read from the block being written");
        let (a_text, b_text) = crate::model::item::texts_with_one_key();
        let (a, b) = (recent.item(a_text), recent.item(b_text));
        // Thousands of other items later (the slot may have been reused), still equal by text.
        for n in 0..10_000 {
            recent.item(&format!("ISSUE-{n}"));
        }
        let again = recent.item("PR-4412");
        // Items are compared once their reader is done with them.
        drop(recent);
        assert_eq!(again, selected);
        assert_eq!(again.as_str(), "PR-4412");
        assert_ne!(a, b, "one key, two texts");
        assert_eq!(a.key(), b.key());
        assert_eq!((a.as_str(), b.as_str()), (a_text, b_text));
    }

    #[test]
    fn rows_with_the_cells_of_a_recent_row_take_its_scope_without_making_one() {
        let mut recent = RecentTexts::default();
        let made = |run: &str, worker: &str| Scope {
            run_id: Some(run.into()),
            worker: Some(worker.into()),
            ..Scope::default()
        };
        let making = std::cell::Cell::new(0);
        let scope_of = |recent: &mut RecentTexts, cells: ScopeCells<'_>| {
            recent.scope_of_cells(&cells, |_| {
                making.set(making.get() + 1);
                Ok::<_, ()>(made(cells[0], cells[3]))
            })
        };
        let first = scope_of(&mut recent, ["run-1", "", "", "api-1", "", ""]).unwrap();
        assert_eq!(*first, made("run-1", "api-1"));
        assert_eq!(scope_of(&mut recent, ["run-1", "", "", "api-1", "", ""]).unwrap(), first);
        assert_eq!(making.get(), 1, "the second row took the first's scope");
        let other = scope_of(&mut recent, ["run-1", "", "", "api-2", "", ""]).unwrap();
        assert_eq!(*other, made("run-1", "api-2"));
        assert_eq!(making.get(), 2);
        // A failure to make a scope (a malformed slot) is passed on, and nothing is kept.
        let failed = recent.scope_of_cells(&["run-1", "", "bad", "api-2", "", ""], |_| Err("malformed slot"));
        assert_eq!(failed, Err("malformed slot"));
        assert_eq!(scope_of(&mut recent, ["run-1", "", "", "api-2", "", ""]).unwrap(), other);
    }
}
