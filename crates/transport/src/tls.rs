//! Mutual TLS 1.3 for the federation, on the ring crypto provider.
//!
//! Both sides present a certificate and both verify the other's:
//!
//! - [`FederationServerVerifier`] (a dialling process checking the process it
//!   reached) accepts a certificate only if the federation CA signed it, it
//!   is valid now for server authentication, it names a cluster, and it
//!   names the host dialled (a DNS or IP subject alternative name);
//! - [`FederationClientVerifier`] (a listening process checking who dialled
//!   it) accepts a certificate only if the federation CA signed it, it is
//!   valid now for client authentication, and it names a cluster or the
//!   administrator.
//!
//! Neither accepts anything else; there is no verifier that accepts any
//! certificate. Which cluster a peer is comes from its certificate
//! ([`crate::certs::identity_of`]), never from what it says: the transport
//! checks it against the peer it meant to reach and against every name the
//! peer puts in its messages.
//!
//! The crypto provider is chosen explicitly: rustls' `ring` provider, passed
//! to every config builder (no process-wide default is installed or relied
//! on).

use std::path::Path;
use std::sync::Arc;

use quinn::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::{ParsedCertificate, WebPkiClientVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, RootCertStore, SignatureScheme};

use crate::certs::{self, CertError, Identity, Role};
use mcfed_protocol::bounds::PEM_FILE;

/// The ALPN protocol name of mcfed's QUIC connections.
pub const ALPN: &[u8] = b"mcfed/2";

/// The TLS server name to dial `address` (`host:port`) with: its host. A
/// cluster's certificate must name that host (a DNS or IP subject
/// alternative name); which cluster it is comes from its subject.
pub fn server_name(address: &str) -> &str {
    mcfed_protocol::address::split_address(address).map_or(address, |split| split.host)
}

/// Why TLS could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A certificate file is missing, unreadable or not what it should be.
    #[error(transparent)]
    Cert(#[from] CertError),
    /// rustls refused the configuration.
    #[error("TLS configuration refused: {0}")]
    Rustls(#[from] rustls::Error),
    /// The client verifier could not be built.
    #[error("cannot build the client certificate verifier: {0}")]
    Verifier(#[from] rustls::server::VerifierBuilderError),
    /// quinn refused the TLS configuration.
    #[error("QUIC refused the TLS configuration: {0}")]
    Quic(String),
    /// The certificate names someone else than expected.
    #[error("{path}: the certificate names {found}, not {expected}")]
    WrongIdentity {
        /// The certificate file.
        path: String,
        /// Who it names.
        found: Identity,
        /// Who was expected.
        expected: String,
    },
}

/// The provider every mcfed TLS config uses.
pub fn crypto_provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn pem_error(path: &Path, what: impl std::fmt::Display) -> CertError {
    CertError::Pem {
        path: path.to_owned(),
        what: what.to_string(),
    }
}

/// Reads a PEM file: a regular file, bounded by the bytes read
/// ([`mcfed_protocol::bounds::PEM_FILE`]).
fn read_pem(path: &Path) -> Result<Vec<u8>, CertError> {
    use mcfed_protocol::ReadError;
    PEM_FILE.read(path).map_err(|error| match error {
        ReadError::Io { source, .. } => CertError::Io {
            path: path.to_owned(),
            source,
        },
        refused => pem_error(path, refused),
    })
}

/// Reads the certificates of a PEM file.
fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, CertError> {
    let pem = read_pem(path)?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<_, _>>()
        .map_err(|error| pem_error(path, error))?;
    if certs.is_empty() {
        return Err(pem_error(path, "holds no certificate"));
    }
    Ok(certs)
}

/// A process's TLS material: the federation CA, its certificate chain and
/// key, and who the certificate says it is.
#[derive(Debug)]
pub struct FederationTls {
    identity: Identity,
    roots: Arc<RootCertStore>,
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    provider: Arc<CryptoProvider>,
}

impl Clone for FederationTls {
    fn clone(&self) -> Self {
        FederationTls {
            identity: self.identity.clone(),
            roots: self.roots.clone(),
            chain: self.chain.clone(),
            key: self.key.clone_key(),
            provider: self.provider.clone(),
        }
    }
}

impl FederationTls {
    /// Loads the federation CA (`ca.pem`) and the certificate and key of
    /// `role` `name` from a directory made by `mcfed certs init`, checking
    /// that the certificate names them.
    pub fn load(dir: &Path, role: Role, name: &str) -> Result<Self, TlsError> {
        let (cert, key) = certs::identity_paths(dir, role, name);
        Self::load_files(&certs::ca_cert_path(dir), &cert, &key, Some((role, name)))
    }

    /// Loads the CA, a certificate and its key from explicit files. With
    /// `expected`, the certificate must name that role and name.
    pub fn load_files(
        ca: &Path,
        cert: &Path,
        key: &Path,
        expected: Option<(Role, &str)>,
    ) -> Result<Self, TlsError> {
        let mut roots = RootCertStore::empty();
        for ca_cert in read_certs(ca)? {
            roots
                .add(ca_cert)
                .map_err(|error| pem_error(ca, format!("not a usable CA certificate: {error}")))?;
        }
        let chain = read_certs(cert)?;
        let key_der = PrivateKeyDer::from_pem_slice(&read_pem(key)?)
            .map_err(|error| pem_error(key, error))?;
        let identity = certs::identity_of(&chain[0])?;
        if let Some((role, name)) = expected {
            if identity.role != role || identity.name != name {
                return Err(TlsError::WrongIdentity {
                    path: cert.display().to_string(),
                    found: identity,
                    expected: format!("{role} `{name}`"),
                });
            }
        }
        Ok(FederationTls {
            identity,
            roots: Arc::new(roots),
            chain,
            key: key_der,
            provider: crypto_provider(),
        })
    }

    /// Who this process's certificate says it is.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The QUIC server configuration: TLS 1.3, client certificates required
    /// and checked by [`FederationClientVerifier`].
    pub fn server_config(&self) -> Result<quinn::ServerConfig, TlsError> {
        let verifier = Arc::new(FederationClientVerifier::new(
            self.roots.clone(),
            self.provider.clone(),
        )?);
        let mut config = rustls::ServerConfig::builder_with_provider(self.provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13])?
            .with_client_cert_verifier(verifier)
            .with_single_cert(self.chain.clone(), self.key.clone_key())?;
        // Cluster links, admin commands and oracle queries
        // ([`crate::truth`]) share the endpoint; the protocol tells them
        // apart.
        config.alpn_protocols = vec![ALPN.to_vec(), crate::truth::TRUTH_ALPN.to_vec()];
        let quic = QuicServerConfig::try_from(config)
            .map_err(|error| TlsError::Quic(error.to_string()))?;
        Ok(quinn::ServerConfig::with_crypto(Arc::new(quic)))
    }

    /// The QUIC client configuration: TLS 1.3, this process's certificate
    /// presented, the server's checked by [`FederationServerVerifier`].
    pub fn client_config(&self) -> Result<quinn::ClientConfig, TlsError> {
        self.client_config_for(ALPN)
    }

    /// [`FederationTls::client_config`] speaking application protocol
    /// `alpn` (oracle queries use [`crate::truth::TRUTH_ALPN`]).
    pub fn client_config_for(&self, alpn: &[u8]) -> Result<quinn::ClientConfig, TlsError> {
        let verifier = Arc::new(FederationServerVerifier::new(
            self.roots.clone(),
            self.provider.clone(),
        ));
        let mut config = rustls::ClientConfig::builder_with_provider(self.provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13])?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_client_auth_cert(self.chain.clone(), self.key.clone_key())?;
        config.alpn_protocols = vec![alpn.to_vec()];
        let quic = QuicClientConfig::try_from(config)
            .map_err(|error| TlsError::Quic(error.to_string()))?;
        Ok(quinn::ClientConfig::new(Arc::new(quic)))
    }
}

fn identity_error(error: CertError) -> rustls::Error {
    rustls::Error::InvalidCertificate(rustls::CertificateError::Other(rustls::OtherError(
        Arc::new(Explained(error.to_string())),
    )))
}

/// A refusal whose `Debug` is its message: rustls shows the errors of a
/// verifier with `Debug`, and a refused peer should read why.
struct Explained(String);

impl std::fmt::Debug for Explained {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Display for Explained {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Explained {}

/// Checks a listening process's certificate: signed by the federation CA,
/// valid now for server authentication, naming a cluster.
#[derive(Debug)]
pub struct FederationServerVerifier {
    roots: Arc<RootCertStore>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl FederationServerVerifier {
    /// A verifier trusting only `roots`.
    pub fn new(roots: Arc<RootCertStore>, provider: Arc<CryptoProvider>) -> Self {
        FederationServerVerifier {
            roots,
            algorithms: provider.signature_verification_algorithms,
        }
    }
}

impl ServerCertVerifier for FederationServerVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let parsed = ParsedCertificate::try_from(end_entity)?;
        rustls::client::verify_server_cert_signed_by_trust_anchor(
            &parsed,
            &self.roots,
            intermediates,
            now,
            self.algorithms.all,
        )?;
        let identity = certs::identity_of(end_entity).map_err(identity_error)?;
        if identity.role != Role::Cluster {
            return Err(identity_error(CertError::NoIdentity(format!(
                "a listening process must hold a cluster certificate, not {identity}"
            ))));
        }
        if rustls::client::verify_server_name(&parsed, server_name).is_err() {
            return Err(identity_error(CertError::WrongHost {
                identity,
                host: server_name.to_str().into_owned(),
                hosts: certs::hosts_of(end_entity),
            }));
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// Checks a dialling process's certificate: rustls' WebPKI client verifier
/// over the federation CA alone (so signed by it and valid now for client
/// authentication; a certificate is required), and naming a cluster or the
/// administrator.
#[derive(Debug)]
pub struct FederationClientVerifier {
    inner: Arc<dyn ClientCertVerifier>,
}

impl FederationClientVerifier {
    /// A verifier trusting only `roots`.
    pub fn new(
        roots: Arc<RootCertStore>,
        provider: Arc<CryptoProvider>,
    ) -> Result<Self, rustls::server::VerifierBuilderError> {
        let inner = WebPkiClientVerifier::builder_with_provider(roots, provider).build()?;
        Ok(FederationClientVerifier { inner })
    }
}

impl ClientCertVerifier for FederationClientVerifier {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn client_auth_mandatory(&self) -> bool {
        true
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        let verified = self
            .inner
            .verify_client_cert(end_entity, intermediates, now)?;
        certs::identity_of(end_entity).map_err(identity_error)?;
        Ok(verified)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// The identity in the certificate a connected peer presented.
pub fn peer_identity(connection: &quinn::Connection) -> Result<Identity, CertError> {
    let certs = connection
        .peer_identity()
        .and_then(|any| any.downcast::<Vec<CertificateDer<'static>>>().ok())
        .ok_or_else(|| CertError::NoIdentity("the peer presented no certificate".to_owned()))?;
    let first = certs
        .first()
        .ok_or_else(|| CertError::NoIdentity("the peer presented no certificate".to_owned()))?;
    certs::identity_of(first)
}
