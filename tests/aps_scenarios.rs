//! End-to-end: what turning absolute priority scheduling on changes
//! (seed 001, "Preemption"): the same federation with and without
//! APS_PRIORITY dispatches its high jobs in a different order, but the
//! preemption picks the same victim.

mod common;

const PREEMPTION: &str = "scenarios/aps/preemption-unaffected.toml";

/// The scenario at `path` with its APS_PRIORITY lines removed and its
/// preemptor's name swapped in its expectations.
fn without_aps(text: &str) -> String {
    text.lines()
        .filter(|line| !line.starts_with("APS_PRIORITY"))
        .map(|line| match line {
            "job = \"h-second\"" => "job = \"h-first\"",
            "job = \"h-first\"" => "job = \"h-second\"",
            "preempted_by = \"h-second\"" => "preempted_by = \"h-first\"",
            other => other,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn aps_changes_the_dispatch_order_but_not_the_victim() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(PREEMPTION)).expect("scenario");
    let with_aps = common::mcfed(&["run", PREEMPTION, "--check"]);
    let held = common::succeeded(&with_aps);
    assert!(held.contains("5 of 5 expectations held"), "{held}");

    let dir = tempfile::tempdir().expect("temp dir");
    let plain = dir.path().join("no-aps.toml");
    let changed = without_aps(&text);
    assert!(
        !changed.lines().any(|line| line.starts_with("APS_PRIORITY")),
        "{changed}"
    );
    std::fs::write(&plain, &changed).expect("write");
    // First come, first served: h-first runs (and preempts), h-second
    // pends; the victim is young again, old is left alone.
    let output = common::mcfed(&["run", plain.to_str().expect("utf-8"), "--check"]);
    let held = common::succeeded(&output);
    assert!(held.contains("5 of 5 expectations held"), "{held}");
    assert!(held.contains("job young is preempted by h-first"), "{held}");
}
