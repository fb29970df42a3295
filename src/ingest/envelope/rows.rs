//! What each line handed to an envelope's log reader came from: the export's line, the record's
//! time and the instance that wrote it. Every line needs one, since the log reader decides later,
//! on its own thread, which lines become events; about 1% of a server log's lines do.
//!
//! They are packed. As a list of 32-byte rows they held 339 MB for the 10.6 M lines of the
//! benchmark's 1.3 GB kubectl export, and made its peak 473 MB against the plain log's 175 MB
//! (docs/performance.md). Each row is written as its differences from the row before, in LEB128
//! varints (the line's step with two flags, the time's step when it has one, the instance when it
//! changes): 5.5 bytes for a line of kubectl's. The state is kept in full every `EVERY` rows, so
//! a row is found by decoding at most `EVERY` of them.

use rustc_hash::FxHashMap;

use crate::model::{Moment, Text};

/// What a line handed to the log reader came from (its line number there is its place + 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Row {
    /// The export's line (the record's first).
    pub line: u64,
    /// The envelope's time of the record.
    pub at: Option<Moment>,
    /// The instance that wrote the line, as the envelope labels it.
    pub instance: Option<Text>,
}

/// Rows between two kept states: a lookup decodes at most this many; each state costs 32 bytes,
/// half a byte per row.
const EVERY: usize = 64;

/// The row before the next one, as decoding it needs: the time is the last row's that had one.
#[derive(Debug, Clone, Copy, Default)]
struct State {
    line: u64,
    nanos: i64,
    instance: u32,
}

const HAS_TIME: u8 = 1;
const NEW_INSTANCE: u8 = 2;
const FLAG_BITS: u32 = 2;

/// The rows, in the order the log reader got their lines.
pub(super) struct Rows {
    bytes: Vec<u8>,
    /// Where rows 0, `EVERY`, 2 × `EVERY`, ... start, and the state before each.
    starts: Vec<(usize, State)>,
    /// The instances met, by number; 0 is none.
    instances: Vec<Option<Text>>,
    instance_numbers: FxHashMap<Text, u32>,
    last: State,
    len: usize,
    in_place: bool,
    /// The last row read (`get`): its place, where the next row starts and the state after it.
    last_read: std::cell::Cell<Option<(usize, usize, State)>>,
}

impl Rows {
    pub fn new() -> Self {
        Rows {
            bytes: Vec::new(),
            starts: Vec::new(),
            instances: vec![None],
            instance_numbers: FxHashMap::default(),
            last: State::default(),
            len: 0,
            in_place: true,
            last_read: std::cell::Cell::new(None),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether every row's line is its place + 1: the export's lines are the log reader's.
    pub fn in_place(&self) -> bool {
        self.in_place
    }

    pub fn push(&mut self, row: Row) {
        if self.len.is_multiple_of(EVERY) {
            self.starts.push((self.bytes.len(), self.last));
        }
        let instance = match row.instance {
            None => 0,
            Some(text) => *self.instance_numbers.entry(text).or_insert_with(|| {
                self.instances.push(Some(text));
                u32::try_from(self.instances.len() - 1).unwrap_or(u32::MAX)
            }),
        };
        let flags =
            if row.at.is_some() { HAS_TIME } else { 0 } | if instance == self.last.instance { 0 } else { NEW_INSTANCE };
        // Steps wrap: any two values have one, and decoding adds it back the same way. The flags
        // ride below the line's step, so a step of one line and the flags are one byte.
        let step = zigzag(row.line.wrapping_sub(self.last.line).cast_signed());
        put(&mut self.bytes, u128::from(step) << FLAG_BITS | u128::from(flags));
        if let Some(at) = row.at {
            put(&mut self.bytes, u128::from(zigzag(at.nanos().wrapping_sub(self.last.nanos))));
            self.last.nanos = at.nanos();
        }
        if flags & NEW_INSTANCE != 0 {
            put(&mut self.bytes, u128::from(instance));
            self.last.instance = instance;
        }
        self.last.line = row.line;
        self.in_place &= row.line == self.len as u64 + 1;
        self.len += 1;
    }

    /// The row at `place` (`None` past the last).
    pub fn get(&self, place: usize) -> Option<Row> {
        if place >= self.len {
            return None;
        }
        // From the row after the last one read when it is before this one in the same stretch
        // (the events are looked up in line order), else from the stretch's kept state.
        let (mut next, mut at, mut state) = match self.last_read.get() {
            Some((last, at, state)) if last < place && last / EVERY == place / EVERY => (last + 1, at, state),
            _ => {
                let (at, state) = self.starts[place / EVERY];
                (place - place % EVERY, at, state)
            }
        };
        let mut row = None;
        while next <= place {
            next += 1;
            let first = take(&self.bytes, &mut at);
            let flags = low_bits(first) & (HAS_TIME | NEW_INSTANCE);
            state.line = state.line.wrapping_add(unzigzag(first >> FLAG_BITS).cast_unsigned());
            let time = if flags & HAS_TIME == 0 {
                None
            } else {
                state.nanos = state.nanos.wrapping_add(unzigzag(take(&self.bytes, &mut at)));
                Some(Moment::from_nanos(state.nanos))
            };
            if flags & NEW_INSTANCE != 0 {
                state.instance = u32::try_from(take(&self.bytes, &mut at)).unwrap_or(0);
            }
            let instance = self.instances.get(state.instance as usize).copied().flatten();
            row = Some(Row { line: state.line, at: time, instance });
        }
        self.last_read.set(Some((place, at, state)));
        row
    }

    /// Bytes held for the rows (the packed rows and the kept states), for tests.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.bytes.len() + self.starts.len() * std::mem::size_of::<(usize, State)>()
    }
}

fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)).cast_unsigned()
}

/// A zigzagged step back as the step; only `put`'s values are read, so it fits in 64 bits.
#[allow(clippy::cast_possible_truncation)] // the low 64 bits: all a step has
fn unzigzag(value: u128) -> i64 {
    let value = value as u64;
    (value >> 1).cast_signed() ^ -((value & 1).cast_signed())
}

#[allow(clippy::cast_possible_truncation)] // the low 8 bits, masked
fn low_bits(value: u128) -> u8 {
    (value & 0xff) as u8
}

/// `value` as a LEB128 varint: 7 bits a byte, the high bit set on all but the last. In 128 bits,
/// so that a 64-bit step and the flags below it are one number. Written to the stack and then
/// appended at once: a push per byte was a twelfth of reading a kubectl export (perf).
#[allow(clippy::cast_possible_truncation)] // the low 7 bits, masked
fn put(bytes: &mut Vec<u8>, mut value: u128) {
    let mut out = [0u8; 19];
    let mut len = 0;
    while value >= 0x80 {
        out[len] = ((value & 0x7f) as u8) | 0x80;
        value >>= 7;
        len += 1;
    }
    out[len] = (value & 0x7f) as u8;
    bytes.extend_from_slice(&out[..=len]);
}

/// The varint at `*at`, moving past it. Only `put`'s bytes are read, so they always end.
fn take(bytes: &[u8], at: &mut usize) -> u128 {
    // The first 63 bits in 64-bit steps, the rest (a step near the ends of 64 bits) in 128.
    let mut small = 0u64;
    let mut shift = 0;
    while shift < 63 {
        let Some(&byte) = bytes.get(*at) else { return u128::from(small) };
        *at += 1;
        small |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return u128::from(small);
        }
        shift += 7;
    }
    let mut value = u128::from(small);
    while let Some(&byte) = bytes.get(*at) {
        *at += 1;
        value |= u128::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
        if byte & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moment(nanos: i64) -> Moment {
        Moment::from_nanos(nanos)
    }

    #[test]
    fn every_row_reads_back_as_pushed_across_kept_states() {
        let (web, api) = (Some(Text::from("pod=web-1")), Some(Text::from("pod=api-2")));
        let mut pushed: Vec<Row> = Vec::new();
        // Lines that go up, back (a newest-first export read from its end), jump and repeat;
        // times absent, going back, at both ends of the range; instances that come and go.
        for i in 0..1000u16 {
            let (small, wide) = (u64::from(i), i64::from(i));
            let line = match i % 7 {
                0 => 5000 - small,
                3 => u64::MAX - small,
                5 => pushed.last().map_or(1, |row| row.line),
                _ => small + 1,
            };
            let at = match i % 11 {
                0 => None,
                1 => Some(moment(i64::MIN + wide)),
                2 => Some(moment(i64::MAX - wide)),
                4 => Some(moment(1_790_000_000_000_000_000 - wide * 1_000_000)),
                _ => Some(moment(1_790_000_000_000_000_000 + wide * 1_234_567)),
            };
            let instance = match i % 13 {
                0..=5 => web,
                6 => None,
                _ => api,
            };
            pushed.push(Row { line, at, instance });
        }
        let mut rows = Rows::new();
        for row in &pushed {
            rows.push(*row);
        }
        assert_eq!(rows.len(), pushed.len());
        for (place, row) in pushed.iter().enumerate() {
            assert_eq!(rows.get(place), Some(*row), "row {place}");
        }
        // In any order: backwards, jumping, the same row twice.
        for place in (0..pushed.len()).rev().step_by(7).chain([3, 3, 900, 65, 64, 63, 129]) {
            assert_eq!(rows.get(place), Some(pushed[place]), "row {place}");
        }
        assert_eq!(rows.get(pushed.len()), None);
        assert!(!rows.in_place());
        assert!(Rows::new().get(0).is_none() && Rows::new().is_empty());
    }

    #[test]
    fn an_export_of_one_line_per_record_is_in_place_in_under_six_bytes_a_row() {
        // kubectl logs --timestamps: one record a line, times a few milliseconds apart, one pod.
        let pod = Some(Text::from("pod=web-1 container=app"));
        let first = 1_790_000_000_123_456_789;
        let mut rows = Rows::new();
        let count: u32 = 100_000;
        for i in 0..count {
            let at = Some(moment(first + i64::from(i) * 3_217_411));
            rows.push(Row { line: u64::from(i) + 1, at, instance: pod });
        }
        assert!(rows.in_place());
        // 32 bytes as a plain row; here a line step of 1 with the flags (1 byte), a time step of
        // 3.2 ms in nanoseconds (4) and the kept states (0.5).
        assert!(rows.held() < 6 * count as usize, "{} bytes for {count} rows", rows.held());
        let last = rows.get(count as usize - 1).and_then(|row| row.at);
        assert_eq!(last, Some(moment(first + i64::from(count - 1) * 3_217_411)));
        assert_eq!(rows.get(77).map(|row| (row.line, row.instance)), Some((78, pod)));
    }

    #[test]
    fn varints_and_zigzag_round_trip_at_the_edges() {
        for value in [0, 1, -1, 63, -64, 64, i64::MAX, i64::MIN, 1 << 40, -(1 << 40)] {
            let mut bytes = Vec::new();
            put(&mut bytes, u128::from(zigzag(value)));
            let mut at = 0;
            assert_eq!(unzigzag(take(&bytes, &mut at)), value);
            assert_eq!(at, bytes.len());
        }
        let mut bytes = Vec::new();
        // The widest first number of a row: a step of 64 bits and both flags.
        let widest = u128::from(u64::MAX) << FLAG_BITS | 3;
        put(&mut bytes, widest);
        assert_eq!(bytes.len(), 10);
        assert_eq!(take(&bytes, &mut 0), widest);
    }
}
