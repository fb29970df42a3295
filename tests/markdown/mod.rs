//! `--format markdown`: the postmortem draft, read back the way GitHub reads it.
//!
//! Every test parses the binary's Markdown with comrak (a GitHub-flavoured Markdown parser, with
//! GitHub's extensions: tables, alerts, autolinks, strikethrough, task lists, math) and asserts on
//! what a reader of the rendered page gets: the tables' rows and cells, the alert blocks, the
//! code blocks, and that no text from the inputs became HTML. Raw HTML is passed through
//! (`unsafe`), as GitHub passes most of it, so an escape that failed would show as a tag here.

#[allow(unused_imports)]
use super::*;

use comrak::nodes::{AstNode, NodeValue};

fn gfm() -> comrak::Options<'static> {
    let mut options = comrak::Options::default();
    options.extension.table = true;
    options.extension.strikethrough = true;
    options.extension.autolink = true;
    options.extension.tasklist = true;
    options.extension.alerts = true;
    options.extension.math_dollars = true;
    options.render.r#unsafe = true;
    options
}

/// The text a node shows (its text and code spans; a `<br>` as a line break).
fn shown<'a>(node: &'a AstNode<'a>) -> String {
    let mut out = String::new();
    for descendant in node.descendants() {
        match &descendant.data.borrow().value {
            NodeValue::Text(text) => out.push_str(text),
            NodeValue::Code(code) => out.push_str(&code.literal),
            NodeValue::SoftBreak | NodeValue::LineBreak => out.push(' '),
            NodeValue::HtmlInline(html) if html == "<br>" => out.push('\n'),
            _ => {}
        }
    }
    out
}

/// A page as a reader of the rendered page gets it.
#[derive(Debug, Default)]
struct Page {
    /// `(level, text)` of each heading, in order.
    headings: Vec<(u8, String)>,
    /// Each table: its rows (the header first), each row its cells' text.
    tables: Vec<Vec<Vec<String>>>,
    /// The heading each table stands under.
    table_sections: Vec<String>,
    /// Each fenced block's text.
    blocks: Vec<String>,
    /// Each alert's kind and text.
    alerts: Vec<(String, String)>,
    /// Every piece of raw HTML, inline or block.
    html: Vec<String>,
    /// The order of the top blocks: `h2:<text>`, `alert`, `table`, ...
    order: Vec<String>,
}

fn read(markdown: &str) -> Page {
    let arena = comrak::Arena::new();
    let root = comrak::parse_document(&arena, markdown, &gfm());
    let mut page = Page::default();
    let mut section = String::new();
    for node in root.descendants() {
        match &node.data.borrow().value {
            NodeValue::Heading(heading) => {
                let text = shown(node);
                if heading.level <= 2 {
                    section.clone_from(&text);
                    page.order.push(format!("h{}:{text}", heading.level));
                }
                page.headings.push((heading.level, text));
            }
            NodeValue::Table(_) => {
                page.tables.push(node.children().map(|row| row.children().map(shown).collect()).collect());
                page.table_sections.push(section.clone());
                page.order.push("table".into());
            }
            NodeValue::CodeBlock(block) => page.blocks.push(block.literal.clone()),
            NodeValue::Alert(alert) => {
                page.alerts.push((format!("{:?}", alert.alert_type), shown(node)));
                page.order.push("alert".into());
            }
            NodeValue::HtmlInline(html) => page.html.push(html.clone()),
            NodeValue::HtmlBlock(block) => page.html.push(block.literal.trim().to_string()),
            _ => {}
        }
    }
    page
}

impl Page {
    /// The one table under the `##` heading `section`.
    fn table(&self, section: &str) -> &Vec<Vec<String>> {
        let found: Vec<usize> = (0..self.tables.len()).filter(|&i| self.table_sections[i] == section).collect();
        assert_eq!(found.len(), 1, "one table under '{section}': {:?}", self.table_sections);
        &self.tables[found[0]]
    }
}

fn markdown(args: &[&str]) -> String {
    let run = leasetrace(args).run();
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    run.stdout
}

/// The HTML the renderer writes of its own: line breaks in a cell, the folded metrics, and the
/// anchor in each finding's heading (`<a name="finding-4"></a>`).
fn own_html(html: &str) -> bool {
    ["<br>", "<details><summary>Metrics</summary>", "</details>", "</a>"].contains(&html)
        || html
            .strip_prefix("<a name=\"finding-")
            .and_then(|rest| rest.strip_suffix("\">"))
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
}

/// A code block's lines as they were before the renderer cut them: each continuation
/// (`  ↳ ` at its start) joined to the line it continues.
fn uncut(block: &str) -> String {
    block.replace("\n  ↳ ", "")
}

#[test]
fn the_incident_timeline_is_the_seed_postmortems_table_to_the_second() {
    let text_of = markdown(&["analyze", INCIDENT, "--format", "markdown"]);
    let page = read(&text_of);
    let table = page.table("Timeline");
    assert_eq!(table[0], ["time", "what was observed", "what it means", "source"]);
    let rows = &table[1..];
    for row in rows {
        assert_eq!(row.len(), 4, "{row:?}");
        assert!(!row[1].contains("name pr-review-sweep"), "the one job name is said once, above: {row:?}");
    }
    let row_at = |time: &str| -> &Vec<String> {
        let found: Vec<&Vec<String>> = rows.iter().filter(|r| r[0] == time).collect();
        assert_eq!(found.len(), 1, "one row at {time}: {rows:#?}");
        found[0]
    };
    // The seed's table (times in KST): activation, restart, expiry, rerun, the two selections.
    let activation = row_at("09:33:00 KST");
    assert!(activation[2].contains("[1] stalled-rerun: the run that was lost began"), "{activation:?}");
    assert_eq!(activation[3], "fixtures/incident-2026-10-07/server.log:348");
    let restart = row_at("09:37:26 KST");
    assert!(restart[1].starts_with("process started"), "{restart:?}");
    assert!(restart[2].contains("stalled-rerun: the process died before the first lock renewal"), "{restart:?}");
    assert_eq!(restart[3], "fixtures/incident-2026-10-07/server.log:385");
    let expiry = row_at("09:52:38 KST");
    assert!(expiry[1].contains("no record"), "no source wrote the expiry: {expiry:?}");
    assert!(expiry[2].contains("the lock of the lost run expired"), "{expiry:?}");
    assert_eq!(expiry[3], "computed: lock_expired_at = activated_at + lockDuration (1178 s)");
    let rerun = row_at("09:53:00 KST");
    assert!(rerun[2].contains("re-ran from the start, 15 min 34 s after the restart"), "{rerun:?}");
    assert!(rerun[2].contains('\n'), "two findings cite the rerun, one line each: {rerun:?}");
    assert!(rerun[2].contains("unlogged-stall"), "{rerun:?}");
    let intro = text_of.split("## Timeline").nth(1).unwrap().split('|').next().unwrap();
    assert!(intro.contains("the job name is `pr-review-sweep` throughout"), "{intro}");
    // The queue is not: the ledger rows of the 09:54 round's job say none, and no cited log line
    // of that job does either.
    assert!(!intro.contains("queue"), "{intro}");
    let first = row_at("09:54:05.70 KST");
    assert!(first[1].contains("item PR-4412") && first[1].contains("run run-0933-b"), "{first:?}");
    assert!(first[2].contains("first selection of PR-4412"), "{first:?}");
    let second = row_at("09:54:06.36 KST");
    assert!(
        second[2].contains("second selection of PR-4412, by round run-0954-a: 0.66 s after the first"),
        "{second:?}"
    );

    // Exactly the events the findings cite (the JSON report's timeline), each once, in time
    // order, and besides them only computed moments.
    let report = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run().json();
    let cited: Vec<String> = report["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| format!("{}:{}", e["source"]["path"].as_str().unwrap(), e["source"]["line"]))
        .collect();
    let sourced: Vec<&String> = rows.iter().map(|r| &r[3]).filter(|s| !s.starts_with("computed")).collect();
    assert_eq!(sourced, cited.iter().collect::<Vec<_>>());
    assert_eq!(rows.len(), cited.len() + 1, "one computed moment: the exact lock expiry");
    let times: Vec<&String> = rows.iter().map(|r| &r[0]).collect();
    let mut sorted = times.clone();
    sorted.sort();
    assert_eq!(times, sorted, "same date, same digits: text order is time order");
}

#[test]
fn a_job_name_is_said_once_only_when_every_job_cited_has_it() {
    // stuck-running cites a lease job without a name beside a named BullMQ job.
    let text = markdown(&["analyze", "fixtures/stuck-running", "--format", "markdown"]);
    let intro = text.split("## Timeline").nth(1).unwrap().split('|').next().unwrap();
    assert!(!intro.contains("throughout"), "{intro}");
    assert!(text.contains("name `send-receipt`"), "the name stays on its own rows");
}

#[test]
fn the_draft_opens_with_what_happened_then_the_warnings() {
    let text = markdown(&["analyze", INCIDENT, "--format", "markdown"]);
    let page = read(&text);
    assert_eq!(page.headings[0], (1, "Postmortem draft".to_string()));
    let report = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run().json();
    let warnings = report["warnings"].as_array().unwrap();
    assert!(!warnings.is_empty(), "the incident's lockRenewTime is a default");
    let expected: Vec<String> = std::iter::once("h1:Postmortem draft".to_string())
        .chain(std::iter::once("h2:What happened".to_string()))
        .chain(warnings.iter().map(|_| "alert".to_string()))
        .chain(std::iter::once("h2:Timeline".to_string()))
        .collect();
    assert_eq!(page.order[..expected.len()], expected[..], "{:?}", page.order);
    for ((kind, text), warning) in page.alerts.iter().zip(warnings) {
        assert_eq!(kind, "Warning");
        assert_eq!(text, warning["message"].as_str().unwrap());
    }
    // GitHub draws an alert as its own box: the HTML comrak writes for it is GitHub's.
    let html = comrak::markdown_to_html(&text, &gfm());
    assert_eq!(html.matches("<div class=\"markdown-alert markdown-alert-warning\"").count(), warnings.len());
    // Every finding is in the headline, by its code.
    let what_happened = text.split("## What happened").nth(1).unwrap().split("\n## ").next().unwrap();
    for finding in report["findings"].as_array().unwrap() {
        assert!(what_happened.contains(finding["kind"].as_str().unwrap()), "{what_happened}");
    }
}

/// The list items of the first list under "What happened", as (depth, text) in document order.
fn headline_items(markdown: &str) -> Vec<(usize, String)> {
    let arena = comrak::Arena::new();
    let root = comrak::parse_document(&arena, markdown, &gfm());
    let heading = root
        .children()
        .position(|n| matches!(n.data.borrow().value, NodeValue::Heading(_)) && shown(n) == "What happened")
        .expect("a What happened heading");
    let list = root
        .children()
        .skip(heading)
        .find(|n| matches!(n.data.borrow().value, NodeValue::List(_)))
        .expect("a list under it");
    let mut items = Vec::new();
    for node in list.descendants() {
        if matches!(node.data.borrow().value, NodeValue::Item(_)) {
            let depth = node.ancestors().filter(|a| matches!(a.data.borrow().value, NodeValue::List(_))).count() - 1;
            let paragraph = node.first_child().map(shown).unwrap_or_default();
            items.push((depth, paragraph));
        }
    }
    items
}

#[test]
fn what_happened_is_each_chain_from_its_effect_back_to_its_first_cause() {
    let text = markdown(&["analyze", INCIDENT, "--format", "markdown"]);
    let report = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run().json();
    let items = headline_items(&text);
    let findings = report["findings"].as_array().unwrap();
    let by_id = |id: &Value| findings.iter().find(|f| f["id"] == *id).unwrap();
    let chain = &report["chains"][0];
    let path = chain["path"].as_array().unwrap();
    // The chain's path, one level deeper each step, each item naming its finding by number.
    for (depth, id) in path.iter().enumerate() {
        let finding = by_id(id);
        let (at, words) = &items[depth];
        assert_eq!(*at, depth, "{items:#?}");
        let lead = if depth == 0 { "" } else { "caused by " };
        let label = format!(
            "{lead}{} [{id}] {}: ",
            finding["severity"].as_str().unwrap().to_uppercase(),
            finding["kind"].as_str().unwrap()
        );
        assert!(words.starts_with(&label), "{words:?} should start with {label:?}");
    }
    // Then its first cause, below the last finding of the path, in the same words as the JSON.
    let (at, root) = &items[path.len()];
    assert_eq!(*at, path.len());
    assert_eq!(*root, format!("because {}", chain["root_cause"].as_str().unwrap()));
    assert!(root.contains("09:37:26") && root.contains("09:52:38"), "{root}");
    // The other findings of the chain beside it.
    for id in chain["also"].as_array().unwrap() {
        let code = by_id(id)["kind"].as_str().unwrap();
        assert!(
            items.iter().any(|(d, w)| *d == 1 && w.starts_with("also ") && w.contains(&format!("[{id}] {code}"))),
            "{items:#?}"
        );
    }
    // The seed's key numbers are in the first lines.
    let top: String = items.iter().take(path.len() + 1).map(|(_, w)| w.as_str()).collect::<Vec<_>>().join("\n");
    for number in ["0.66 s", "15 min 34 s", "PR-4412"] {
        assert!(top.contains(number), "{number} in {top}");
    }
}

#[test]
fn each_finding_has_its_arithmetic_evidence_and_what_to_change() {
    let text = markdown(&["analyze", INCIDENT, "--format", "markdown"]);
    let page = read(&text);
    let report = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run().json();
    let findings = report["findings"].as_array().unwrap();
    let by_id = |id: &Value| findings.iter().find(|f| f["id"] == *id).unwrap();
    let headings: Vec<&String> = page.headings.iter().filter(|(level, _)| *level == 3).map(|(_, t)| t).collect();
    assert_eq!(headings.len(), findings.len(), "{headings:?}");
    for (index, (finding, heading)) in findings.iter().zip(&headings).enumerate() {
        let code = finding["kind"].as_str().unwrap();
        let severity = finding["severity"].as_str().unwrap().to_uppercase();
        assert!(heading.starts_with(&format!("[{}] {severity} {code} at ", index + 1)), "{heading}");
        let number = index + 1;
        let section = text
            .split(&format!("### <a name=\"finding-{number}\"></a>\\[{number}\\] "))
            .nth(1)
            .unwrap()
            .split("\n### ")
            .next()
            .unwrap();
        for cause in finding["caused_by"].as_array().unwrap() {
            let code = by_id(cause)["kind"].as_str().unwrap();
            let follows = format!("**Follows from:** [\\[{cause}\\]](#finding-{cause}) `{code}`");
            assert!(section.contains(&follows), "{code}: {section}");
        }
        for step in finding["arithmetic"].as_array().unwrap() {
            let line = format!("{} = {}", step["result"].as_str().unwrap(), step["formula"].as_str().unwrap());
            assert!(section.contains(&line), "{code}: {line}");
        }
        // The evidence block of this finding's own section (another finding may cite a line too).
        let evidence = section.split("**Evidence**").nth(1).unwrap_or_else(|| panic!("{code}: evidence"));
        let block = page.blocks.iter().find(|b| evidence.contains(b.as_str())).expect("a fenced block");
        let block = uncut(block);
        for event in finding["evidence"].as_array().unwrap() {
            let place = format!("{}:{}  ", event["source"]["path"].as_str().unwrap(), event["source"]["line"]);
            let line = block.lines().find(|l| l.starts_with(&place)).unwrap_or_else(|| panic!("{code}: {place}"));
            assert!(line.ends_with(event["raw"].as_str().unwrap()), "{code}: the line as written: {line}");
        }
        let doc = std::fs::read_to_string(format!("{}/docs/findings/{code}.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let change = doc.split("## What to change in the system\n").nth(1).unwrap().split("\n## ").next().unwrap();
        assert!(section.contains(change.trim()), "{code}: its doc's 'What to change'");
    }
    assert!(page.html.iter().all(|h| own_html(h)), "{:?}", page.html);
}

#[test]
fn the_inputs_table_accounts_for_every_line_of_every_input() {
    let page = read(&markdown(&["analyze", INCIDENT, "--format", "markdown"]));
    let report = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run().json();
    let table = page.table("Inputs");
    assert_eq!(table[0], ["input", "kind", "format", "zone", "lines", "used", "events", "ignored", "rejected"]);
    let inputs = report["inputs"].as_array().unwrap();
    assert_eq!(table.len() - 1, inputs.len());
    for (row, input) in table[1..].iter().zip(inputs) {
        assert_eq!(row[0], input["path"].as_str().unwrap());
        for (cell, key) in [(4, "lines"), (5, "used"), (6, "events"), (8, "rejected")] {
            assert_eq!(row[cell], input[key].to_string(), "{key} of {row:?}");
        }
        assert!(row[7].starts_with(&input["ignored"].to_string()), "{row:?}");
    }
    let params = page.table("Lock parameters in force");
    assert_eq!(params[1], ["lockDuration", "1178000 ms", "lock parameters file"]);
    assert_eq!(params[2], ["lockRenewTime", "589000 ms", "lockDuration / 2 (BullMQ default)"]);
}

/// A ledger whose item, worker and detail hold every character Markdown, GitHub or HTML reads.
const HOSTILE_ITEM: &str = "PR|4412 `x` ``y`` <img src=x onerror=alert(1)> *b* _i_ [l](http://e.x) $m$ #7 @team";
const HOSTILE_DETAIL: &str = "review posted | <script>alert(2)</script> ```` fence ~~~ \\| end";

fn hostile_case() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let rows = [
        "at,run_id,job_id,slot,sweep,event,item,worker,status,detail".to_string(),
        "2026-10-07T00:53:03.204Z,run-a,job|1,2026-10-07T00:33:00.000Z,sweep,round_started,,w`1,RUNNING,".to_string(),
        "2026-10-07T00:54:03.310Z,run-b,job|2,2026-10-07T00:54:00.000Z,sweep,round_started,,w`1,RUNNING,".to_string(),
        format!(
            "2026-10-07T00:54:05.700Z,run-a,job|1,2026-10-07T00:33:00.000Z,sweep,item_selected,{HOSTILE_ITEM},w`1,,"
        ),
        format!(
            "2026-10-07T00:54:06.360Z,run-b,job|2,2026-10-07T00:54:00.000Z,sweep,item_selected,{HOSTILE_ITEM},w`1,,"
        ),
        format!(
            "2026-10-07T00:55:12.433Z,run-a,job|1,2026-10-07T00:33:00.000Z,sweep,effect_posted,{HOSTILE_ITEM},w`1,,{HOSTILE_DETAIL}"
        ),
        "2026-10-07T00:55:40.200Z,run-a,job|1,2026-10-07T00:33:00.000Z,sweep,round_finished,,w`1,DONE,".to_string(),
        "2026-10-07T00:56:02.500Z,run-b,job|2,2026-10-07T00:54:00.000Z,sweep,round_finished,,w`1,DONE,".to_string(),
    ];
    std::fs::write(dir.path().join("ledger.csv"), rows.join("\n") + "\n").unwrap();
    // A job whose queue, name and id hold them too, and lines that go on with HTML: its one run
    // is lock-headroom's longest, so both lines are cited and the ids are in its summary.
    let log = [
        format!(
            "2026-10-07 09:12:00.008 INFO  [BullWorker] job active queue={HOSTILE_QUEUE} name={HOSTILE_NAME} id={HOSTILE_JOB} pid=41877 note=\"| `x` <script>alert(3)</script> *y*\""
        ),
        format!(
            "2026-10-07 09:24:37.095 INFO  [BullWorker] job completed queue={HOSTILE_QUEUE} name={HOSTILE_NAME} id={HOSTILE_JOB} duration_ms=757087 pid=41877 | <b>bold</b>"
        ),
    ];
    std::fs::write(dir.path().join("server.log"), log.join("\n") + "\n").unwrap();
    dir
}

const HOSTILE_QUEUE: &str = "pr|review";
const HOSTILE_NAME: &str = "n`*x*";
const HOSTILE_JOB: &str = "a|b`<i>c</i>*d*";

#[test]
fn text_from_the_inputs_cannot_break_a_table_or_become_html() {
    let dir = hostile_case();
    let ledger = dir.path().join("ledger.csv");
    let log = dir.path().join("server.log");
    let args = |format| {
        let (ledger, log) = (ledger.to_str().unwrap().to_string(), log.to_str().unwrap().to_string());
        ["analyze", "--ledger", &ledger, "--log", &log, "--log-tz", "Asia/Seoul", "--format", format].map(String::from)
    };
    let run = |format| {
        let args = args(format);
        leasetrace(&args.iter().map(String::as_str).collect::<Vec<_>>()).run()
    };
    let report = run("json").json();
    for input in report["inputs"].as_array().unwrap() {
        assert_eq!(input["rejected"], 0, "the input reads: {input}");
    }
    let job = report["timeline"].as_array().unwrap().iter().find(|e| e["kind"] == "job-active").expect("the job");
    assert_eq!(
        (job["job_id"].as_str(), job["job_name"].as_str(), job["queue"].as_str()),
        (Some(HOSTILE_JOB), Some(HOSTILE_NAME), Some(HOSTILE_QUEUE)),
        "the log rule reads the ids as written"
    );
    assert!(
        report["findings"].as_array().unwrap().iter().any(|f| f["kind"] == "duplicate-selection"),
        "the case shows a duplicate selection: {report}"
    );
    let markdown_run = run("markdown");
    assert!(markdown_run.code == 0 || markdown_run.code == 1, "{}", markdown_run.stderr);
    let text = markdown_run.stdout;
    let page = read(&text);
    assert!(page.html.iter().all(|h| own_html(h)), "input text became HTML: {:?}", page.html);
    let html = comrak::markdown_to_html(&text, &gfm());
    // Nothing of the inputs is read as Markdown: no tag, no emphasis, no link or image syntax,
    // no math; in prose, values from the inputs are code spans, so that not even GitHub's own
    // autolinks, `#7` references or `@team` mentions are made of them.
    // The renderer's own links and anchors aside (the findings' numbers and headings).
    let html = regex::Regex::new(r##"<a (name="finding-\d+"|href="#finding-\d+")>"##).unwrap().replace_all(&html, "");
    for html_of_input in ["<img", "<script", "<em>b</em>", "<em>i</em>", "<a ", "<code>x</code>", "math"] {
        assert!(!html.contains(html_of_input), "{html_of_input} in {html}");
    }
    let table = page.table("Timeline");
    let rows = &table[1..];
    assert_eq!(rows.len(), report["timeline"].as_array().unwrap().len());
    for row in rows {
        assert_eq!(row.len(), 4, "a | in the text split no cell: {row:?}");
    }
    let selected: Vec<&Vec<String>> = rows.iter().filter(|r| r[1].starts_with("item selected")).collect();
    assert_eq!(selected.len(), 2);
    for row in &selected {
        assert!(row[1].contains(&format!("item {HOSTILE_ITEM}")), "the item as it was written: {row:?}");
        assert!(row[1].contains("job job|") && row[1].contains("worker w`1"), "{row:?}");
    }
    let effect = rows.iter().find(|r| r[1].starts_with("effect delivered")).unwrap();
    assert!(effect[1].ends_with(&format!("— {HOSTILE_DETAIL}")), "{effect:?}");
    // The raw line, with its backtick runs, stays inside its block.
    assert!(page.blocks.iter().any(|b| uncut(b).contains(HOSTILE_DETAIL)), "{:?}", page.blocks);
    assert!(page.blocks.iter().any(|b| uncut(b).contains("| <b>bold</b>")), "{:?}", page.blocks);
    // In prose (the summary, the line above the timeline) an id is a code span as written: no
    // `\|` left in it (that escape is for table cells only).
    let arena = comrak::Arena::new();
    let root = comrak::parse_document(&arena, &text, &gfm());
    let prose_code: Vec<String> = root
        .descendants()
        .filter(|n| matches!(n.data.borrow().value, NodeValue::Paragraph | NodeValue::Item(_)))
        .filter(|n| !n.ancestors().any(|a| matches!(a.data.borrow().value, NodeValue::Table(_))))
        .flat_map(|n| n.children().collect::<Vec<_>>())
        .filter_map(|n| match &n.data.borrow().value {
            NodeValue::Code(code) => Some(code.literal.clone()),
            _ => None,
        })
        .collect();
    for id in [HOSTILE_NAME, HOSTILE_ITEM] {
        assert!(prose_code.iter().any(|c| c == id), "{id} in prose as written: {prose_code:?}");
    }
    let headroom = rows.iter().find(|r| r[1].starts_with("job active")).expect("the cited job-active line");
    assert!(headroom[1].contains(&format!("job {HOSTILE_JOB}")), "{headroom:?}");
    assert!(headroom[1].contains(&format!("queue {HOSTILE_QUEUE}")), "{headroom:?}");
}

#[test]
fn the_whole_timeline_is_one_row_per_event() {
    let page = read(&markdown(&["timeline", INCIDENT, "--format", "markdown"]));
    let report = leasetrace(&["timeline", INCIDENT, "--format", "json"]).run().json();
    let events = report["timeline"].as_array().unwrap();
    let table = page.table("Events");
    assert_eq!(table[0], ["time", "what was observed", "source"]);
    assert_eq!(table.len() - 1, events.len());
    for (row, event) in table[1..].iter().zip(events) {
        assert_eq!(row[2], format!("{}:{}", event["source"]["path"].as_str().unwrap(), event["source"]["line"]));
        assert!(row[0].ends_with(" KST"), "{row:?}");
    }
    assert!(page.headings.iter().all(|(_, h)| h != "Findings"), "a timeline has no findings");
}

#[test]
fn the_docs_sample_is_the_binarys_output() {
    let doc = std::fs::read_to_string(format!("{}/docs/outputs/markdown.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let sample = doc.split("````markdown\n").nth(1).expect("a ````markdown sample").split("\n````").next().unwrap();
    let output = markdown(&["analyze", INCIDENT, "--format", "markdown"]);
    // The sample's lines are the output's, in its order; a line `…` stands for the lines left out.
    let mut lines = output.lines();
    for line in sample.lines().filter(|l| *l != "…") {
        assert!(lines.any(|l| l == line), "docs/outputs/markdown.md: not in the output, or out of order: {line}");
    }
}

#[test]
fn lock_refuses_the_markdown_format_instead_of_printing_its_table() {
    let run = leasetrace(&["lock", "--activated-at", "2026-10-07T00:33:00Z", "--format", "markdown"]).run();
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(run.stderr.contains("lock writes --format table or json, not markdown"), "{}", run.stderr);
}

#[test]
fn a_filter_narrows_the_timeline_and_says_so() {
    let text = markdown(&["analyze", INCIDENT, "--item", "PR-4412", "--format", "markdown"]);
    let page = read(&text);
    let rows = &page.table("Timeline")[1..];
    assert!(!rows.is_empty());
    for row in rows {
        assert!(row[1].contains("item PR-4412"), "only the item's events: {row:?}");
        assert!(!row[3].starts_with("computed"), "the expiry belongs to the job's events, not shown: {row:?}");
    }
    assert!(text.contains("The events the findings cite among the events with item PR-4412"), "{text}");
    let report = leasetrace(&["analyze", INCIDENT, "--item", "PR-4412", "--format", "json"]).run().json();
    assert_eq!(rows.len(), report["timeline"].as_array().unwrap().len());
    let warnings: Vec<&str> =
        report["warnings"].as_array().unwrap().iter().map(|w| w["message"].as_str().unwrap()).collect();
    let alerts: Vec<&str> = page.alerts.iter().map(|(_, text)| text.as_str()).collect();
    assert_eq!(alerts, warnings, "the hidden findings are said first");

    let whole = read(&markdown(&["timeline", INCIDENT, "--since", "2026-10-07 09:50", "--format", "markdown"]));
    let json = leasetrace(&["timeline", INCIDENT, "--since", "2026-10-07 09:50", "--format", "json"]).run().json();
    let events = &whole.table("Events")[1..];
    assert_eq!(events.len(), json["timeline"].as_array().unwrap().len());
    assert!(events.iter().all(|row| row[0].as_str() >= "09:50:00 KST"), "{events:?}");
}

#[test]
fn the_chart_is_the_mermaid_gantt_in_a_mermaid_block() {
    // The same source `--format mermaid` writes, which tests/mermaid checks with the real Mermaid.
    let text = markdown(&["analyze", INCIDENT, "--format", "markdown"]);
    let page = read(&text);
    let gantt = markdown(&["analyze", INCIDENT, "--format", "mermaid"]);
    assert!(page.blocks.contains(&gantt), "the gantt as a block of the page");
    assert!(text.contains(&format!("## Chart\n\n```mermaid\n{gantt}```\n")), "a block GitHub draws as Mermaid");
    let order: Vec<&String> = page.order.iter().filter(|o| o.starts_with("h2:")).collect();
    let at = |h: &str| order.iter().position(|o| *o == h).unwrap_or_else(|| panic!("{h} in {order:?}"));
    assert!(at("h2:Timeline") < at("h2:Chart") && at("h2:Chart") < at("h2:Findings"), "{order:?}");
    // Nothing to draw, no empty frame.
    assert!(!markdown(&["analyze", CLEAN, "--format", "markdown"]).contains("```mermaid"));
}

// ---------------------------------------------------------------- size, links, wrapping (issue 35)

/// A fleet's day: 48 findings over five workers and three queues, 242,000 characters of Markdown
/// in full.
const FLEET: &str = "fixtures/fleet-bullmq-6.7.0-shared-ledger";

/// GitHub's limit on an issue, a pull request's description or a comment.
const GITHUB_LIMIT: usize = 65_536;

/// The size GitHub counts when a browser sends the page: a line break is `\r\n`.
fn github_size(text: &str) -> usize {
    text.chars().count() + text.matches('\n').count()
}

#[test]
fn a_fleets_postmortem_fits_in_a_github_comment_and_lists_every_finding() {
    let text = markdown(&["analyze", FLEET, "--format", "markdown"]);
    assert!(github_size(&text) <= GITHUB_LIMIT, "{} characters", github_size(&text));
    let page = read(&text);
    let report = leasetrace(&["analyze", FLEET, "--format", "json"]).run().json();
    let findings = report["findings"].as_array().unwrap();
    assert!(findings.len() > 40, "a case with many findings: {}", findings.len());
    let headings: Vec<&String> = page.headings.iter().filter(|(level, _)| *level == 3).map(|(_, t)| t).collect();
    assert_eq!(headings.len(), findings.len(), "every finding keeps its heading");
    for (index, (finding, heading)) in findings.iter().zip(&headings).enumerate() {
        let severity = finding["severity"].as_str().unwrap().to_uppercase();
        let expected = format!("[{}] {severity} {} at ", index + 1, finding["kind"].as_str().unwrap());
        assert!(heading.starts_with(&expected), "{heading} is not {expected}");
    }
    // What the draft leaves out is said at its end, with where to find it.
    let (_, last) = page.headings.last().unwrap();
    assert_eq!(last, "Left out");
    let left_out = text.split("## Left out").nth(1).unwrap();
    assert!(left_out.contains("`--format json`"), "{left_out}");
    assert!(left_out.contains("leasetrace docs outputs/markdown"), "{left_out}");
    // A case that fits is left whole, and says nothing of a budget.
    let whole = markdown(&["analyze", INCIDENT, "--format", "markdown"]);
    assert!(!whole.contains("## Left out"));
    assert!(whole.contains("<details><summary>Metrics</summary>"));
}

/// The link targets (`#finding-4`) and the text of every link of `markdown`, and the anchors its
/// HTML names (`<a name="finding-4">`).
fn links_and_anchors(markdown: &str) -> (Vec<(String, String)>, Vec<String>) {
    let arena = comrak::Arena::new();
    let root = comrak::parse_document(&arena, markdown, &gfm());
    let anchor = regex::Regex::new(r#"^<a name="([^"]+)">$"#).unwrap();
    let (mut links, mut anchors) = (Vec::new(), Vec::new());
    for node in root.descendants() {
        match &node.data.borrow().value {
            NodeValue::Link(link) => links.push((link.url.clone(), shown(node))),
            NodeValue::HtmlInline(html) => {
                if let Some(name) = anchor.captures(html) {
                    anchors.push(name[1].to_string());
                }
            }
            _ => {}
        }
    }
    (links, anchors)
}

#[test]
fn every_finding_number_links_to_its_finding() {
    let plain = regex::Regex::new(r"(^|[^\[])\\\[(\d+)\\\]($|[^\]])").unwrap();
    for case in [INCIDENT, FLEET, "fixtures/bullmq-5.81.5-stalled-limit"] {
        let text = markdown(&["analyze", case, "--format", "markdown"]);
        let (links, anchors) = links_and_anchors(&text);
        let findings =
            leasetrace(&["analyze", case, "--format", "json"]).run().json()["findings"].as_array().unwrap().len();
        let expected: Vec<String> = (1..=findings).map(|n| format!("finding-{n}")).collect();
        assert_eq!(anchors, expected, "{case}: one anchor per finding, in order");
        let numbered: Vec<&(String, String)> = links.iter().filter(|(_, shown)| shown.starts_with('[')).collect();
        assert!(!numbered.is_empty(), "{case}: no [n] is a link");
        for (url, shown) in &numbered {
            let number = shown.trim_start_matches('[').trim_end_matches(']');
            assert_eq!(*url, format!("#finding-{number}"), "{case}: {shown} links to {url}");
            assert!(anchors.contains(&url[1..].to_string()), "{case}: {url} has no anchor");
        }
        // Every [n] of the page's own words is a link: none is left as plain text.
        for line in text.lines().filter(|l| !l.starts_with("### ") && !l.starts_with("Most severe first")) {
            assert!(!plain.is_match(line), "{case}: a number that is no link: {line}");
        }
    }
}

#[test]
fn no_line_of_a_text_block_is_wider_than_the_wrap_and_none_loses_a_character() {
    let mut cited = 0;
    for case in [INCIDENT, FLEET, "fixtures/bullmq-5.81.5-stalled-limit", "fixtures/lease-late-write-accepted"] {
        let text = markdown(&["analyze", case, "--format", "markdown"]);
        let arena = comrak::Arena::new();
        let root = comrak::parse_document(&arena, &text, &gfm());
        let mut blocks = 0;
        for node in root.descendants() {
            if let NodeValue::CodeBlock(block) = &node.data.borrow().value {
                // A Mermaid block is drawn as a chart, never shown as lines.
                if block.info == "mermaid" {
                    continue;
                }
                blocks += 1;
                for line in block.literal.lines() {
                    assert!(line.chars().count() <= 100, "{case}: {} characters: {line}", line.chars().count());
                }
            }
        }
        assert!(blocks > 0, "{case}");
        // Every cited line the draft shows is there whole, its pieces put back together.
        let report = leasetrace(&["analyze", case, "--format", "json"]).run().json();
        let page = read(&text);
        let shown: Vec<String> = page.blocks.iter().map(|b| uncut(b)).collect();
        for finding in report["findings"].as_array().unwrap() {
            for event in finding["evidence"].as_array().unwrap() {
                let place = format!("{}:{}  ", event["source"]["path"].as_str().unwrap(), event["source"]["line"]);
                let raw = event["raw"].as_str().unwrap();
                let lines = shown.iter().flat_map(|b| b.lines()).filter(|l| l.starts_with(&place));
                for line in lines {
                    cited += 1;
                    assert!(line.ends_with(raw), "{case}: {place} is not whole: {line}");
                }
            }
        }
    }
    assert!(cited > 50, "{cited} cited lines checked");
}
