//! Messages read well (issue 29) and reads are bounded (issue 26 item 7):
//! one error per refused value, in the catalogue's words; control
//! characters escaped; nothing quoted from a file outside the
//! configuration directory; `#INCLUDE "/dev/zero"` and FIFOs refused.

use std::path::Path;

use super::import_cluster;
use crate::limits::MAX_FILE_BYTES;

/// Imports cluster `C1` from `dir`; every error as its printed line.
fn import_errors(dir: &Path) -> Vec<String> {
    match import_cluster("C1", dir, None) {
        Ok(_) => Vec::new(),
        Err(error) => error.errors.iter().map(ToString::to_string).collect(),
    }
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write");
}

const TWO_HOSTS: &str = "Begin Host\nHOSTNAME server\nh1 1\nh2 1\nEnd Host\n";

#[test]
fn a_refused_mxj_is_one_error_in_the_catalogues_words() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "lsf.cluster.C1", TWO_HOSTS);
    write(
        dir.path(),
        "lsb.hosts",
        "Begin Host\nHOST_NAME MXJ\ndefault 99999999999999999999\nEnd Host\n",
    );
    let errors = import_errors(dir.path());
    let file = dir.path().join("lsb.hosts");
    assert_eq!(
        errors,
        [format!(
            "error: {}:3:9: MXJ expects a whole number of job slots from 0 to 4294967295, `!` (one slot per processor) or `()` (unlimited), found `99999999999999999999`",
            file.display()
        )]
    );
}

#[test]
fn a_refused_ncpus_gives_no_second_error_about_processors() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(
        dir.path(),
        "lsf.cluster.C1",
        "Begin Host\nHOSTNAME ncpus\nh1 many\nEnd Host\n",
    );
    write(
        dir.path(),
        "lsb.hosts",
        "Begin Host\nHOST_NAME MXJ\ndefault !\nEnd Host\n",
    );
    let errors = import_errors(dir.path());
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].ends_with("ncpus expects a whole number from 0 to 4294967295, found `many`"),
        "{errors:?}"
    );
}

#[test]
fn control_characters_in_names_are_shown_escaped() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "lsf.cluster.C1", TWO_HOSTS);
    write(
        dir.path(),
        "lsb.queues",
        "Begin Queue\nQUEUE_NAME = bad\u{0}name\u{1b}[2J\nEnd Queue\n",
    );
    let errors = import_errors(dir.path());
    assert!(!errors.is_empty());
    for error in &errors {
        assert!(!error.chars().any(char::is_control), "{error:?}");
    }
    assert!(
        errors
            .iter()
            .any(|error| error.contains(r"bad\u{0}name\u{1b}[2J")),
        "{errors:?}"
    );
}

/// A file outside the configuration directory: `#INCLUDE`d, or an lsb.*
/// file that is a symlink to it.
const SECRET: &str = "s3cret-Line-Of-Another-File:x:0:0\n";

#[test]
fn an_included_file_outside_the_directory_is_never_quoted() {
    let top = tempfile::tempdir().expect("temp dir");
    std::fs::write(top.path().join("secret"), SECRET).expect("write");
    let dir = top.path().join("conf");
    std::fs::create_dir(&dir).expect("dir");
    write(&dir, "lsf.cluster.C1", TWO_HOSTS);
    let mut cases = vec![
        format!("{}/secret", top.path().display()),
        "../secret".into(),
    ];
    let passwd = std::fs::read_to_string("/etc/passwd").ok();
    if passwd.is_some() {
        cases.push("/etc/passwd".into());
    }
    for include in cases {
        write(
            &dir,
            "lsb.queues",
            &format!("Begin Queue\nQUEUE_NAME = q\nEnd Queue\n#INCLUDE \"{include}\"\n"),
        );
        let errors = import_errors(&dir).join("\n");
        assert!(errors.contains(":1:1: expected `…`"), "{errors}");
        assert!(
            errors.contains("outside the configuration directory: its content is not shown"),
            "{errors}"
        );
        assert!(!errors.contains("s3cret"), "{errors}");
        if let Some(first) = passwd.as_deref().and_then(|text| text.lines().next()) {
            let user = first.split(':').next().unwrap_or(first);
            assert!(!errors.contains(&format!("{user}:")), "{errors}");
        }
    }
    let link = dir.join("lsb.params");
    std::os::unix::fs::symlink(top.path().join("secret"), &link).expect("symlink");
    let errors = import_errors(&dir).join("\n");
    assert!(!errors.contains("s3cret"), "{errors}");
    assert!(errors.contains("lsb.params:1:1"), "{errors}");
}

#[test]
fn an_included_device_is_bounded_by_the_bytes_read() {
    if !Path::new("/dev/zero").exists() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "lsf.cluster.C1", TWO_HOSTS);
    write(
        dir.path(),
        "lsb.queues",
        "Begin Queue\nQUEUE_NAME = q\nEnd Queue\n#INCLUDE \"/dev/zero\"\n",
    );
    let errors = import_errors(dir.path()).join("\n");
    assert!(
        errors.contains(&format!(
            "lsb.queues:4:1: /dev/zero is longer than the {MAX_FILE_BYTES} bytes a configuration file may have"
        )),
        "{errors}"
    );
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("lsb.params")).expect("symlink");
    let errors = import_errors(dir.path()).join("\n");
    assert!(errors.contains("lsb.params is longer than the"), "{errors}");
}

#[test]
fn a_fifo_is_refused_without_waiting_for_a_writer() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "lsf.cluster.C1", TWO_HOSTS);
    let fifo = dir.path().join("lsb.params");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let errors = import_errors(dir.path()).join("\n");
    assert!(
        errors.contains("lsb.params: it is a FIFO or a socket, not a file"),
        "{errors}"
    );
}

#[test]
fn a_refused_value_gives_no_second_error_for_its_key() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "lsf.cluster.C1", TWO_HOSTS);
    write(
        dir.path(),
        "lsb.hosts",
        "Begin Host\nHOST_NAME MXJ\ndefault 2\nEnd Host\n",
    );
    for (queues, expected) in [
        (
            "Begin Queue\nQUEUE_NAME = two words\nPRIORITY = 1\nEnd Queue\n",
            "QUEUE_NAME",
        ),
        (
            "Begin Queue\nQUEUE_NAME = q\nHOSTS = h[3-1]\nEnd Queue\n",
            "goes down",
        ),
        (
            "Begin Queue\nQUEUE_NAME = q\nPRIORITY = 99999999999999999999\nEnd Queue\n",
            "PRIORITY expects a whole number",
        ),
    ] {
        write(dir.path(), "lsb.queues", queues);
        let errors = import_errors(dir.path());
        assert_eq!(errors.len(), 1, "{queues}: {errors:?}");
        assert!(errors[0].contains(expected), "{errors:?}");
    }
}
