//! The pictures and the HTML report in a real browser: headless Chromium opens the pages
//! leasetrace writes, a small harness script (added by the test, never part of the report)
//! measures the rendered DOM, and screenshots are taken to be looked at.
//!
//! `tests/browser/setup.sh` installs Chromium (Debian `chromium`) and a font when missing. When
//! they cannot be installed (setup.sh exit 3), the tests say SKIPPED, unless `CI` is set, where
//! they fail. Screenshots go to `$LEASETRACE_SCREENSHOTS`, else to `target/tmp/screenshots`:
//! never into the repository.

// Pixel coordinates of a page: small, exact in f64.
#![allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss, clippy::float_cmp)]

use std::sync::OnceLock;

use super::*;

const FLEET: &str = "fixtures/fleet-bullmq-6.7.0-shared-ledger";

fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// The browser `tests/browser/setup.sh` found or installed, or `None` (SKIPPED) outside CI.
fn browser() -> Option<&'static Path> {
    static BROWSER: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let found = BROWSER.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let setup = Command::new("bash")
            .arg(root.join("tests/browser/setup.sh"))
            .stdin(Stdio::null())
            .output()
            .expect("bash runs tests/browser/setup.sh");
        let said = String::from_utf8_lossy(&setup.stderr);
        if setup.status.code() == Some(3) {
            return Err(format!("tests/browser/setup.sh could not install Chromium: {}", said.trim()));
        }
        assert!(setup.status.success(), "`bash tests/browser/setup.sh` failed ({}):\n{said}", setup.status);
        Ok(PathBuf::from(String::from_utf8_lossy(&setup.stdout).trim()))
    });
    match found {
        Ok(path) => Some(path),
        Err(why) if in_ci() => panic!("{why} (CI is set, so this fails instead of skipping)"),
        Err(why) => {
            eprintln!("SKIPPED: {why}");
            None
        }
    }
}

/// Runs headless Chromium on `file` with `args`, in a profile of its own (tests run at once).
fn chromium(browser: &Path, file: &Path, size: (u32, u32), args: &[&str]) -> Output {
    let profile = tempfile::tempdir().unwrap();
    let output = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"])
        .args(["--disable-extensions", "--disable-background-networking", "--mute-audio"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--window-size={},{}", size.0, size.1))
        .args(args)
        .arg(format!("file://{}", file.display()))
        .stdin(Stdio::null())
        .output()
        .expect("chromium runs");
    assert!(output.status.success(), "chromium failed: {}", String::from_utf8_lossy(&output.stderr));
    output
}

/// Measures a report page in Chromium: the harness below runs after the page's own script and
/// writes what it measured into the DOM, which `--dump-dom` prints.
fn measure(browser: &Path, html: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.html");
    let (before, after) = html.rsplit_once("</body>").expect("a </body>");
    std::fs::write(&file, format!("{before}<script>{HARNESS}</script></body>{after}")).unwrap();
    let output = chromium(browser, &file, (1280, 1000), &["--dump-dom", "--virtual-time-budget=2000"]);
    let dom = String::from_utf8_lossy(&output.stdout);
    let measured = dom
        .split("<pre id=\"measured\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("the harness wrote nothing: {}", &dom[..dom.len().min(2000)]));
    let json = measured.replace("&lt;", "<").replace("&gt;", ">").replace("&nbsp;", "\u{a0}").replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// What the harness measures: the chain's lines, where the sections are, each finding, the
/// boxes of the marks (the picks apart), the ticks, the resources the page fetched (none), and
/// what zooming in and filtering change.
const HARNESS: &str = r"
(function () {
  var box = function (e) { var b = e.getBoundingClientRect(); return [b.left, b.right, b.top, b.bottom]; };
  var all = function (s) { return Array.prototype.slice.call(document.querySelectorAll(s)); };
  var out = {};
  out.chain = all('#chain li').map(function (li) { return li.textContent; });
  out.order = ['chain', 'timeline', 'findings'].map(function (id) {
    var e = document.getElementById(id); return e ? e.getBoundingClientRect().top : -1; });
  out.findings = all('article.finding').map(function (a) {
    return { id: a.id, shown: a.offsetParent !== null, evidence: a.querySelectorAll('ol.evidence li').length,
             arithmetic: a.querySelector('pre.arithmetic') !== null }; });
  var marks = function (s) { return all(s).map(function (m) {
    var shape = m.querySelector('.shape'); return { at: m.dataset.at, lane: m.closest('.lane').id, box: box(shape) }; }); };
  out.picks = marks('#chart .mark.pick');
  out.instants = marks('#chart .mark:not([data-u1])');
  out.ticks = all('#ticks text').map(function (t) { return t.textContent; });
  out.resources = performance.getEntriesByType('resource').length;
  out.scripts = document.scripts.length;
  out.handlers = all('img, iframe, object, embed').length + all('*').filter(function (e) {
    return Array.prototype.some.call(e.attributes, function (a) { return a.name.indexOf('on') === 0; }); }).length;
  var zoomIn = document.querySelector('[data-zoom=in]');
  if (zoomIn) { zoomIn.click(); zoomIn.click(); out.picksZoomed = marks('#chart .mark.pick'); }
  var reset = document.querySelector('[data-zoom=reset]');
  if (reset) { reset.click(); }
  var rounds = document.querySelector('select[data-filter=rounds]');
  if (rounds) {
    var option = all('select[data-filter=rounds] option').filter(function (o) { return o.textContent === 'run-0954-a'; })[0];
    if (option) {
      rounds.value = option.value; rounds.dispatchEvent(new Event('change'));
      out.filtered = all('article.finding').filter(function (a) { return a.offsetParent !== null; }).map(function (a) { return a.id; });
      out.lanesShown = all('#chart .lane').filter(function (l) { return !l.classList.contains('hidden'); }).length;
    }
  }
  var pre = document.createElement('pre'); pre.id = 'measured'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
";

/// Where the screenshots go (kept out of the repository).
fn shots() -> PathBuf {
    let dir = std::env::var_os("LEASETRACE_SCREENSHOTS")
        .map_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots"), PathBuf::from);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A screenshot of `content` (a page or a picture, by `extension`) as `name`.png; its path.
fn screenshot(browser: &Path, name: &str, content: &str, extension: &str, size: (u32, u32)) -> PathBuf {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("{name}.{extension}"));
    std::fs::write(&file, content).unwrap();
    let png = shots().join(format!("{name}.png"));
    chromium(browser, &file, size, &[&format!("--screenshot={}", png.display()), "--virtual-time-budget=2000"]);
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG"), "{} is no PNG", png.display());
    // A blank page compresses to a few kilobytes; a drawn one does not.
    assert!(bytes.len() > 30_000, "{} looks blank ({} bytes)", png.display(), bytes.len());
    png
}

/// The height a picture asks for.
fn svg_height(svg: &str) -> u32 {
    let height = svg.split("height=\"").nth(1).unwrap().split('"').next().unwrap();
    height.parse::<f64>().unwrap().ceil() as u32
}

fn output(case: &str, format: &str) -> String {
    let run = leasetrace(&["analyze", case, "--format", format]).run();
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    run.stdout
}

fn boxes(marks: &Value) -> Vec<[f64; 4]> {
    marks
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let b = m["box"].as_array().unwrap();
            [b[0].as_f64().unwrap(), b[1].as_f64().unwrap(), b[2].as_f64().unwrap(), b[3].as_f64().unwrap()]
        })
        .collect()
}

#[test]
fn the_html_report_in_chromium_shows_the_chain_every_finding_and_the_picks_apart() {
    let Some(browser) = browser() else { return };
    let html = output(INCIDENT, "html");
    let measured = measure(browser, &html);
    // The chain first, then the timeline, then the findings.
    let chain: Vec<&str> = measured["chain"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert!(chain[0].starts_with("ERROR [4] duplicate-selection: PR-4412 was selected"), "{chain:?}");
    assert!(chain.iter().any(|l| l.starts_with("← caused by WARNING [1] stalled-rerun")), "{chain:?}");
    let order: Vec<f64> = measured["order"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert!(order[0] >= 0.0 && order[0] < order[1] && order[1] < order[2], "{order:?}");
    // Every finding, shown, with its evidence; the ones with arithmetic show it.
    let findings = measured["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 5);
    for (i, finding) in findings.iter().enumerate() {
        assert_eq!(finding["id"], format!("finding-{}", i + 1));
        assert!(finding["shown"] == true && finding["evidence"].as_u64().unwrap() > 0, "{finding}");
    }
    assert!(findings[0]["arithmetic"] == true);
    // The two picks 0.66 s apart, at the default zoom: their diamonds do not overlap, and are
    // 20 px apart or more.
    let picks = boxes(&measured["picks"]);
    assert_eq!(picks.len(), 2, "{measured}");
    let (a, b) = (picks[0], picks[1]);
    assert!(a[1] <= b[0] || b[1] <= a[0], "the picks' boxes overlap: {a:?} {b:?}");
    let apart = (f64::midpoint(a[0], a[1]) - f64::midpoint(b[0], b[1])).abs();
    assert!(apart >= 20.0, "the picks are {apart} px apart");
    // Zooming in twice takes them further apart.
    let zoomed = boxes(&measured["picksZoomed"]);
    let apart_zoomed = (f64::midpoint(zoomed[0][0], zoomed[0][1]) - f64::midpoint(zoomed[1][0], zoomed[1][1])).abs();
    assert!(
        apart_zoomed > apart * 1.5 || zoomed.iter().any(|z| z[0] < 0.0 || z[0] > 1280.0),
        "{apart} → {apart_zoomed}"
    );
    // The script drew the axis in the display zone, to the second in the dense stretch.
    let ticks: Vec<&str> = measured["ticks"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert!(ticks.contains(&"09:40") && ticks.iter().any(|t| t.len() == 8 && t.starts_with("09:54:")), "{ticks:?}");
    // Nothing was fetched.
    assert_eq!(measured["resources"], 0);
    // Filtering by round run-0954-a keeps the findings about it (and their lanes).
    let filtered: Vec<&str> = measured["filtered"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    assert_eq!(filtered, ["finding-3", "finding-4"]);
    assert_eq!(measured["lanesShown"], 2);
}

#[test]
fn a_hostile_case_runs_no_script_of_its_own_in_chromium() {
    let Some(browser) = browser() else { return };
    let case = super::html::hostile_case();
    let html = output(case.path().to_str().unwrap(), "html");
    let measured = measure(browser, &html);
    // The page's own script and the harness; no image, no element with a handler.
    assert_eq!(measured["scripts"], 2, "{measured}");
    assert_eq!(measured["handlers"], 0, "{measured}");
    assert_eq!(measured["resources"], 0);
    // and the texts are there, as text.
    let chain = measured["chain"].to_string();
    assert!(chain.contains("<img src=x onerror=alert(2)>"), "{chain}");
}

#[test]
fn the_html_report_of_a_fleet_in_chromium_keeps_its_marks_apart() {
    let Some(browser) = browser() else { return };
    let html = output(FLEET, "html");
    let measured = measure(browser, &html);
    let findings = measured["findings"].as_array().unwrap();
    assert_eq!(findings.len(), html.matches("<article class=\"finding ").count());
    assert!(findings.len() > 40 && findings.iter().all(|f| f["shown"] == true));
    assert!(!measured["chain"].as_array().unwrap().is_empty());
    assert_eq!(measured["resources"], 0);
    // Instants of one lane at different times never share a pixel.
    let instants = measured["instants"].as_array().unwrap();
    for (i, a) in instants.iter().enumerate() {
        for b in &instants[i + 1..] {
            if a["lane"] == b["lane"] && a["at"] != b["at"] {
                let (x, y) = (&boxes(&Value::Array(vec![a.clone()]))[0], &boxes(&Value::Array(vec![b.clone()]))[0]);
                let apart = (f64::midpoint(x[0], x[1]) - f64::midpoint(y[0], y[1])).abs();
                assert!(apart >= 2.0, "{a} and {b} are {apart} px apart");
            }
        }
    }
}

#[test]
fn screenshots_of_the_html_report_and_the_svg_are_drawn() {
    let Some(browser) = browser() else { return };
    for (case, name) in [(INCIDENT, "incident-2026-10-07"), (FLEET, "fleet")] {
        let html = output(case, "html");
        let png = screenshot(browser, &format!("{name}.html"), &html, "html", (1280, 1600));
        eprintln!("screenshot: {}", png.display());
        let svg = output(case, "svg");
        let png = screenshot(browser, &format!("{name}.svg"), &svg, "svg", (1200, svg_height(&svg).min(4000)));
        eprintln!("screenshot: {}", png.display());
    }
}

#[test]
fn the_real_mermaid_in_chromium_draws_the_two_picks_apart() {
    let Some(browser) = browser() else { return };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mermaid = root.join("tests/mermaid/node_modules/mermaid/dist/mermaid.min.js");
    if !mermaid.exists() {
        // tests/mermaid/setup.sh installs it; the picture tests say so when they cannot.
        assert!(!in_ci(), "no {}: run tests/mermaid/setup.sh", mermaid.display());
        eprintln!("SKIPPED: no {} (tests/mermaid/setup.sh installs it)", mermaid.display());
        return;
    }
    let chart = output(INCIDENT, "mermaid");
    let escaped = chart.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    // The page of a wiki that draws the chart: Mermaid from the pinned package, 1200 px wide.
    let page = format!(
        "<!DOCTYPE html><html><body style=\"margin:0;width:1200px\"><pre class=\"mermaid\">{escaped}</pre>\
         <script src=\"file://{}\"></script><script>{MERMAID_HARNESS}</script></body></html>",
        mermaid.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chart.html");
    std::fs::write(&file, &page).unwrap();
    let output = chromium(browser, &file, (1200, 800), &["--dump-dom", "--virtual-time-budget=10000"]);
    let dom = String::from_utf8_lossy(&output.stdout);
    let measured = dom
        .split("<pre id=\"measured\"")
        .nth(1)
        .and_then(|rest| rest.split_once('>'))
        .and_then(|(_, rest)| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("Mermaid drew nothing: {}", &dom[..dom.len().min(3000)]));
    let measured: Value = serde_json::from_str(&measured.replace("&quot;", "\"").replace("&amp;", "&")).unwrap();
    assert!(measured["error"].is_null(), "{measured}");
    let picks = boxes(&measured["picks"]);
    assert_eq!(picks.len(), 2, "{measured}");
    let (a, b) = (picks[0], picks[1]);
    assert!(a[1] <= b[0] || b[1] <= a[0], "Mermaid drew the picks overlapping: {a:?} {b:?}");
    let apart = (f64::midpoint(a[0], a[1]) - f64::midpoint(b[0], b[1])).abs();
    assert!(apart >= 20.0, "Mermaid drew the picks {apart} px apart");
    let png = screenshot(browser, "incident-2026-10-07.mermaid", &page, "html", (1200, 700));
    eprintln!("screenshot: {}", png.display());
}

/// Draws the `.mermaid` block, then writes the boxes of the two picks' milestones (tasks whose
/// labels start with "picks") into the DOM.
const MERMAID_HARNESS: &str = r"
mermaid.initialize({ startOnLoad: false });
mermaid.run().then(function () {
  var out = { picks: [] };
  Array.prototype.forEach.call(document.querySelectorAll('text.taskText, text.taskTextOutsideLeft, text.taskTextOutsideRight'), function (t) {
    if (t.textContent.indexOf('picks ') !== 0) { return; }
    var rect = document.getElementById(t.id.replace(/-text$/, ''));
    if (rect) { var b = rect.getBoundingClientRect(); out.picks.push({ box: [b.left, b.right, b.top, b.bottom] }); }
  });
  var pre = document.createElement('pre'); pre.id = 'measured'; pre.hidden = true; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}, function (e) {
  var pre = document.createElement('pre'); pre.id = 'measured'; pre.hidden = true; pre.textContent = JSON.stringify({ error: String(e) });
  document.body.appendChild(pre);
});
";
