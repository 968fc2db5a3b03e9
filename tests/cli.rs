//! Command-line options the docs show are parsed without panicking, even
//! when the command then fails for another reason (here: no certificates).

mod common;

use common::mcfed;

#[test]
fn bsub_resource_requirements_parse() {
    for resources in ["bigmem", "select[bigmem && fast]"] {
        let output = mcfed(&[
            "bsub",
            "--cluster",
            "Cluster1",
            "-q",
            "send",
            "-R",
            resources,
            "--scenario",
            "scenarios/forwarding/example1-count-preemptable.toml",
            "--certs",
            "/nonexistent-certs",
        ]);
        let errors = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "-R {resources}: {errors}");
        assert!(
            errors.contains("/nonexistent-certs"),
            "-R {resources}: {errors}"
        );
        assert!(!errors.contains("panicked"), "-R {resources}: {errors}");
    }
    let output = mcfed(&["bsub", "--cluster", "C1", "-q", "send", "-R", "mem>100"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a boolean resource name"));
}
