//! How well a ledger column's values fit the lifecycle of a run.
//!
//! A ledger's event column is the one whose values tell a run's story: grouped by the run (or by
//! any column of repeating ids), each run opens with one round-started row, goes through several
//! values (items selected, effects posted) and closes with a finish or a failure. Other columns
//! with a few short values hold something else, and their runs show it: a worker, a queue or a
//! job type is one value for the whole run, a final state is written on the last row only, an
//! id is new on every row. So every candidate is scored by its runs, not by its words alone: a
//! column of pod names that all contain `review` has every row "an effect posted" by its words,
//! and not one run that opens or closes.

use std::collections::HashMap;

use crate::model::EventKind;

use super::table::Table;

/// A candidate's runs, grouped by the column that fits it best.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fit {
    /// The column the rows were grouped by (`None`: the whole table is one run).
    pub by: Option<usize>,
    pub runs: usize,
    /// Runs whose first row is their one round-started row.
    pub opened: usize,
    /// Runs with at least two distinct values.
    pub several: usize,
    /// Runs whose last row is their one finish or failure.
    pub closed: usize,
    /// 0 (no run looks like a lifecycle) to 1 (every run does).
    pub value: f64,
}

impl Fit {
    /// "of 208 runs (by 'run_ref'), 205 open with their one round-started row, ...".
    pub fn evidence(&self, columns: &[String]) -> String {
        let by = self.by.map_or_else(|| "the whole table as one run".to_string(), |c| format!("by '{}'", columns[c]));
        format!(
            "of {} run{} ({by}), {} open with their one round-started row, {} have several values, {} close with a finish or failure",
            self.runs,
            if self.runs == 1 { "" } else { "s" },
            self.opened,
            self.several,
            self.closed
        )
    }
}

/// Weights of the three marks of a lifecycle: opening counts most (it is what a run is).
const OPENED: f64 = 0.5;
const SEVERAL: f64 = 0.25;
const CLOSED: f64 = 0.25;

/// The best fit of column `event` (its values' kinds in `kinds`) over the grouping columns
/// `groupings`; the whole table as one run when none groups it.
pub fn fit(table: &Table, event: usize, kinds: &HashMap<&str, Option<EventKind>>, groupings: &[usize]) -> Fit {
    let mut best: Option<Fit> = None;
    for &by in groupings.iter().filter(|&&c| c != event) {
        let mut runs: HashMap<&str, Vec<usize>> = HashMap::new();
        for (index, row) in table.rows.iter().enumerate() {
            let id = row.cells[by].as_str();
            if !id.is_empty() {
                runs.entry(id).or_default().push(index);
            }
        }
        let fit = score(table, event, kinds, Some(by), runs.values());
        if best.as_ref().is_none_or(|b| fit.value > b.value) {
            best = Some(fit);
        }
    }
    best.unwrap_or_else(|| {
        let all: Vec<usize> = (0..table.rows.len()).collect();
        score(table, event, kinds, None, std::iter::once(&all))
    })
}

fn score<'r>(
    table: &Table,
    event: usize,
    kinds: &HashMap<&str, Option<EventKind>>,
    by: Option<usize>,
    runs: impl Iterator<Item = &'r Vec<usize>>,
) -> Fit {
    let mut fit = Fit { by, ..Fit::default() };
    for rows in runs {
        let values: Vec<&str> = rows.iter().map(|&r| table.rows[r].cells[event].as_str()).collect();
        let of = |value: &str| kinds.get(value).copied().flatten();
        let starts = values.iter().filter(|v| of(v) == Some(EventKind::RoundStarted)).count();
        let ends =
            values.iter().filter(|v| matches!(of(v), Some(EventKind::RoundFinished | EventKind::RoundFailed))).count();
        fit.runs += 1;
        fit.opened +=
            usize::from(starts == 1 && values.first().is_some_and(|v| of(v) == Some(EventKind::RoundStarted)));
        let mut distinct = values.clone();
        distinct.sort_unstable();
        distinct.dedup();
        fit.several += usize::from(distinct.len() >= 2);
        fit.closed += usize::from(
            ends == 1
                && values
                    .last()
                    .is_some_and(|v| matches!(of(v), Some(EventKind::RoundFinished | EventKind::RoundFailed))),
        );
    }
    #[allow(clippy::cast_precision_loss)]
    if fit.runs > 0 {
        let runs = fit.runs as f64;
        fit.value = (OPENED * fit.opened as f64 + SEVERAL * fit.several as f64 + CLOSED * fit.closed as f64) / runs;
    }
    fit
}

#[cfg(test)]
mod tests {
    use super::super::table::Row;
    use super::*;

    fn table(rows: &[[&str; 3]]) -> Table {
        Table {
            format: "csv",
            columns: vec!["run".into(), "step".into(), "node".into()],
            rows: rows
                .iter()
                .enumerate()
                .map(|(i, cells)| Row { line: i as u64 + 2, cells: cells.iter().map(|c| (*c).to_string()).collect() })
                .collect(),
            end: 0,
            ragged: None,
        }
    }

    #[test]
    fn the_steps_of_runs_fit_and_a_column_constant_within_runs_does_not() {
        let t = table(&[
            ["r1", "begin", "pod-a"],
            ["r2", "begin", "pod-b"],
            ["r1", "pick", "pod-a"],
            ["r1", "end", "pod-a"],
            ["r2", "pick", "pod-b"],
            ["r2", "reaped", "pod-c"],
            ["r3", "begin", "pod-c"],
        ]);
        let kinds: HashMap<&str, Option<EventKind>> = [
            ("begin", Some(EventKind::RoundStarted)),
            ("pick", Some(EventKind::ItemSelected)),
            ("end", Some(EventKind::RoundFinished)),
            ("reaped", Some(EventKind::RoundFailed)),
        ]
        .into_iter()
        .collect();
        let steps = fit(&t, 1, &kinds, &[0, 2]);
        assert_eq!((steps.by, steps.runs, steps.opened, steps.several, steps.closed), (Some(0), 3, 3, 2, 2));
        assert!((steps.value - (0.5 * 3.0 + 0.25 * 2.0 + 0.25 * 2.0) / 3.0).abs() < 1e-9);
        assert_eq!(
            steps.evidence(&t.columns),
            "of 3 runs (by 'run'), 3 open with their one round-started row, 2 have several values, 2 close with a finish or failure"
        );
        // Pod names whose words read as effects: every row "posted", no run opens or closes.
        let pods: HashMap<&str, Option<EventKind>> =
            ["pod-a", "pod-b", "pod-c"].into_iter().map(|p| (p, Some(EventKind::EffectPosted))).collect();
        let nodes = fit(&t, 2, &pods, &[0, 1]);
        assert!(nodes.value < 0.2, "{nodes:?}");
        // Nothing to group by: the table is one run.
        assert_eq!(fit(&t, 1, &kinds, &[]).by, None);
    }
}
