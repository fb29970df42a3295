//! The shared vocabulary: events on a timeline, the rounds and job attempts they add up to, the
//! lock parameters in effect, and the findings and report built from them.

pub mod bull;
pub mod chain;
pub mod event;
pub mod filter;
pub mod finding;
pub mod input;
pub mod item;
pub mod job;
pub mod line_texts;
pub mod params;
pub mod report;
pub mod rounds;
pub mod timeline;
pub mod warnings;

pub use chain::Chain;
pub use event::{Channel, Event, EventKind, Moment, Origin, Scope, Text};
pub use finding::{Derivation, Finding, Severity, Value};
pub use input::InputSummary;
pub use item::Item;
pub use job::JobKey;
pub use line_texts::LineTexts;
pub use params::{LockParams, Param, ParamOrigin, WorkerSettings};
pub use report::Report;
pub use rounds::{Attempt, Round};
pub use timeline::Timeline;
