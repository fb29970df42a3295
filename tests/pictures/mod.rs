//! The pictures, read by real readers of their formats: the Mermaid gantt (`--format mermaid`) is
//! parsed by the real Mermaid (pinned in `tests/mermaid/package.json`, run under Node by
//! `tests/mermaid/check.mjs`, which prints the tasks Mermaid made of it), and the SVG
//! (`--format svg`) is parsed and drawn by resvg, whose pixels are looked at.
//!
//! The Mermaid check needs Node; `tests/mermaid/setup.sh` installs the npm packages (and a font
//! for resvg) when missing. Without Node, or when the packages cannot be installed (setup.sh exit
//! 3), the check is skipped with a message, unless `CI` is set, where it fails. Without any font the SVG's text cannot be drawn: its shapes are still checked,
//! and the text check is skipped with a message, unless `CI` is set.

// Pixel coordinates and counts of a 1200 px picture: small, positive, exact in f32.
#![allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss, clippy::float_cmp)]

use std::sync::OnceLock;

use resvg::tiny_skia;

use super::*;

const DUPLICATE_EFFECT: &str = "fixtures/duplicate-effect";

fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// Runs `tests/mermaid/setup.sh` once; `false` when Node is missing (and `CI` is not set).
fn mermaid_ready() -> bool {
    static READY: OnceLock<Result<(), String>> = OnceLock::new();
    let ready = READY.get_or_init(|| {
        if Command::new("node").arg("--version").output().is_err() {
            return Err("node is not installed: the Mermaid chart was not parsed with the real Mermaid".to_string());
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let setup = Command::new("bash")
            .arg(root.join("tests/mermaid/setup.sh"))
            .stdin(Stdio::null())
            .output()
            .expect("bash runs tests/mermaid/setup.sh");
        let said = String::from_utf8_lossy(&setup.stderr);
        // Exit 3: what is missing cannot be installed here (no npm, no network).
        if setup.status.code() == Some(3) {
            return Err(format!("tests/mermaid/setup.sh could not install the Mermaid check: {}", said.trim()));
        }
        assert!(setup.status.success(), "`bash tests/mermaid/setup.sh` failed ({}):\n{said}", setup.status);
        Ok(())
    });
    match ready {
        Ok(()) => true,
        Err(why) if in_ci() => panic!("{why} (CI is set, so this fails instead of skipping)"),
        Err(why) => {
            eprintln!("SKIPPED: {why}; install Node 18+ to run it");
            false
        }
    }
}

/// What the real Mermaid made of `chart` (see `tests/mermaid/check.mjs`), or `None` without Node.
fn mermaid_reads(chart: &str) -> Option<Value> {
    if !mermaid_ready() {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chart.mmd");
    std::fs::write(&file, chart).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Mermaid reads the chart's wall-clock times in the process' zone: UTC has no DST gap.
    let output = Command::new("node")
        .arg(root.join("tests/mermaid/check.mjs"))
        .arg(&file)
        .env("TZ", "UTC")
        .stdin(Stdio::null())
        .output()
        .expect("node runs check.mjs");
    assert!(
        output.status.success(),
        "the real Mermaid rejects the chart:\n{}\n--- chart:\n{chart}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(serde_json::from_slice(&output.stdout).expect("check.mjs prints JSON"))
}

fn chart_of(case: &str, format: &str) -> String {
    let run = leasetrace(&["analyze", case, "--format", format]).run();
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    run.stdout
}

/// The task line whose name starts with `name`.
fn task_line<'a>(chart: &'a str, name: &str) -> &'a str {
    let wanted = format!("    {name}");
    chart.lines().find(|l| l.starts_with(&wanted)).unwrap_or_else(|| panic!("no task '{name}' in:\n{chart}"))
}

/// Mermaid's task named starting with `name`: (section, start, end, milestone, crit).
fn task<'a>(read: &'a Value, name: &str) -> &'a Value {
    read["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"].as_str().unwrap().starts_with(name))
        .unwrap_or_else(|| panic!("Mermaid read no task '{name}': {read:#}"))
}

/// The time a task line places its mark at (its start), as written.
fn placed_at(line: &str) -> String {
    let data = line.rsplit_once(" :").unwrap().1;
    let parts: Vec<&str> = data.split(", ").collect();
    parts[parts.len() - 2].to_string()
}

#[test]
fn the_reference_incidents_gantt_has_the_seeds_times_to_the_second() {
    let chart = chart_of(INCIDENT, "mermaid");
    assert!(chart.starts_with("---\nconfig:\n  gantt:\n    leftPadding: "), "{chart}");
    let title = chart.lines().find(|l| l.starts_with("    title ")).unwrap();
    assert!(title.ends_with("(times in Asia/Seoul, KST)"), "{chart}");
    // Each mark is labelled with the seed's times (the axis is broken: the task's own times only
    // place it), and the parts that went wrong are crit.
    let label = |name: &str, tags: &str| {
        let line = task_line(&chart, name);
        assert!(line.contains(&format!(":{tags}m")), "{line}");
        line
    };
    label("lock held 09#58;33#58;00–09#58;52#58;38 [1]", "");
    label("restart 09#58;37#58;26 [1]", "crit, milestone, ");
    label("first renewal due 09#58;37#58;54.50–09#58;42#58;49 [1]", "");
    label("lock expired 09#58;52#58;38 [1]", "milestone, ");
    label("re-run from the start 09#58;53#58;00 [1]", "milestone, ");
    label("overlap with run-0933-b 09#58;54#58;03.31–09#58;55#58;40.20 [3]", "crit, ");
    let first = label("picks PR-4412 09#58;54#58;05.70 [4]", "crit, milestone, ");
    let second = label("picks PR-4412 again 09#58;54#58;06.36 (+0.66 s) [4]", "crit, milestone, ");
    // Placed in the order of the seed's times.
    let order = [
        "lock held",
        "restart",
        "first renewal due",
        "lock expired",
        "re-run",
        "picks PR-4412 09",
        "picks PR-4412 again",
    ];
    let placed: Vec<String> = order.iter().map(|name| placed_at(task_line(&chart, name))).collect();
    assert!(placed.windows(2).all(|w| w[0] < w[1]), "{placed:?}\n{chart}");
    assert!(placed_at(first) < placed_at(second));
    assert!(chart.contains("    %% The axis is broken: "), "{chart}");
    // One section per round, in the order they started; the info finding is said, not drawn.
    let sections: Vec<&str> = chart.lines().filter_map(|l| l.strip_prefix("    section ")).collect();
    assert_eq!(sections, ["round run-0933-a", "round run-0933-b", "round run-0954-a"]);
    // The rounds' job, too long for the room left of the bars, is kept in a comment.
    assert!(
        chart.contains(
            "    section round run-0933-a\n    %% round run-0933-a: job repeat:pr-review-sweep:1791333180000\n"
        ),
        "{chart}"
    );
    assert!(chart.contains("    %% Not drawn: lock-headroom (info)\n"), "{chart}");
    // lockRenewTime is BullMQ's default here: the renewal window rests on it, and the chart says so.
    assert!(chart.contains("    %% WARNING: lockRenewTime 589000 ms (lockDuration / 2) is the BullMQ"), "{chart}");
}

/// Milliseconds from `a` to `b`, two times as the chart writes them.
fn ms_between(a: &str, b: &str) -> i64 {
    let parse = |t: &str| chrono::NaiveDateTime::parse_from_str(t, "%Y-%m-%d %H:%M:%S%.3f").unwrap();
    (parse(b) - parse(a)).num_milliseconds()
}

#[test]
fn the_real_mermaid_reads_the_reference_incident_as_written() {
    let chart = chart_of(INCIDENT, "mermaid");
    let Some(read) = mermaid_reads(&chart) else { return };
    assert_eq!(read["type"], "gantt");
    assert_eq!(read["dateFormat"], "YYYY-MM-DD HH:mm:ss.SSS");
    let tasks = read["tasks"].as_array().unwrap();
    let lines = chart.lines().filter(|l| l.contains(" :") && !l.trim_start().starts_with("%%")).count();
    assert_eq!(tasks.len(), lines, "every task line is a task: {read:#}");
    // Every task is read where the chart placed it.
    for name in ["lock held", "restart", "lock expired", "re-run", "picks PR-4412 09", "picks PR-4412 again"] {
        let t = task(&read, name);
        assert_eq!(t["start"].as_str().unwrap(), placed_at(task_line(&chart, name)), "{name}");
        assert_eq!(t["milestone"] == true, name != "lock held", "{name}");
    }
    assert!(task(&read, "picks PR-4412 09")["crit"] == true);
    // Entity codes are drawn as the characters they stand for.
    assert_eq!(task(&read, "lock held")["section"], "round run-0933-a");
    assert_eq!(task(&read, "overlap with")["name"], "overlap with run-0933-b 09:54:03.31–09:55:40.20 [3]");
    assert_eq!(task(&read, "restart")["name"], "restart 09:37:26 [1]");
    assert_eq!(
        read["title"],
        "duplicate-selection [4] ← sweep-overlap [3] ← stalled-rerun [1] (times in Asia/Seoul, KST)"
    );
}

#[test]
fn the_two_picks_0_66_s_apart_are_apart_in_the_mermaid_chart() {
    // Mermaid draws the chart about 1000 px wide: the picks must be 20 px of it apart, not the
    // 0.5 px of a linear axis over 23 minutes.
    let chart = chart_of(INCIDENT, "mermaid");
    let Some(read) = mermaid_reads(&chart) else { return };
    let tasks = read["tasks"].as_array().unwrap();
    let first = tasks.iter().map(|t| t["start"].as_str().unwrap()).min().unwrap();
    let last = tasks.iter().map(|t| t["end"].as_str().unwrap()).max().unwrap();
    let picks = ms_between(
        task(&read, "picks PR-4412 09")["start"].as_str().unwrap(),
        task(&read, "picks PR-4412 again")["start"].as_str().unwrap(),
    );
    let share = picks as f64 / ms_between(first, last) as f64;
    assert!(share * 1000.0 >= 20.0, "the picks are {:.1} px of 1000 apart:\n{chart}", share * 1000.0);
}

#[test]
fn the_real_mermaid_parses_the_chart_of_every_fixture() {
    let cases = [
        INCIDENT,
        CLEAN,
        REAL_STALLED,
        REAL_LIMIT,
        REAL_REPLICA_DIED,
        REAL_LIMIT_LOGGED,
        DUPLICATE_EFFECT,
        "fixtures/clock-offset-suspected",
        "fixtures/early-takeover",
        "fixtures/lease-late-write-accepted",
        "fixtures/retry-exhausted",
        "fixtures/retry-storm",
        "fixtures/stuck-running",
    ];
    for case in cases {
        let chart = chart_of(case, "mermaid");
        let Some(read) = mermaid_reads(&chart) else { return };
        let lines = chart.lines().filter(|l| l.contains(" :") && !l.trim_start().starts_with("%%")).count();
        assert_eq!(read["tasks"].as_array().unwrap().len(), lines, "{case}: {read:#}\n{chart}");
        // Every time Mermaid read is one the chart wrote (no task fell back to a default date).
        for t in read["tasks"].as_array().unwrap() {
            let start = t["start"].as_str().unwrap();
            assert!(chart.contains(&format!(", {start}, ")), "{case}: Mermaid read {start} for {t}:\n{chart}");
        }
    }
}

/// A case whose round ids and item are made of what Mermaid and XML treat as syntax.
const HOSTILE_RUN_A: &str = "run:a;b#c %%x";
const HOSTILE_RUN_B: &str = "<run&\"b'>";
const HOSTILE_ITEM: &str = "PR:1;#2 </text><x>";
const HOSTILE_JOB: &str = "job:1;#";

fn hostile_case() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("leasetrace.toml"),
        "display_tz = \"Asia/Seoul\"\n\n[[sources]]\nkind = \"ledger\"\npath = \"ledger.csv\"\ntz = \"UTC\"\n",
    )
    .unwrap();
    let mut csv = csv::Writer::from_path(dir.path().join("ledger.csv")).unwrap();
    csv.write_record(["at", "run_id", "job_id", "slot", "sweep", "event", "item", "worker", "status", "detail"])
        .unwrap();
    let rows = [
        ("2026-10-07T00:53:03.204Z", HOSTILE_RUN_A, "round_started", ""),
        ("2026-10-07T00:54:03.310Z", HOSTILE_RUN_B, "round_started", ""),
        ("2026-10-07T00:54:05.700Z", HOSTILE_RUN_A, "item_selected", HOSTILE_ITEM),
        ("2026-10-07T00:54:06.360Z", HOSTILE_RUN_B, "item_selected", HOSTILE_ITEM),
        ("2026-10-07T00:55:40.200Z", HOSTILE_RUN_A, "round_finished", ""),
        ("2026-10-07T00:56:02.500Z", HOSTILE_RUN_B, "round_finished", ""),
    ];
    for (at, run, event, item) in rows {
        let slot = if run == HOSTILE_RUN_A { "2026-10-07T00:33:00.000Z" } else { "2026-10-07T00:54:00.000Z" };
        csv.write_record([at, run, HOSTILE_JOB, slot, "sweep", event, item, "w1", "", ""]).unwrap();
    }
    csv.flush().unwrap();
    dir
}

#[test]
fn hostile_ids_reach_mermaid_and_the_svg_as_themselves() {
    let case = hostile_case();
    let path = case.path().to_str().unwrap();
    let chart = chart_of(path, "mermaid");
    // No statement is broken: every line is a known statement, a comment, a section or a task.
    let (front, gantt) = chart.split_once("---\ngantt\n").expect("front matter, then the chart");
    assert!(front.starts_with("---\nconfig:\n") && !front[4..].contains("---"), "{front}");
    for line in gantt.lines() {
        let line = line.trim_start();
        let known = ["title ", "accDescr: ", "dateFormat ", "axisFormat ", "todayMarker ", "%% ", "section ", "gantt"];
        assert!(known.iter().any(|k| line.starts_with(k)) || line.split_once(" :").is_some(), "{line}\n{chart}");
    }
    if let Some(read) = mermaid_reads(&chart) {
        let pick = task(&read, &format!("picks {HOSTILE_ITEM} 09"));
        assert_eq!(pick["section"], format!("round {HOSTILE_RUN_A}"));
        assert!(pick["name"].as_str().unwrap().ends_with(" 09:54:05.70 [3]"), "{pick}");
        let again = task(&read, &format!("picks {HOSTILE_ITEM} again"));
        assert_eq!(again["section"], format!("round {HOSTILE_RUN_B}"));
        assert!(task(&read, &format!("overlap with {HOSTILE_RUN_A} "))["crit"] == true);
    }
    // The SVG is well-formed XML whose texts are the ids themselves.
    let svg = chart_of(path, "svg");
    let tree = usvg::Tree::from_str(&svg, &options()).unwrap_or_else(|e| panic!("resvg rejects the SVG: {e}\n{svg}"));
    let texts = texts(tree.root());
    for wanted in [format!("round {HOSTILE_RUN_A}"), format!("round {HOSTILE_RUN_B}")] {
        assert!(texts.iter().any(|t| t == &wanted), "no text {wanted:?} in {texts:?}");
    }
    assert!(texts.iter().any(|t| t.starts_with(&format!("picks {HOSTILE_ITEM} again"))), "{texts:?}");
}

use resvg::usvg;

fn options() -> usvg::Options<'static> {
    let mut options = usvg::Options::default();
    options.fontdb_mut().load_system_fonts();
    options
}

/// The text of every text element under `group`, as usvg read it.
fn texts(group: &usvg::Group) -> Vec<String> {
    let mut out = Vec::new();
    for node in group.children() {
        match node {
            usvg::Node::Group(g) => out.extend(texts(g)),
            usvg::Node::Text(t) => out.push(t.chunks().iter().map(usvg::TextChunk::text).collect()),
            _ => {}
        }
    }
    out
}

/// Pixels of `pixmap` inside `rect` (clipped to the picture) that are not `background`.
fn painted(pixmap: &tiny_skia::Pixmap, rect: usvg::Rect, keep: impl Fn(tiny_skia::ColorU8) -> bool) -> usize {
    let (width, height) = (pixmap.width(), pixmap.height());
    let clamp = |v: f32, max: u32| (v.max(0.0) as u32).min(max);
    let (x0, x1) = (clamp(rect.left(), width), clamp(rect.right().ceil(), width));
    let (y0, y1) = (clamp(rect.top(), height), clamp(rect.bottom().ceil(), height));
    let mut count = 0;
    for y in y0..y1 {
        for x in x0..x1 {
            let pixel = pixmap.pixel(x, y).unwrap().demultiply();
            if keep(pixel) {
                count += 1;
            }
        }
    }
    count
}

/// Neither the white background, the lane stripes nor the grid.
fn ink(c: tiny_skia::ColorU8) -> bool {
    c.red() < 200 || c.green() < 200 || c.blue() < 200
}

fn reddish(c: tiny_skia::ColorU8) -> bool {
    u16::from(c.red()) > u16::from(c.green()) + 60 && u16::from(c.red()) > u16::from(c.blue()) + 60
}

fn bluish(c: tiny_skia::ColorU8) -> bool {
    u16::from(c.blue()) > u16::from(c.red()) + 60
}

#[test]
fn the_reference_svg_renders_with_a_real_renderer() {
    let svg = chart_of(INCIDENT, "svg");
    let options = options();
    let tree = usvg::Tree::from_str(&svg, &options).unwrap_or_else(|e| panic!("resvg rejects the SVG: {e}"));
    let size = tree.size();
    assert_eq!(size.width(), 1200.0);
    assert!((300.0..1000.0).contains(&size.height()), "a laptop screen's height or less: {}", size.height());
    let mut pixmap = tiny_skia::Pixmap::new(size.width() as u32, size.height() as u32).unwrap();
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());

    // Each lane (three rounds) has its marks drawn in the time area, right of the lane names.
    for lane in 1..=3 {
        let node = tree.node_by_id(&format!("lane-{lane}")).unwrap_or_else(|| panic!("no lane-{lane}"));
        let b = node.abs_bounding_box();
        let time_area = usvg::Rect::from_ltrb(300.0, b.top(), b.right(), b.bottom()).unwrap();
        assert!(painted(&pixmap, time_area, ink) > 300, "lane {lane} is empty in {b:?}");
    }
    assert!(tree.node_by_id("lane-4").is_none(), "three rounds, three lanes");
    // The lock is a blue bar, the overlap and the picks are red.
    let by_class = |class: &str| {
        let mut found = Vec::new();
        collect_ids(tree.root(), &mut |id, node| {
            if id.ends_with(&format!("-{class}")) {
                found.push(node.abs_bounding_box());
            }
        });
        found
    };
    let locks = by_class("lock");
    assert_eq!(locks.len(), 1);
    assert!(locks[0].width() > 400.0, "the lock's 19 minutes keep a long bar: {:?}", locks[0]);
    // The mark's box holds its leader line too: the bar is its top 18 px.
    assert!(painted(&pixmap, locks[0], bluish) as f32 > 0.8 * locks[0].width() * 18.0);
    let overlaps = by_class("overlap");
    assert_eq!(overlaps.len(), 1);
    assert!(painted(&pixmap, overlaps[0], reddish) > 100, "{:?}", overlaps[0]);
    let picks = by_class("pick");
    assert_eq!(picks.len(), 2);
    for pick in picks {
        assert!(painted(&pixmap, pick, reddish) > 20, "{pick:?}");
    }

    // The report's warning is said in the picture, before the lanes.
    let texts = texts(tree.root());
    assert!(texts.iter().any(|t| t.starts_with("WARNING: lockRenewTime 589000 ms")), "{texts:?}");

    // The title is drawn: dark pixels where its first line is (needs a font).
    let fonts = options.fontdb.len();
    if fonts == 0 {
        assert!(!in_ci(), "no font for resvg: tests/mermaid/setup.sh installs fonts-dejavu-core");
        eprintln!("SKIPPED: no system font: the SVG's text was not drawn (install fonts-dejavu-core)");
        return;
    }
    let title = usvg::Rect::from_ltrb(20.0, 16.0, 600.0, 40.0).unwrap();
    assert!(painted(&pixmap, title, |c| c.red() < 80 && c.green() < 80 && c.blue() < 80) > 500, "no title drawn");
}

/// The boxes of the marks of `class` (`pick`, `lock`) in `svg`, as usvg reads them.
fn mark_boxes(svg: &str, class: &str) -> Vec<usvg::Rect> {
    let tree = usvg::Tree::from_str(svg, &options()).unwrap_or_else(|e| panic!("resvg rejects the SVG: {e}"));
    let mut found = Vec::new();
    collect_ids(tree.root(), &mut |id, node| {
        if id.ends_with(&format!("-{class}")) {
            found.push(node.abs_bounding_box());
        }
    });
    found
}

#[test]
fn the_two_picks_0_66_s_apart_are_apart_in_the_svg_at_one_to_one() {
    // A linear axis over the incident's 23 minutes put them 0.4 px apart: one mark.
    let svg = chart_of(INCIDENT, "svg");
    let picks = mark_boxes(&svg, "pick");
    assert_eq!(picks.len(), 2);
    // A pick's box is its diamond (14 px wide) and its leader line, centred on its time.
    let centre = |b: &usvg::Rect| f32::midpoint(b.left(), b.right());
    let apart = (centre(&picks[1]) - centre(&picks[0])).abs();
    assert!(apart >= 20.0, "the picks are {apart} px apart: {picks:?}");
    // The dense stretch they are in is drawn as such, with its zoom under the axis.
    assert!(svg.contains(r#"<rect class="dense" "#), "{svg}");
    assert!(svg.contains(r#"class="zoom""#) && svg.contains(r#"class="axis-break""#), "{svg}");
    // and their labels say the real times.
    assert!(
        svg.contains(">picks PR-4412 09:54:05.70 [4]<")
            && svg.contains(">picks PR-4412 again 09:54:06.36 (+0.66 s) [4]<")
    );
}

/// The reference incident's ledger, with the long round ids and item names a scheduler and a
/// code host give, and the second pick 3.57 s after the first: the headline is four lines long.
fn long_ids_case() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("leasetrace.toml"),
        "display_tz = \"UTC\"\n\n[[sources]]\nkind = \"ledger\"\npath = \"ledger.csv\"\ntz = \"UTC\"\n",
    )
    .unwrap();
    let ledger = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT).join("ledger.csv"))
        .unwrap()
        .replace("run-0933-b", "pr-review-sweep-2026-10-07T09:33:00+09:00-primary-ap-northeast-2a-attempt-2")
        .replace("run-0954-a", "pr-review-sweep-2026-10-07T09:54:00+09:00-primary-ap-northeast-2c-attempt-1")
        .replace("PR-4412", "github.com/example-org/payments-service/pull/4412")
        .replace("2026-10-07T00:54:06.360Z", "2026-10-07T00:54:09.270Z");
    std::fs::write(dir.path().join("ledger.csv"), ledger).unwrap();
    dir
}

#[test]
fn a_long_headline_wraps_whole_in_the_svg_and_is_said_whole_by_mermaid() {
    let case = long_ids_case();
    let path = case.path().to_str().unwrap();
    let svg = chart_of(path, "svg");
    let tree = usvg::Tree::from_str(&svg, &options()).unwrap();
    let texts = texts(tree.root());
    let all = texts.join(" ");
    // Cut at two lines before: "… 3.57 s…" without "both rounds delivered an effect for it."
    assert!(all.contains("3.57 s apart; both rounds delivered an effect for it."), "{texts:#?}");
    // Neither the title nor a line of the story is cut (a lane's name, left of the lanes, is).
    let story = texts.iter().take_while(|t| !t.starts_with("round ") && !t.contains(", times in "));
    assert!(!story.clone().any(|t| t.ends_with('…')), "{texts:#?}");
    assert!(story.clone().any(|t| t.starts_with("← because the old worker lived on")), "{texts:#?}");

    // Mermaid cannot wrap its title: the chain says it whole, the description in full.
    let chart = chart_of(path, "mermaid");
    let title = chart.lines().find(|l| l.starts_with("    title ")).unwrap();
    assert!(!title.contains('…'), "{title}");
    assert_eq!(title, "    title duplicate-selection [3] ← sweep-overlap [2] ← stalled-rerun [1] (times in UTC)");
    let description = chart.lines().find(|l| l.starts_with("    accDescr: ")).unwrap();
    assert!(description.ends_with("3.57 s apart; both rounds delivered an effect for it."), "{description}");
    if let Some(read) = mermaid_reads(&chart) {
        assert_eq!(read["title"], "duplicate-selection [3] ← sweep-overlap [2] ← stalled-rerun [1] (times in UTC)");
    }
}

#[test]
fn a_title_names_the_zone_once() {
    // "(times in UTC, UTC)" before: UTC's abbreviation is its name.
    let run = leasetrace(&["analyze", INCIDENT, "--tz", "UTC", "--format", "mermaid"]).run();
    let title = run.stdout.lines().find(|l| l.starts_with("    title ")).unwrap().to_string();
    assert!(title.ends_with(" (times in UTC)"), "{title}");
    let svg = leasetrace(&["analyze", INCIDENT, "--tz", "UTC", "--format", "svg"]).run().stdout;
    assert!(svg.contains(">2026-10-07, times in UTC<"), "{svg}");
    assert!(!svg.contains("UTC (UTC)") && !title.contains("UTC, UTC"));
    // A zone whose abbreviation says more keeps both.
    let svg = chart_of(INCIDENT, "svg");
    assert!(svg.contains(">2026-10-07, times in KST (Asia/Seoul)<"), "{svg}");
}

fn collect_ids<'a>(group: &'a usvg::Group, each: &mut impl FnMut(&'a str, &'a usvg::Node)) {
    for node in group.children() {
        if !node.id().is_empty() {
            each(node.id(), node);
        }
        if let usvg::Node::Group(g) = node {
            collect_ids(g, each);
        }
    }
}

#[test]
fn the_docs_samples_are_the_real_outputs() {
    // docs/outputs/mermaid.md shows the reference incident's chart as the binary prints it, and
    // docs/outputs/svg.md shows the golden SVG itself.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/outputs/mermaid.md")).unwrap();
    let chart = chart_of(INCIDENT, "mermaid");
    assert!(
        doc.contains(&format!("```mermaid\n{chart}```")),
        "docs/outputs/mermaid.md's sample is not the output:\n{chart}"
    );
    let doc = std::fs::read_to_string(root.join("docs/outputs/svg.md")).unwrap();
    assert!(
        doc.contains("](../../tests/golden/incident-2026-10-07.analyze.svg)"),
        "docs/outputs/svg.md shows the golden SVG"
    );
}
