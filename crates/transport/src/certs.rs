//! The federation's certificates: a federation CA, one key pair per
//! cluster and one for the administrator, made with rcgen
//! (`mcfed certs init`), and the identity a certificate carries.
//!
//! A certificate names its holder in its subject: the common name (CN) is
//! the cluster's name (or the administrator's) and the organisational unit
//! (OU) its role, `cluster` or `admin`. The verifiers in [`crate::tls`]
//! accept only certificates the federation CA signed, and the transport
//! binds every connection to the name in the peer's certificate.
//!
//! Files in a certificate directory:
//!
//! | file | what |
//! |---|---|
//! | `ca.pem`, `ca.key` | the federation CA (keep `ca.key` offline) |
//! | `cluster-NAME.pem`, `cluster-NAME.key` | cluster NAME's certificate and key |
//! | `admin.pem`, `admin.key` | the administrator's, for `bsub`, `bjobs`, ... and `launch` |

use std::fmt;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

/// The OU of a cluster's certificate.
const CLUSTER_OU: &str = "cluster";
/// The OU of the administrator's certificate.
const ADMIN_OU: &str = "admin";
/// The CN of the administrator's certificate made by [`init`].
pub const ADMIN_NAME: &str = "admin";
/// The hosts a cluster's certificate names when none are given: this
/// machine's loopback names, for a federation on one machine.
pub const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// A cluster to make a certificate for, and the hosts (names or IP
/// addresses) it is reached at: its certificate's subject alternative
/// names, which whoever dials it checks against the host it dialled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterHosts {
    /// The cluster's name.
    pub name: String,
    /// Its hosts; empty: [`LOOPBACK`].
    pub hosts: Vec<String>,
}

/// What a certificate's holder may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// A cluster: it may send counters and jobs under its name.
    Cluster,
    /// The administrator: it may run LSF-style commands against clusters.
    Admin,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Cluster => CLUSTER_OU,
            Role::Admin => ADMIN_OU,
        })
    }
}

/// Who a certificate says its holder is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Identity {
    /// The role (the subject's OU).
    pub role: Role,
    /// The name (the subject's CN).
    pub name: String,
}

impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} `{}`", self.role, self.name)
    }
}

/// Why certificates could not be made, read or understood.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// rcgen refused to make a key or certificate.
    #[error("cannot make the certificate of {what}: {source}")]
    Generate {
        /// Whose.
        what: String,
        /// Why.
        #[source]
        source: rcgen::Error,
    },
    /// A PEM file holds no certificate or key of the expected kind.
    #[error("{path}: {what}")]
    Pem {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// A certificate does not name a cluster or administrator.
    #[error("the certificate does not name an mcfed cluster or administrator: {0}")]
    NoIdentity(String),
    /// A file `init` would write exists, and replacing it was not asked
    /// for.
    #[error(
        "{0} exists: replacing it would make the certificates or keys in use stop working; pass --force to replace it anyway"
    )]
    Exists(PathBuf),
    /// A name cannot be used in a certificate file name.
    #[error("`{0}` cannot be used as a name in a certificate")]
    BadName(String),
    /// The same cluster is listed twice.
    #[error("cluster `{0}` is listed twice")]
    Duplicate(String),
    /// A cluster's certificate does not name the host it was reached at.
    #[error(
        "{identity} was reached at {host}, but its certificate is for {}: make certificates that name each cluster's address (`mcfed certs init DIR --scenario FILE`, or `--hosts FILE`)",
        if hosts.is_empty() { "no host".to_owned() } else { hosts.join(", ") }
    )]
    WrongHost {
        /// Whose certificate.
        identity: Identity,
        /// The host dialled.
        host: String,
        /// The hosts the certificate names.
        hosts: Vec<String>,
    },
}

/// The file holding the federation CA's certificate.
pub fn ca_cert_path(dir: &Path) -> PathBuf {
    dir.join("ca.pem")
}

/// The certificate and key files of `identity` in `dir`.
pub fn identity_paths(dir: &Path, role: Role, name: &str) -> (PathBuf, PathBuf) {
    let stem = match role {
        Role::Cluster => format!("cluster-{name}"),
        Role::Admin => name.to_owned(),
    };
    (
        dir.join(format!("{stem}.pem")),
        dir.join(format!("{stem}.key")),
    )
}

fn check_name(name: &str) -> Result<(), CertError> {
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(CertError::BadName(name.to_owned()))
    }
}

/// Writes `contents` to `path` safely: into a new temporary file beside
/// it, created exclusively (`O_CREAT | O_EXCL`: never through a symbolic
/// link, never an existing file) with mode 0600 for a key (0644 for a
/// certificate) from the start, synced, then renamed over `path` — so a
/// symbolic link at `path` is replaced, never written through, and an
/// existing key's looser mode is not kept.
fn write_file(path: &Path, contents: &str, secret: bool) -> Result<(), CertError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| CertError::Io { path, source }
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().map_or_else(
        || "file".to_owned(),
        |name| name.to_string_lossy().into_owned(),
    );
    let temporary = dir.join(format!(".{name}.{}.new", std::process::id()));
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(if secret { 0o600 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = secret;
    let written = options.open(&temporary).and_then(|mut file| {
        file.write_all(contents.as_bytes())?;
        file.sync_all()
    });
    if let Err(source) = written {
        let _ = fs::remove_file(&temporary);
        return Err(io(&temporary)(source));
    }
    fs::rename(&temporary, path).map_err(|source| {
        let _ = fs::remove_file(&temporary);
        io(path)(source)
    })
}

fn leaf_params(role: Role, name: &str, hosts: &[String]) -> Result<CertificateParams, CertError> {
    let generate = |source| CertError::Generate {
        what: format!("{role} `{name}`"),
        source,
    };
    let names: Vec<String> = match role {
        Role::Admin => Vec::new(),
        Role::Cluster if hosts.is_empty() => LOOPBACK.iter().map(|&h| h.to_owned()).collect(),
        Role::Cluster => hosts.to_vec(),
    };
    let mut params = CertificateParams::new(names).map_err(generate)?;
    params.distinguished_name.push(DnType::CommonName, name);
    params
        .distinguished_name
        .push(DnType::OrganizationalUnitName, role.to_string());
    params
        .distinguished_name
        .push(DnType::OrganizationName, "mcfed federation");
    params.use_authority_key_identifier_extension = true;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = match role {
        // A cluster both dials its peers and accepts them.
        Role::Cluster => vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ],
        Role::Admin => vec![ExtendedKeyUsagePurpose::ClientAuth],
    };
    Ok(params)
}

/// What [`init`] wrote.
#[derive(Clone, Debug)]
pub struct Written {
    /// Every file, in the order written.
    pub files: Vec<PathBuf>,
}

/// Makes a federation CA, a certificate and key for each of `clusters`
/// (naming this machine, [`LOOPBACK`]), and an administrator's, in `dir`
/// (created if missing). If any of those files exists, nothing is written
/// ([`CertError::Exists`]; [`init_with_options`] can replace them).
pub fn init(dir: &Path, clusters: &[String]) -> Result<Written, CertError> {
    let clusters: Vec<ClusterHosts> = clusters
        .iter()
        .map(|name| ClusterHosts {
            name: name.clone(),
            hosts: Vec::new(),
        })
        .collect();
    init_with_hosts(dir, &clusters)
}

/// [`init`], each cluster's certificate naming its own hosts.
pub fn init_with_hosts(dir: &Path, clusters: &[ClusterHosts]) -> Result<Written, CertError> {
    init_with_options(dir, clusters, false)
}

/// [`init_with_hosts`]; with `force`, files that exist are replaced (`mcfed
/// certs init --force`), else refused before anything is written. Every
/// file is written safely ([`write_file`]: keys 0600 from the start, never
/// through a symbolic link).
pub fn init_with_options(
    dir: &Path,
    clusters: &[ClusterHosts],
    force: bool,
) -> Result<Written, CertError> {
    for (index, cluster) in clusters.iter().enumerate() {
        check_name(&cluster.name)?;
        if clusters[..index].iter().any(|c| c.name == cluster.name) {
            return Err(CertError::Duplicate(cluster.name.clone()));
        }
    }
    if !force {
        let mut files = vec![ca_cert_path(dir), dir.join("ca.key")];
        for cluster in clusters {
            let (cert, key) = identity_paths(dir, Role::Cluster, &cluster.name);
            files.extend([cert, key]);
        }
        let (cert, key) = identity_paths(dir, Role::Admin, ADMIN_NAME);
        files.extend([cert, key]);
        // A dangling symbolic link counts too.
        if let Some(existing) = files
            .into_iter()
            .find(|file| file.symlink_metadata().is_ok())
        {
            return Err(CertError::Exists(existing));
        }
    }
    fs::create_dir_all(dir).map_err(|source| CertError::Io {
        path: dir.to_owned(),
        source,
    })?;
    let ca_error = |source| CertError::Generate {
        what: "the federation CA".to_owned(),
        source,
    };
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(ca_error)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "mcfed federation CA");
    ca_params
        .distinguished_name
        .push(DnType::OrganizationName, "mcfed federation");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = KeyPair::generate().map_err(ca_error)?;
    let ca_cert = ca_params.self_signed(&ca_key).map_err(ca_error)?;
    let mut files = Vec::new();
    let ca_path = ca_cert_path(dir);
    write_file(&ca_path, &ca_cert.pem(), false)?;
    files.push(ca_path);
    let ca_key_path = dir.join("ca.key");
    write_file(&ca_key_path, &ca_key.serialize_pem(), true)?;
    files.push(ca_key_path);
    let issuer = Issuer::new(ca_params, ca_key);

    let holders = clusters
        .iter()
        .map(|c| (Role::Cluster, c.name.as_str(), c.hosts.as_slice()))
        .chain(std::iter::once((Role::Admin, ADMIN_NAME, &[][..])));
    for (role, name, hosts) in holders {
        let generate = |source| CertError::Generate {
            what: format!("{role} `{name}`"),
            source,
        };
        let params = leaf_params(role, name, hosts)?;
        let key = KeyPair::generate().map_err(generate)?;
        let cert = params.signed_by(&key, &issuer).map_err(generate)?;
        let (cert_path, key_path) = identity_paths(dir, role, name);
        write_file(&cert_path, &cert.pem(), false)?;
        write_file(&key_path, &key.serialize_pem(), true)?;
        files.push(cert_path);
        files.push(key_path);
    }
    Ok(Written { files })
}

/// The identity in a DER certificate: its subject's CN and OU.
pub fn identity_of(der: &[u8]) -> Result<Identity, CertError> {
    let (_, cert) = x509_parser::parse_x509_certificate(der)
        .map_err(|error| CertError::NoIdentity(format!("not an X.509 certificate: {error}")))?;
    let subject = cert.subject();
    let one = |mut values: Vec<&str>, what: &str| -> Result<String, CertError> {
        match (values.pop(), values.is_empty()) {
            (Some(value), true) => Ok(value.to_owned()),
            (None, _) => Err(CertError::NoIdentity(format!("its subject has no {what}"))),
            (Some(_), false) => Err(CertError::NoIdentity(format!(
                "its subject has more than one {what}"
            ))),
        }
    };
    let names: Vec<&str> = subject
        .iter_common_name()
        .filter_map(|attribute| attribute.as_str().ok())
        .collect();
    let units: Vec<&str> = subject
        .iter_organizational_unit()
        .filter_map(|attribute| attribute.as_str().ok())
        .collect();
    let name = one(names, "common name (CN)")?;
    let role = match one(units, "organisational unit (OU)")?.as_str() {
        CLUSTER_OU => Role::Cluster,
        ADMIN_OU => Role::Admin,
        other => {
            return Err(CertError::NoIdentity(format!(
                "its OU is `{other}`, neither `{CLUSTER_OU}` nor `{ADMIN_OU}`"
            )));
        }
    };
    if name.is_empty() {
        return Err(CertError::NoIdentity("its common name is empty".to_owned()));
    }
    Ok(Identity { role, name })
}

/// The hosts a DER certificate names (its DNS and IP subject alternative
/// names).
pub fn hosts_of(der: &[u8]) -> Vec<String> {
    use x509_parser::extensions::GeneralName;
    let Ok((_, cert)) = x509_parser::parse_x509_certificate(der) else {
        return Vec::new();
    };
    let Ok(Some(names)) = cert.subject_alternative_name() else {
        return Vec::new();
    };
    names
        .value
        .general_names
        .iter()
        .filter_map(|name| match name {
            GeneralName::DNSName(dns) => Some((*dns).to_owned()),
            GeneralName::IPAddress(bytes) => match bytes.len() {
                4 => <[u8; 4]>::try_from(*bytes)
                    .ok()
                    .map(|ip| std::net::IpAddr::from(ip).to_string()),
                16 => <[u8; 16]>::try_from(*bytes)
                    .ok()
                    .map(|ip| std::net::IpAddr::from(ip).to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_writes_a_ca_clusters_and_an_admin_with_their_names() {
        let dir = tempfile::tempdir().expect("temp dir");
        let written = init(dir.path(), &["c1".to_owned(), "c2".to_owned()]).expect("init");
        assert_eq!(written.files.len(), 8);
        let (cert, _) = identity_paths(dir.path(), Role::Cluster, "c2");
        let pem = fs::read(&cert).expect("cluster cert");
        let (_, parsed) = x509_parser::pem::parse_x509_pem(&pem).expect("pem");
        let identity = identity_of(&parsed.contents).expect("identity");
        assert_eq!(
            identity,
            Identity {
                role: Role::Cluster,
                name: "c2".into()
            }
        );
        let (admin, _) = identity_paths(dir.path(), Role::Admin, ADMIN_NAME);
        let pem = fs::read(&admin).expect("admin cert");
        let (_, parsed) = x509_parser::pem::parse_x509_pem(&pem).expect("pem");
        assert_eq!(identity_of(&parsed.contents).expect("id").role, Role::Admin);
        // A cluster's certificate names this machine unless told otherwise.
        assert_eq!(
            hosts_of(
                &fs::read(&cert)
                    .map(|pem| {
                        x509_parser::pem::parse_x509_pem(&pem)
                            .expect("pem")
                            .1
                            .contents
                    })
                    .expect("cert")
            ),
            LOOPBACK
        );
        // The CA is not an identity.
        let pem = fs::read(ca_cert_path(dir.path())).expect("ca");
        let (_, parsed) = x509_parser::pem::parse_x509_pem(&pem).expect("pem");
        assert!(identity_of(&parsed.contents).is_err());
    }

    #[test]
    fn a_cluster_certificate_names_the_hosts_given() {
        let dir = tempfile::tempdir().expect("temp dir");
        let clusters = [ClusterHosts {
            name: "c1".to_owned(),
            hosts: vec!["node1.example.org".to_owned(), "10.0.0.7".to_owned()],
        }];
        init_with_hosts(dir.path(), &clusters).expect("init");
        let (cert, _) = identity_paths(dir.path(), Role::Cluster, "c1");
        let pem = fs::read(&cert).expect("cluster cert");
        let (_, parsed) = x509_parser::pem::parse_x509_pem(&pem).expect("pem");
        assert_eq!(
            hosts_of(&parsed.contents),
            ["node1.example.org", "10.0.0.7"]
        );
    }

    #[test]
    fn bad_or_repeated_names_are_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert!(matches!(
            init(dir.path(), &["a/b".to_owned()]),
            Err(CertError::BadName(_))
        ));
        assert!(matches!(
            init(dir.path(), &["a".to_owned(), "a".to_owned()]),
            Err(CertError::Duplicate(_))
        ));
    }
}
