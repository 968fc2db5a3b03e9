//! Keys are written safely (issue 26, item 11): created 0600 from the
//! start in a new file, renamed into place — never written through a
//! symbolic link, never left 0644 — and existing keys or certificates are
//! never replaced without `--force`.

use std::os::unix::fs::{MetadataExt as _, symlink};
use std::path::Path;

use mcfed_transport::FederationTls;
use mcfed_transport::certs::{
    self, ADMIN_NAME, CertError, ClusterHosts, Role, ca_cert_path, identity_paths,
};

fn clusters(names: &[&str]) -> Vec<ClusterHosts> {
    names
        .iter()
        .map(|name| ClusterHosts {
            name: (*name).to_owned(),
            hosts: Vec::new(),
        })
        .collect()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).expect("metadata").mode() & 0o777
}

#[test]
fn keys_are_0600_certificates_0644_and_nothing_is_replaced_without_force() {
    let dir = tempfile::tempdir().expect("temp dir");
    let written = certs::init_with_options(dir.path(), &clusters(&["A"]), false).expect("init");
    for file in &written.files {
        if file.extension().is_some_and(|ext| ext == "key") {
            assert_eq!(mode(file), 0o600, "{}", file.display());
        } else {
            assert_eq!(mode(file) & 0o600, 0o600, "{}", file.display());
        }
    }
    let (_, key) = identity_paths(dir.path(), Role::Cluster, "A");
    assert_eq!(mode(&key), 0o600);
    let before = std::fs::read(&key).expect("key");
    // Without ca.pem, the cluster's key was overwritten without a word.
    std::fs::remove_file(ca_cert_path(dir.path())).expect("no CA certificate");
    let error = certs::init_with_options(dir.path(), &clusters(&["A"]), false)
        .expect_err("existing keys are kept");
    assert!(matches!(error, CertError::Exists(_)), "{error}");
    assert!(error.to_string().contains("--force"), "{error}");
    assert_eq!(std::fs::read(&key).expect("key"), before, "the key changed");
    // With --force, a key left 0644 comes back 0600.
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .expect("chmod");
    certs::init_with_options(dir.path(), &clusters(&["A"]), true).expect("forced");
    assert_eq!(mode(&key), 0o600);
    assert_ne!(std::fs::read(&key).expect("key"), before);
    FederationTls::load(dir.path(), Role::Cluster, "A").expect("the new files work");
    FederationTls::load(dir.path(), Role::Admin, ADMIN_NAME).expect("the new files work");
}

#[test]
fn a_symbolic_link_in_place_of_a_key_is_replaced_never_written_through() {
    let dir = tempfile::tempdir().expect("temp dir");
    let elsewhere = tempfile::tempdir().expect("temp dir");
    let target = elsewhere.path().join("innocent.txt");
    std::fs::write(&target, b"not a key\n").expect("target");
    let (_, key) = identity_paths(dir.path(), Role::Cluster, "A");
    symlink(&target, &key).expect("symlink");
    let error = certs::init_with_options(dir.path(), &clusters(&["A"]), false)
        .expect_err("a link counts as an existing file");
    assert!(matches!(error, CertError::Exists(_)), "{error}");
    certs::init_with_options(dir.path(), &clusters(&["A"]), true).expect("forced");
    assert_eq!(std::fs::read(&target).expect("target"), b"not a key\n");
    let meta = std::fs::symlink_metadata(&key).expect("key");
    assert!(
        meta.file_type().is_file(),
        "the link was replaced by a file"
    );
    assert_eq!(mode(&key), 0o600);
    // A dangling link too.
    std::fs::remove_file(&key).expect("removed");
    symlink(elsewhere.path().join("nowhere"), &key).expect("dangling");
    assert!(certs::init_with_options(dir.path(), &clusters(&["A"]), false).is_err());
    certs::init_with_options(dir.path(), &clusters(&["A"]), true).expect("forced");
    assert!(!elsewhere.path().join("nowhere").exists());
}

#[test]
fn certificate_files_are_read_bounded_and_only_if_regular() {
    let dir = tempfile::tempdir().expect("temp dir");
    certs::init_with_options(dir.path(), &clusters(&["A"]), false).expect("init");
    let (_, key) = identity_paths(dir.path(), Role::Cluster, "A");
    std::fs::remove_file(&key).expect("removed");
    symlink("/dev/zero", &key).expect("symlink");
    let error = FederationTls::load(dir.path(), Role::Cluster, "A").expect_err("refused");
    assert!(error.to_string().contains("not a regular file"), "{error}");
    std::fs::remove_file(&key).expect("removed");
    std::fs::write(&key, vec![b'A'; 2 << 20]).expect("large");
    let error = FederationTls::load(dir.path(), Role::Cluster, "A").expect_err("refused");
    assert!(error.to_string().contains("more than"), "{error}");
}
