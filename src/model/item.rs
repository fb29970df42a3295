//! The item a row selected or acted on (a PR, an issue, a branch), as an event keeps it.
//!
//! A ledger names an item on most of its rows, and nearly every item is different: 894 k
//! selections of 357 k items in the 2 M-row benchmark ledger. Interning them (one table of every
//! distinct text, shared by all threads) cost a quarter of reading the ledger: each new item is a
//! lookup in a table of hundreds of thousands of texts that the file streaming through the caches
//! has evicted. So items are not interned. An item is where its text is (4 bytes; the text is
//! kept once per row that named it) and a hash of the text (4 bytes), and two items are equal when
//! their texts are; a reader's recent items
//! answer the rows of the same round (`ItemTexts::keep` through `ingest::io::recent`), so a round's
//! effect row shares its selection row's text.
//!
//! A reader writes its items one after another into blocks of text of its own, without a lock or
//! a table; a block is handed to the process (`BLOCKS`) when it is full and when the reader is
//! done. Items made one at a time (`Item::from`, for the few items of logs and for tests) are kept
//! each on its own.

use std::hash::BuildHasher;
use std::num::NonZeroU32;
use std::sync::OnceLock;

/// An item's text, kept for the life of the process, with a hash of it: 8 bytes in an event,
/// `Option<Item>` too. Items with different hashes are different without a look at their texts,
/// which are scattered over megabytes: detectors group a million selections by item.
#[derive(Clone, Copy)]
pub struct Item {
    key: u32,
    place: NonZeroU32,
}

/// The blocks readers wrote their items into, by number: a block's text is set once its reader
/// has finished writing it, and every item it holds is read from there afterwards.
static BLOCKS: boxcar::Vec<OnceLock<Box<str>>> = boxcar::Vec::new();

/// Items made one at a time, each kept on its own.
static SINGLES: boxcar::Vec<Box<str>> = boxcar::Vec::new();

// An item's number, less one: the top bit says a single item (the rest is its place in
// `SINGLES`); otherwise 15 bits of block number and 16 bits of where its text starts in the block.
const SINGLE_BIT: u32 = 1 << 31;
const OFFSET_BITS: u32 = 16;
const OFFSET_MASK: u32 = (1 << OFFSET_BITS) - 1;
/// Blocks the process can number; more items than they hold (2 GiB of text) are kept singly.
const MAX_BLOCKS: usize = 1 << (31 - OFFSET_BITS);
/// Where the last text of a block may start.
const MAX_OFFSET: usize = OFFSET_MASK as usize;
/// The room a block starts with: its last text starts below `MAX_OFFSET` and most are short (a
/// block that grew by doubling would end with half of it unused until it is handed over).
const BLOCK_CAPACITY: usize = MAX_OFFSET + 1 + 256;
/// Texts longer than this are kept singly: a text's length is written before it as one
/// character whose code is the length (a block stays valid UTF-8), and codes from 0xD800 on are
/// not all characters.
const MAX_IN_BLOCK: usize = 0xD7FF;

enum Place {
    Single(usize),
    InBlock { block: usize, offset: usize },
}

/// The hash of an item's text that `Item::key` gives.
pub fn key_of(text: &str) -> u32 {
    // The top bits: Fx mixes those best.
    (rustc_hash::FxBuildHasher.hash_one(text) >> 32) as u32
}

impl Item {
    /// A hash of the text: equal items have equal keys.
    pub fn key(self) -> u32 {
        self.key
    }

    /// An order that puts equal items next to each other, reading texts only for items whose
    /// keys are equal (not the order of texts: see `Ord`).
    pub fn grouping_cmp(&self, other: &Item) -> std::cmp::Ordering {
        self.key.cmp(&other.key).then_with(|| {
            if self.place == other.place { std::cmp::Ordering::Equal } else { self.as_str().cmp(other.as_str()) }
        })
    }

    /// Where the text is kept, as a number: the same for two items only if one text was kept once.
    #[cfg(test)]
    pub(crate) fn place_for_tests(self) -> u32 {
        self.place.get()
    }

    fn place(self) -> Place {
        let number = self.place.get() - 1;
        if number & SINGLE_BIT == 0 {
            Place::InBlock { block: (number >> OFFSET_BITS) as usize, offset: (number & OFFSET_MASK) as usize }
        } else {
            Place::Single((number & !SINGLE_BIT) as usize)
        }
    }

    fn numbered(text: &str, number: u32) -> Item {
        Item { key: key_of(text), place: NonZeroU32::new(number + 1).expect("item numbers are below 2^32 - 1") }
    }

    fn single(text: &str) -> Item {
        let place = SINGLES.push(Box::from(text));
        let place = u32::try_from(place).ok().filter(|&place| place < SINGLE_BIT - 1).expect("fewer than 2^31 items");
        Item::numbered(text, SINGLE_BIT | place)
    }

    /// The item's text.
    ///
    /// # Panics
    /// For an item of a block whose reader has not finished (`ItemTexts` hands its blocks over
    /// when it is dropped): the readers of a case end before anything reads their events.
    pub fn as_str(self) -> &'static str {
        match self.place() {
            Place::Single(place) => &SINGLES[place],
            Place::InBlock { block, offset } => {
                let block = BLOCKS[block].get().expect("an item is read after its reader has finished");
                text_at(block, offset)
            }
        }
    }
}

/// The text written at `offset` of a block: its length as one character, then the text.
fn text_at(block: &str, offset: usize) -> &str {
    let rest = &block[offset..];
    let length = rest.chars().next().map_or(0, |length| length as usize);
    let start = rest.chars().next().map_or(0, char::len_utf8);
    &rest[start..start + length]
}

impl From<&str> for Item {
    /// An item kept on its own (readers of many items use `ItemTexts`).
    fn from(text: &str) -> Item {
        Item::single(text)
    }
}

impl std::ops::Deref for Item {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

/// Items are equal when their texts are, wherever each is kept.
impl PartialEq for Item {
    fn eq(&self, other: &Item) -> bool {
        self.key == other.key && (self.place == other.place || self.as_str() == other.as_str())
    }
}

impl Eq for Item {}

impl std::hash::Hash for Item {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u32(self.key);
    }
}

/// In the order of their texts.
impl Ord for Item {
    fn cmp(&self, other: &Item) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for Item {
    fn partial_cmp(&self, other: &Item) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Debug for Item {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

impl std::fmt::Display for Item {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

/// One reader's items, written one after another into a block of its own; the block goes to
/// the process when it is full and when the writer is dropped (its items can be read from then
/// on, by any thread).
#[derive(Default)]
pub struct ItemTexts {
    /// The block being written and its number (`None` until the first item).
    current: Option<(usize, String)>,
    /// The process has numbered all the blocks it can: items are kept singly from then on.
    out_of_blocks: bool,
}

impl ItemTexts {
    /// Keeps `text` as an item.
    pub fn keep(&mut self, text: &str) -> Item {
        if text.len() > MAX_IN_BLOCK || self.out_of_blocks {
            return Item::single(text);
        }
        if self.current.as_ref().is_some_and(|(_, block)| block.len() > MAX_OFFSET) {
            self.hand_over();
        }
        if self.current.is_none() {
            let number = BLOCKS.push(OnceLock::new());
            if number >= MAX_BLOCKS {
                self.out_of_blocks = true;
                return Item::single(text);
            }
            self.current = Some((number, String::with_capacity(BLOCK_CAPACITY)));
        }
        let Some((number, block)) = &mut self.current else { unreachable!("a block was just started") };
        let offset = block.len();
        // Every length up to `MAX_IN_BLOCK` is a character.
        block.push(char::from_u32(u32::try_from(text.len()).unwrap_or(0)).unwrap_or('\0'));
        block.push_str(text);
        let number = u32::try_from(*number << OFFSET_BITS | offset).expect("a block number below 2^15");
        Item::numbered(text, number)
    }

    /// The text of an item kept by this writer or already handed over (a reader compares a cell
    /// with its recent items before keeping it again).
    pub fn text(&self, item: Item) -> &str {
        match (item.place(), &self.current) {
            (Place::InBlock { block, offset }, Some((current, text))) if block == *current => text_at(text, offset),
            _ => item.as_str(),
        }
    }

    fn hand_over(&mut self) {
        if let Some((number, text)) = self.current.take() {
            // Only this writer sets its block.
            let _ = BLOCKS[number].set(text.into_boxed_str());
        }
    }
}

impl Drop for ItemTexts {
    fn drop(&mut self) {
        self.hand_over();
    }
}

/// Two different texts with the same key (`Item::key`), found by trying `PR-0`, `PR-1`, ...: for
/// tests that items whose hashes are alike are still told apart.
#[cfg(test)]
pub(crate) fn texts_with_one_key() -> (&'static str, &'static str) {
    static FOUND: OnceLock<(String, String)> = OnceLock::new();
    let (a, b) = FOUND.get_or_init(|| {
        let mut seen = std::collections::HashMap::new();
        (0u64..)
            .find_map(|n| {
                let text = format!("PR-{n}");
                seen.insert(key_of(&text), text.clone()).map(|earlier| (earlier, text))
            })
            .expect("a 32-bit hash repeats within 2^32 + 1 texts")
    });
    (a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_whose_keys_are_alike_are_still_different_and_grouped_apart() {
        let (a, b) = texts_with_one_key();
        let mut items = ItemTexts::default();
        let (a_kept, b_kept, a_again) = (items.keep(a), items.keep(b), items.keep(a));
        drop(items);
        assert_eq!(a_kept.key(), b_kept.key());
        assert_ne!(a_kept, b_kept);
        assert_eq!(a_kept, a_again);
        assert_eq!(a_kept, Item::from(a));
        let hasher = std::hash::RandomState::new();
        assert_eq!(hasher.hash_one(a_kept), hasher.hash_one(b_kept), "hashed by key: equal items hash alike");
        // The grouping order tells them apart, both ways round, and sorts equal items together.
        let order = a_kept.grouping_cmp(&b_kept);
        assert_ne!(order, std::cmp::Ordering::Equal);
        assert_eq!(b_kept.grouping_cmp(&a_kept), order.reverse());
        assert_eq!(a_kept.grouping_cmp(&a_again), std::cmp::Ordering::Equal);
        let mut sorted = [a_kept, b_kept, a_again, Item::from("PR-other"), b_kept];
        sorted.sort_by(Item::grouping_cmp);
        let runs: Vec<&str> = sorted.chunk_by(|x, y| x == y).map(|run| run[0].as_str()).collect();
        assert_eq!(runs.len(), 3, "each item in one run: {runs:?}");
    }

    #[test]
    fn items_read_back_as_written_across_blocks_and_threads() {
        // Enough text for several blocks, lengths from 0 to past what a block holds, and texts
        // that are not ASCII; written on two threads at once, read on this one.
        let texts = |thread: usize| -> Vec<String> {
            (0..40_000)
                .map(|n| match n % 7 {
                    0 => String::new(),
                    1 => format!("PR-{thread}-{n}"),
                    2 => format!("리뷰-{thread}-{n}"),
                    3 => "x".repeat(127 + n % 3),
                    4 => "y".repeat(2047 + n % 3),
                    5 if n % 5_000 == 5 => "z".repeat(MAX_IN_BLOCK + n % 3 - 1),
                    _ => format!("ISSUE-{n}"),
                })
                .collect()
        };
        let written: Vec<Vec<(String, Item)>> = std::thread::scope(|threads| {
            let writers: Vec<_> = (0..2)
                .map(|thread| {
                    threads.spawn(move || {
                        let mut items = ItemTexts::default();
                        texts(thread)
                            .into_iter()
                            .map(|text| {
                                let item = items.keep(&text);
                                assert_eq!(items.text(item), text, "read by its writer before hand-over");
                                (text, item)
                            })
                            .collect()
                    })
                })
                .collect();
            writers.into_iter().map(|writer| writer.join().unwrap()).collect()
        });
        for (text, item) in written.iter().flatten() {
            assert_eq!(item.as_str(), text);
        }
        let blocks: std::collections::HashSet<usize> = written
            .iter()
            .flatten()
            .filter_map(|(_, item)| match item.place() {
                Place::InBlock { block, .. } => Some(block),
                Place::Single(_) => None,
            })
            .collect();
        assert!(blocks.len() > 4, "several blocks were filled: {}", blocks.len());
        assert!(
            written
                .iter()
                .flatten()
                .any(|(text, item)| text.len() > MAX_IN_BLOCK && matches!(item.place(), Place::Single(_))),
            "a text too long for a block is kept singly"
        );
    }

    #[test]
    fn items_are_equal_hashed_and_ordered_by_their_text_wherever_kept() {
        use std::hash::BuildHasher;
        let mut items = ItemTexts::default();
        let in_block = items.keep("PR-4412");
        let again = items.keep("PR-4412");
        drop(items);
        let single = Item::from("PR-4412");
        assert_ne!(in_block.place, again.place, "kept twice");
        assert_eq!(in_block, again);
        assert_eq!(in_block, single);
        let hasher = std::hash::RandomState::new();
        assert_eq!(hasher.hash_one(in_block), hasher.hash_one(single));
        assert_ne!(single, Item::from("PR-4413"));
        assert!(Item::from("PR-4411") < single && single < Item::from("PR-4413"));
        assert_eq!(std::mem::size_of::<Option<Item>>(), 8);
    }
}
