//! A source that can be read only once (standard input, or a FIFO or device given by flag) is
//! copied to a temporary file while it is read, so that it is read as a file is: its events keep
//! only where their lines are, and the report reads the lines it cites back from the copy. Without
//! the copy every event would keep its line's text, three times the memory of the same file.
//!
//! The copy is made on a thread of its own, a block at a time, as fast as the source gives it
//! (`Growth`): a pipe's writer (`cat`, `zcat`) is never held up by the parsing, and no parsing
//! thread writes. The parsing reads the copy as it grows (`Growing`), from its start; once the
//! source has ended, what the first part has not reached is split as a file is, and a second part
//! reads from the middle of it on another thread (`Growth::split`). So a pipe that gives its bytes
//! as fast as a file is parsed on two cores as the file is, and a slower one at the pace it comes.
//! Memory holds a block; the disk holds the copy, which runs at most 4 GiB ahead of what its
//! reader has taken (`LEAD`) and stops a block after its reader does (an input without end,
//! `/dev/zero` through a FIFO, refused as binary at `--max-line-bytes`).
//! Standard input that is a regular file not yet read from is read in place instead
//! (`Spool::InPlace`).

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use crate::error::{Error, Result};
use crate::ingest::SourceSpec;

/// Where a source read once is read again from: its temporary copy (removed when the last spec
/// holding it is dropped), or, for standard input that is a regular file at its start (`< file`),
/// that file itself, through `/proc/self/fd/0` (Linux): no copy, and read in two parts as a file
/// is.
#[derive(Debug)]
pub enum Spool {
    Copy { path: tempfile::TempPath, dir: PathBuf },
    InPlace { path: PathBuf },
}

impl Spool {
    /// Where the text is read again from.
    pub fn path(&self) -> &Path {
        match self {
            Spool::Copy { path, .. } => path,
            Spool::InPlace { path } => path,
        }
    }

    /// Whether the source is copied while it is read (not read in place).
    pub fn is_copy(&self) -> bool {
        matches!(self, Spool::Copy { .. })
    }
}

/// Whether a source is read once: standard input, or a path that is not a regular file.
pub fn is_read_once(path: &Path) -> bool {
    path == Path::new("-") || std::fs::metadata(path).is_ok_and(|m| !m.is_file())
}

/// Gives each source that is read once where it is read again from: standard input that is a
/// regular file at its start, in place; any other, a temporary file in the system's temporary
/// folder (`TMPDIR`), to be copied to while it is read.
pub fn attach(sources: &mut [SourceSpec]) -> Result<()> {
    for spec in sources.iter_mut().filter(|spec| spec.spool.is_none() && is_read_once(&spec.path)) {
        if spec.path == Path::new("-")
            && let Some(path) = stdin_in_place()
        {
            spec.spool = Some(Arc::new(Spool::InPlace { path }));
            continue;
        }
        spec.spool = Some(Arc::new(Spool::copy_in(&spec.path, std::env::temp_dir())?));
    }
    Ok(())
}

impl Spool {
    /// An empty temporary file in `dir` for the copy of the source at `path` (for its errors).
    pub(crate) fn copy_in(path: &Path, dir: PathBuf) -> Result<Spool> {
        let file = tempfile::Builder::new().prefix("leasetrace-input-").tempfile_in(&dir).map_err(|source| {
            Error::input(
                path,
                None,
                format!(
                    "cannot make a temporary copy in {} ({source}): a source read once is copied there so that the lines a report cites can be read back; set TMPDIR to a writable folder",
                    dir.display()
                ),
            )
        })?;
        Ok(Spool::Copy { path: file.into_temp_path(), dir })
    }
}

/// `/proc/self/fd/0` when standard input is a regular file not yet read from (`< file`) and that
/// path opens the same file: it can then be opened again at any offset, as the file. Where stdin
/// was read from already (`(head -1; leasetrace --ledger -) < file`), opening it again would start
/// at the file's start, not where stdin is: it is copied instead.
#[cfg(target_os = "linux")]
fn stdin_in_place() -> Option<PathBuf> {
    use std::io::Seek;
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    // A second descriptor of stdin's open file: its position is stdin's.
    let mut stdin = File::from(std::io::stdin().as_fd().try_clone_to_owned().ok()?);
    let meta = stdin.metadata().ok()?;
    if !meta.is_file() || stdin.stream_position().ok()? != 0 {
        return None;
    }
    let path = PathBuf::from("/proc/self/fd/0");
    let again = std::fs::metadata(&path).ok()?;
    (again.dev() == meta.dev() && again.ino() == meta.ino()).then_some(path)
}

#[cfg(not(target_os = "linux"))]
fn stdin_in_place() -> Option<PathBuf> {
    None
}

/// Bytes the copying thread reads from the source before writing them to the copy.
const BLOCK: usize = 1 << 17;
/// How far the copy may run ahead of its reader: a source without end fills the disk no more
/// than this past what the parsing has taken (and a block past where it stopped). Far above what
/// a pipe as fast as `cat` runs ahead on a gigabyte, so that such a pipe is split as a file is.
const LEAD: u64 = 4 << 30;

/// How far the copy of a source read once has got, shared by the thread that makes it
/// (`Growth::start`) and the parts that read it: the first from the copy's start as it grows
/// (`Growing`), a second, once the source has ended, from an offset the first stops at
/// (`Growth::split`), as a file is read in two.
pub struct Growth {
    state: Mutex<State>,
    changed: Condvar,
    /// Where a second part starts, once decided (`u64::MAX` until then): the first part's reader
    /// stops there (a log's), or the first part stops at the record that starts there (a CSV
    /// ledger's, which reads on when a quoted cell spans it). Set under `state`'s lock, so that a
    /// reader that takes bytes after it was set sees it.
    middle: AtomicU64,
}

struct State {
    /// Bytes in the copy.
    written: u64,
    /// The source has ended (or failed: `error`).
    ended: bool,
    error: Option<std::io::Error>,
    /// Nothing more is wanted (the first part's reader is gone): the copying thread stops after
    /// the block it holds.
    stopped: bool,
    /// Bytes handed to the first part's reader.
    claimed: u64,
    /// Where the first part's reader ends (`u64::MAX`: at the end of the source).
    first_ends: u64,
    /// How far the copy may run ahead of the bytes handed to the first part's reader (`LEAD`).
    lead: u64,
    /// The copying thread waits for the reader to take more (`lead`).
    copier_waits: bool,
    /// Threads waiting on `changed` (`Growth::wait`).
    waiting: u32,
}

impl Default for State {
    fn default() -> Self {
        State {
            written: 0,
            ended: false,
            error: None,
            stopped: false,
            claimed: 0,
            first_ends: u64::MAX,
            lead: LEAD,
            copier_waits: false,
            waiting: 0,
        }
    }
}

impl Growth {
    /// Starts copying `raw` to the spool's file on a thread of its own, a block at a time, as
    /// fast as the source gives it (a pipe's writer is never held up by the parsing), and returns
    /// the shared progress and a reader of the copy from its start.
    pub fn start(raw: Box<dyn Read + Send>, spool: &Spool) -> std::io::Result<(Arc<Growth>, Growing)> {
        Growth::start_from(Source { raw, pipe: None }, spool)
    }

    /// `start`, from `source`: a pipe's bytes are moved into the copy by the kernel (Linux).
    pub fn start_from(source: Source, spool: &Spool) -> std::io::Result<(Arc<Growth>, Growing)> {
        Growth::start_with_lead(source, spool, LEAD)
    }

    /// `start_from`, the copy kept at most `lead` bytes ahead of its reader.
    fn start_with_lead(source: Source, spool: &Spool, lead: u64) -> std::io::Result<(Arc<Growth>, Growing)> {
        // Only a copy is written: a source read in place is the user's own file.
        let Spool::Copy { path, dir } = spool else {
            return Err(std::io::Error::other("internal: a source read in place is not copied"));
        };
        let copy = std::fs::OpenOptions::new().write(true).truncate(true).open(path)?;
        let file = File::open(path)?;
        let growth = Arc::new(Growth {
            state: Mutex::new(State { lead, ..State::default() }),
            changed: Condvar::new(),
            middle: AtomicU64::new(u64::MAX),
        });
        let shared = Arc::clone(&growth);
        let dir = dir.clone();
        // Not joined: it ends at the end of the source, or after the block it holds once the first
        // part's reader is dropped (`stopped`).
        std::thread::spawn(move || shared.copy(source, copy, &dir));
        Ok((Arc::clone(&growth), Growing { file, growth, at: 0 }))
    }

    fn copy(&self, source: Source, mut copy: File, dir: &Path) {
        let Source { mut raw, pipe } = source;
        let written = |source: std::io::Error| {
            std::io::Error::new(
                source.kind(),
                format!(
                    "writing the temporary copy in {} ({source}): a source read once is copied there so that the lines a report cites can be read back; set TMPDIR to a folder with room for it",
                    dir.display()
                ),
            )
        };
        #[cfg(target_os = "linux")]
        if let Some(pipe) = pipe
            && self.splice(pipe, &copy, written)
        {
            return;
        }
        #[cfg(not(target_os = "linux"))]
        let _ = pipe;
        let mut block = vec![0; BLOCK];
        loop {
            // A block is whole unless the source has ended or failed.
            let (len, error) = crate::ingest::io::read_ahead::fill(&mut raw, &mut block);
            let copied = copy.write_all(&block[..len]).map_err(written);
            if self.copied(len as u64, copied, len < block.len() || error.is_some(), error) {
                return;
            }
        }
    }

    /// Says that `len` more bytes were copied (or the copy failed), and whether the source has
    /// `ended` (or failed: `error`). Returns whether the copying is done.
    fn copied(&self, len: u64, copied: std::io::Result<()>, ended: bool, error: Option<std::io::Error>) -> bool {
        let mut state = self.lock();
        match copied {
            Ok(()) => state.written += len,
            Err(error) => (state.ended, state.error) = (true, Some(error)),
        }
        if ended || error.is_some() {
            state.ended = true;
            state.error = state.error.take().or(error);
        }
        // Only a waiting reader is woken: a wake for each block copied, with nobody waiting or
        // the reader far behind, was a tenth of a piped log's time in the scheduler (perf).
        if state.waiting > 0 {
            self.changed.notify_all();
        }
        // An input without end is copied no further ahead of its reader than `lead`.
        while !state.ended && !state.stopped && state.written - state.claimed >= state.lead {
            state.copier_waits = true;
            state = self.wait(state);
            state.copier_waits = false;
        }
        state.ended || state.stopped
    }

    /// Moves the pipe's bytes into the copy without reading them here (`splice`): one copy by
    /// the kernel, not two through this process. The pipe's buffer is enlarged first, so that its
    /// writer runs ahead a MiB rather than 64 KiB. False when the kernel cannot splice this
    /// pipe into this file before anything was moved: the caller then reads it.
    #[cfg(target_os = "linux")]
    fn splice(&self, pipe: Pipe, copy: &File, written: impl Fn(std::io::Error) -> std::io::Error) -> bool {
        use rustix::pipe::SpliceFlags;
        let Pipe { fd, mut tally } = pipe;
        // Not every pipe can be enlarged (a user's limit): it is read as it is then.
        let _ = rustix::pipe::fcntl_setpipe_size(&fd, 1 << 20);
        let mut moved_any = false;
        loop {
            let moved = rustix::pipe::splice(&fd, None, copy, None, BLOCK, SpliceFlags::MOVE);
            match moved {
                Err(rustix::io::Errno::INTR) => {}
                Err(rustix::io::Errno::INVAL) if !moved_any => return false,
                Err(error) => {
                    // Which side failed is not said: a write's error is the likelier (a full disk).
                    let error = std::io::Error::from(error);
                    return self.copied(0, Err(written(error)), true, None);
                }
                Ok(len) => {
                    moved_any = true;
                    if let Some(tally) = &mut tally {
                        tally.tally(len as u64);
                    }
                    if self.copied(len as u64, Ok(()), len == 0, None) {
                        return true;
                    }
                }
            }
        }
    }

    /// Waits for a change, counted in `State::waiting` so that the copier wakes only a waiter.
    fn wait<'a>(&self, mut state: std::sync::MutexGuard<'a, State>) -> std::sync::MutexGuard<'a, State> {
        state.waiting += 1;
        let mut state = self.changed.wait(state).unwrap_or_else(std::sync::PoisonError::into_inner);
        state.waiting -= 1;
        state
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Nothing more is wanted from the source.
    fn stop(&self) {
        self.lock().stopped = true;
        self.changed.notify_all();
    }

    /// Waits for the source's end, then decides whether a second part reads the rest of the copy
    /// from an offset on: when at least `at_least` bytes are left after those the first part has
    /// taken, at the offset `choose` gives for the middle of what is left (a line or record start
    /// at or after it; `None`: none). The first part then stops there: its reader ends there when
    /// `stop_first_there` (a log's), else it stops when it meets the record there (`middle`).
    /// `None`: the first part reads on to the end (little left, a failed or abandoned source, or
    /// the first part already past that offset).
    pub fn split(
        &self,
        at_least: u64,
        stop_first_there: bool,
        choose: impl FnOnce(u64) -> crate::error::Result<Option<u64>>,
    ) -> crate::error::Result<Option<u64>> {
        let (claimed, size) = {
            let mut state = self.lock();
            while !state.ended && !state.stopped {
                state = self.wait(state);
            }
            if state.stopped || state.error.is_some() {
                return Ok(None);
            }
            (state.claimed, state.written)
        };
        if size - claimed < at_least.max(2) {
            return Ok(None);
        }
        let Some(middle) = choose(claimed + (size - claimed) / 2)?.filter(|&middle| middle < size) else {
            return Ok(None);
        };
        let mut state = self.lock();
        if state.stopped || state.claimed > middle {
            return Ok(None);
        }
        self.middle.store(middle, Ordering::Relaxed);
        if stop_first_there {
            state.first_ends = middle;
        }
        Ok(Some(middle))
    }

    /// A guard that says nothing more is wanted from the source when it is dropped: on every way
    /// out of a first part that holds its reader longer (an error included), so that a wait for a
    /// second part ends and the copy stops.
    pub fn stop_on_drop(&self) -> impl Drop + '_ {
        struct Stop<'a>(&'a Growth);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.stop();
            }
        }
        Stop(self)
    }

    /// Waits until the source has ended (or failed, or the copy was stopped).
    #[cfg(test)]
    pub(crate) fn wait_ended(&self) {
        let mut state = self.lock();
        while !state.ended && !state.stopped {
            state = self.wait(state);
        }
    }

    /// Where the second part starts (`u64::MAX`: no second part, or not decided yet).
    pub fn middle(&self) -> u64 {
        self.middle.load(Ordering::Relaxed)
    }
}
/// What a copy is made from: a reader, and, when it is a pipe, the pipe itself, whose bytes the
/// kernel can move into the copy (Linux), counted on the source's bar by `tally`.
pub struct Source {
    pub raw: Box<dyn Read + Send>,
    pub pipe: Option<Pipe>,
}

/// A pipe to copy from (standard input or a FIFO), and the bar its bytes are counted on.
pub struct Pipe {
    pub fd: PipeFd,
    pub tally: Option<crate::progress::CountingReader<std::io::Empty>>,
}

/// A pipe's descriptor (none but on Unix, where pipes are moved by the kernel only on Linux).
#[cfg(unix)]
pub type PipeFd = std::os::fd::OwnedFd;
#[cfg(not(unix))]
pub type PipeFd = std::convert::Infallible;

impl Pipe {
    /// Enlarges the pipe's buffer to a MiB, so that its writer runs ahead a MiB rather than 64
    /// KiB: fewer switches between it and this process. Not every pipe can be enlarged (a user's
    /// limit): it is read as it is then.
    pub fn enlarge(&self) {
        #[cfg(target_os = "linux")]
        let _ = rustix::pipe::fcntl_setpipe_size(&self.fd, 1 << 20);
    }

    /// Never a pipe to move from, off Unix.
    #[cfg(not(unix))]
    pub fn of<T>(_source: &T) -> Option<PipeFd> {
        None
    }

    /// `source` when it is a pipe (not a file, a terminal or a socket).
    #[cfg(unix)]
    pub fn of(source: &impl std::os::fd::AsFd) -> Option<PipeFd> {
        let fd = source.as_fd().try_clone_to_owned().ok()?;
        File::from(fd.try_clone().ok()?)
            .metadata()
            .is_ok_and(|meta| std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()))
            .then_some(fd)
    }
}

/// The first part's reader of a copy being made: the copy from its start, each byte as soon as
/// it is in, up to the end of the source or the offset a second part starts at
/// (`Growth::split`). Dropping it stops the copy (an input without end, `/dev/zero` through a
/// FIFO, is copied no further than a block past where its reader stopped).
pub struct Growing {
    file: File,
    growth: Arc<Growth>,
    /// Bytes read.
    at: u64,
}

impl Read for Growing {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        let count = {
            let mut state = self.growth.lock();
            loop {
                let end = state.written.min(state.first_ends);
                if self.at < end {
                    let count = usize::try_from(end - self.at).map_or(out.len(), |left| left.min(out.len()));
                    state.claimed = self.at + count as u64;
                    if state.copier_waits {
                        self.growth.changed.notify_all();
                    }
                    break count;
                }
                if self.at >= state.first_ends {
                    return Ok(0);
                }
                if state.ended {
                    return state.error.take().map_or(Ok(0), Err);
                }
                if state.stopped {
                    return Err(std::io::Error::other("internal: the copy was stopped while read"));
                }
                state = self.growth.wait(state);
            }
        };
        // The copy's file is read in order: its position is `at`.
        self.file.read_exact(&mut out[..count])?;
        self.at += count as u64;
        Ok(count)
    }
}

impl Drop for Growing {
    fn drop(&mut self) {
        self.growth.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::ingest::io::chunks::tests::Trickle;

    fn text(len: usize) -> Vec<u8> {
        (0..len).map(|i| u8::try_from(i * 7 % 251).unwrap()).collect()
    }

    fn copy_spool(dir: &Path) -> Arc<Spool> {
        Arc::new(Spool::copy_in(Path::new("-"), dir.to_path_buf()).unwrap())
    }

    #[test]
    fn the_copy_and_its_reader_hold_every_byte_in_order_and_the_copy_goes_with_the_last_spec() {
        let dir = tempfile::tempdir().unwrap();
        for (len, step) in [(0, 1), (1, 1), (BLOCK, 4096), (BLOCK * 5 + 17, 65_536), (BLOCK * 2 + 1, BLOCK * 3)] {
            let spool = copy_spool(dir.path());
            let input = Trickle { text: text(len), at: 0, step, error: None };
            let (growth, mut copy) = Growth::start(Box::new(input), &spool).unwrap();
            let mut read = Vec::new();
            copy.read_to_end(&mut read).unwrap();
            assert!(read == text(len), "{len} bytes, given {step} at a time");
            growth.wait_ended();
            assert!(std::fs::read(spool.path()).unwrap() == text(len));
        }
        let spool = copy_spool(dir.path());
        let mut spec = SourceSpec::new(
            crate::ingest::SourceKind::Log,
            PathBuf::from("-"),
            Some(chrono_tz::UTC),
            "--log-tz".into(),
        );
        spec.spool = Some(Arc::clone(&spool));
        let path = spool.path().to_path_buf();
        assert_eq!(spec.file(), path, "the copy is what the source is read again from");
        drop((spool, spec));
        assert!(!path.exists(), "the copy outlived its specs");
    }

    #[test]
    fn an_error_of_the_source_reaches_the_reader_after_the_bytes_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let spool = copy_spool(dir.path());
        let len = BLOCK * 2 + 5;
        let input = Trickle { text: text(len), at: 0, step: 100_000, error: Some(std::io::ErrorKind::InvalidData) };
        let (growth, mut copy) = Growth::start(Box::new(input), &spool).unwrap();
        let mut read = Vec::new();
        assert_eq!(copy.read_to_end(&mut read).unwrap_err().kind(), std::io::ErrorKind::InvalidData);
        assert!(read == text(len), "every byte before the error, in order");
        // A failed source is read in one part.
        assert_eq!(growth.split(1, true, |from| Ok(Some(from))).unwrap(), None);
    }

    #[test]
    fn a_second_part_starts_in_the_middle_of_what_the_first_has_not_taken_and_the_first_stops_there() {
        let dir = tempfile::tempdir().unwrap();
        let spool = copy_spool(dir.path());
        let len = BLOCK * 4;
        let (growth, mut copy) =
            Growth::start(Box::new(Trickle { text: text(len), at: 0, step: len, error: None }), &spool).unwrap();
        let mut first = vec![0; 1000];
        copy.read_exact(&mut first).unwrap();
        // Too little left for a second part: none.
        assert_eq!(growth.split(len as u64, true, |from| Ok(Some(from))).unwrap(), None);
        assert_eq!(growth.middle(), u64::MAX);
        let middle = growth.split(1, true, |from| Ok(Some(from + 10))).unwrap().unwrap();
        assert_eq!(middle, 1000 + (len as u64 - 1000) / 2 + 10);
        assert_eq!(growth.middle(), middle);
        let mut rest = Vec::new();
        copy.read_to_end(&mut rest).unwrap();
        assert!(first.into_iter().chain(rest).eq(text(len)[..usize::try_from(middle).unwrap()].iter().copied()));
        // A start the first part has passed is refused.
        let spool = copy_spool(dir.path());
        let (growth, mut copy) =
            Growth::start(Box::new(Trickle { text: text(len), at: 0, step: len, error: None }), &spool).unwrap();
        copy.read_exact(&mut vec![0; BLOCK * 3]).unwrap();
        assert_eq!(growth.split(1, true, |_| Ok(Some(5))).unwrap(), None);
    }

    #[test]
    fn the_copy_runs_no_further_than_its_lead_ahead_of_its_reader() {
        let dir = tempfile::tempdir().unwrap();
        let spool = copy_spool(dir.path());
        let len = BLOCK * 10;
        let source = Source { raw: Box::new(Trickle { text: text(len), at: 0, step: len, error: None }), pipe: None };
        let (growth, mut copy) = Growth::start_with_lead(source, &spool, BLOCK as u64 * 2).unwrap();
        let mut first = vec![0; 10];
        copy.read_exact(&mut first).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        let written = growth.lock().written;
        assert!(written <= 10 + 3 * BLOCK as u64, "{written} bytes copied, 10 read");
        let mut rest = Vec::new();
        copy.read_to_end(&mut rest).unwrap();
        assert!(first.into_iter().chain(rest).eq(text(len)), "every byte, in order");
    }

    #[test]
    fn dropping_the_reader_stops_the_copy_of_an_endless_source() {
        /// An endless input, which says when it is dropped (the copying thread has ended).
        struct Endless(Arc<std::sync::atomic::AtomicBool>);
        impl Read for Endless {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                out.fill(0);
                Ok(out.len())
            }
        }
        impl Drop for Endless {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let spool = copy_spool(dir.path());
        let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (growth, mut copy) = Growth::start(Box::new(Endless(Arc::clone(&dropped))), &spool).unwrap();
        copy.read_exact(&mut [0; 10]).unwrap();
        drop(copy);
        // A wait for a second part ends too.
        assert_eq!(growth.split(1, false, |from| Ok(Some(from))).unwrap(), None);
        let start = std::time::Instant::now();
        while !dropped.load(Ordering::SeqCst) {
            assert!(start.elapsed().as_secs() < 10, "the copy goes on");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    #[test]
    fn a_source_read_in_place_is_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.csv");
        std::fs::write(&path, "at,event\n").unwrap();
        let spool = Spool::InPlace { path: path.clone() };
        assert!(Growth::start(Box::new(std::io::Cursor::new(b"x".to_vec())), &spool).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"at,event\n");
    }

    #[test]
    fn a_regular_file_is_not_copied() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.log");
        std::fs::write(&path, "line\n").unwrap();
        let mut specs =
            vec![SourceSpec::new(crate::ingest::SourceKind::Log, path, Some(chrono_tz::UTC), "--log-tz".into())];
        attach(&mut specs).unwrap();
        assert!(specs[0].spool.is_none());
    }
}
