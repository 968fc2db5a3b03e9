//! Command-line options the docs show are parsed without panicking, even
//! when the command then fails for another reason (here: no certificates).

use crate::common;

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

/// `bsub -We` (a run-time estimate) and `bsub -gpu "num=N"` parse as LSF
/// spells them; a bad GPU requirement is refused by name.
#[test]
fn bsub_run_estimate_and_gpus_parse() {
    for extra in [
        &["-We", "30"][..],
        &["-We", "1:30"][..],
        &["-gpu", "num=2"][..],
        &["-gpu", "num=1:mode=exclusive_process"][..],
    ] {
        let mut args = vec!["bsub", "--cluster", "Cluster1", "-q", "send"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&[
            "--scenario",
            "scenarios/forwarding/example1-count-preemptable.toml",
            "--certs",
            "/nonexistent-certs",
        ]);
        let output = mcfed(&args);
        let errors = String::from_utf8_lossy(&output.stderr);
        assert!(errors.contains("/nonexistent-certs"), "{extra:?}: {errors}");
        assert!(!errors.contains("panicked"), "{extra:?}: {errors}");
    }
    let output = mcfed(&["bsub", "--cluster", "C1", "-q", "send", "-gpu", "num=0"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not a GPU requirement"));
}
