//! A small per-reader cache in front of the process-wide interner.
//!
//! Ledger rows repeat the ids, names and statuses of the few rounds running at the time. The
//! interner is one shared table of every distinct text, mostly out of cache and behind a lock;
//! the last few thousand texts a reader saw answer most lookups from a table that fits in cache.

use std::hash::{BuildHasher, BuildHasherDefault};

use rustc_hash::FxHasher;

use crate::model::Text;

/// Slots in the cache (2^12): enough for the rounds that overlap in time in a busy ledger.
const SLOT_BITS: u32 = 12;

pub struct RecentTexts {
    slots: Box<[Option<Text>]>,
    hasher: BuildHasherDefault<FxHasher>,
}

impl Default for RecentTexts {
    fn default() -> Self {
        RecentTexts { slots: vec![None; 1 << SLOT_BITS].into_boxed_slice(), hasher: BuildHasherDefault::default() }
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
}
