//! A small per-reader cache in front of the process-wide interner.
//!
//! Ledger rows repeat the ids, names and statuses of the few rounds running at the time. The
//! interner is one shared table of every distinct text, mostly out of cache and behind a lock;
//! the last few thousand texts a reader saw answer most lookups from a table that fits in cache.

use std::hash::{BuildHasher, BuildHasherDefault};

use rustc_hash::FxHasher;

use crate::model::event::{Extra, Handle};
use crate::model::{Scope, Text};

/// Slots in the cache (2^12): enough for the rounds that overlap in time in a busy ledger.
const SLOT_BITS: u32 = 12;
/// Slots for details (2^8): statuses and reasons are few.
const EXTRA_BITS: u32 = 8;

pub struct RecentTexts {
    slots: Box<[Option<Text>]>,
    /// The same for the scopes of rows (job, run, slot, worker): every row of a round has its
    /// round's.
    scopes: Box<[Option<Handle<Scope>>]>,
    /// The same for details without lease columns (`Extra`): a ledger has a few, repeated.
    extras: Box<[Option<Handle<Extra>>]>,
    hasher: BuildHasherDefault<FxHasher>,
}

impl Default for RecentTexts {
    fn default() -> Self {
        RecentTexts {
            slots: vec![None; 1 << SLOT_BITS].into_boxed_slice(),
            scopes: vec![None; 1 << SLOT_BITS].into_boxed_slice(),
            extras: vec![None; 1 << EXTRA_BITS].into_boxed_slice(),
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

    /// The interned `scope` (see `Scope::interned`); a scope seen recently is not looked up in
    /// the process-wide set again.
    pub fn scope(&mut self, scope: Scope) -> Handle<Scope> {
        let slot = &mut self.scopes[(self.hasher.hash_one(scope) >> (64 - SLOT_BITS)) as usize];
        match slot {
            Some(known) if **known == scope => *known,
            _ => *slot.insert(scope.interned()),
        }
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
    fn a_recent_scope_is_the_interned_one() {
        let mut recent = RecentTexts::default();
        let scope = Scope { run_id: Some("run-1".into()), worker: Some("api-1".into()), ..Scope::default() };
        let kept = recent.scope(scope);
        assert_eq!(*kept, scope);
        assert_eq!(kept, scope.interned());
        assert_eq!(recent.scope(scope), kept);
        let other = Scope { worker: Some("api-2".into()), ..scope };
        assert_eq!(*recent.scope(other), other);
    }
}
