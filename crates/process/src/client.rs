//! The administrator's side: reaching a running cluster process and asking
//! it something (the LSF-style commands and the launcher use this).

use std::path::{Path, PathBuf};
use std::time::Duration;

use mcfed_protocol::ClusterName;
use mcfed_transport::certs::ADMIN_NAME;
use mcfed_transport::{AdminClient, AdminError, FederationTls, Role, TlsError};

use mcfed_admin::cmd::history::HistoryReply;
use mcfed_admin::{self as admin, AdminRequest, AdminResponse, CodecError, JobRow, JobsQuery};

/// Why a request to a cluster process failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The administrator's certificate could not be loaded.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The process could not be reached or the call failed.
    #[error(transparent)]
    Admin(#[from] AdminError),
    /// An answer could not be decoded.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// The cluster's address could not be found.
    /// The process refused the request.
    #[error("cluster `{cluster}`: {message}")]
    Refused {
        /// The cluster.
        cluster: String,
        /// Its answer.
        message: String,
    },
    /// The process answered something else than asked.
    #[error("cluster `{0}` gave an unexpected answer")]
    Unexpected(String),
    /// A local runtime could not start.
    #[error("cannot start a runtime: {0}")]
    Runtime(#[from] std::io::Error),
}

/// Every process of a federation (`mcfed launch`) has started: where each
/// listens, and the administrator's TLS material to reach them with.
#[derive(Clone, Debug)]
pub struct Started {
    /// The administrator's certificate and key (those the launcher uses).
    pub tls: std::sync::Arc<FederationTls>,
    /// Each cluster and its address, in scenario order.
    pub clusters: Vec<(String, String)>,
}

/// Which cluster process to ask, and with which certificate.
#[derive(Clone, Debug)]
pub struct Target {
    /// The certificate directory (its `admin.pem` and `ca.pem`).
    pub certs: PathBuf,
    /// The cluster.
    pub cluster: String,
    /// Its address.
    pub address: String,
}

/// Loads the administrator's TLS material from `certs`.
pub fn admin_tls(certs: &Path) -> Result<FederationTls, ClientError> {
    Ok(FederationTls::load(certs, Role::Admin, ADMIN_NAME)?)
}

/// A connection to one cluster process.
#[derive(Debug)]
pub struct Session {
    client: AdminClient,
    cluster: String,
}

impl Session {
    /// Connects to `cluster` at `address`.
    pub async fn connect(
        tls: &FederationTls,
        cluster: &str,
        address: &str,
        timeout: Duration,
    ) -> Result<Session, ClientError> {
        let expected = ClusterName::new(cluster).ok();
        let client = AdminClient::connect(tls, address, expected.as_ref(), timeout).await?;
        Ok(Session {
            client,
            cluster: cluster.to_owned(),
        })
    }

    /// Asks one thing; a refusal is an error.
    pub async fn ask(&self, request: &AdminRequest) -> Result<AdminResponse, ClientError> {
        let bytes = self.client.call(&admin::encode(request)?).await?;
        match admin::decode::<AdminResponse>(&bytes)? {
            AdminResponse::Error(message) => Err(ClientError::Refused {
                cluster: self.cluster.clone(),
                message,
            }),
            response => Ok(response),
        }
    }

    /// The cluster asked.
    pub fn cluster(&self) -> &str {
        &self.cluster
    }

    /// Closes the connection.
    pub async fn close(self) {
        self.client.close().await;
    }
}

/// The most pages one listing asks for (each about
/// [`mcfed_admin::cmd::jobs::PAGE_BYTES`]): far beyond the rows of the most
/// jobs a cluster holds, so only a cluster that keeps answering "more"
/// without moving on is stopped by it.
pub const MAX_JOB_PAGES: usize = 1 << 16;

impl Session {
    /// Every job `query` asks for, page after page
    /// ([`AdminRequest::JobsPage`]): a table of any size, each page well
    /// under the admin channel's bound.
    pub async fn jobs(&self, query: &JobsQuery) -> Result<Vec<JobRow>, ClientError> {
        let mut rows = Vec::new();
        self.pages(
            |after| AdminRequest::JobsPage {
                query: query.clone(),
                after,
            },
            |answer| match answer {
                AdminResponse::JobsPage(page) => {
                    rows.extend(page.rows);
                    Some(page.next)
                }
                _ => None,
            },
        )
        .await?;
        Ok(rows)
    }

    /// The cluster's whole job history, page after page
    /// ([`AdminRequest::HistoryPage`]): of any size, each page well under
    /// the admin channel's bound. Its time is the first page's.
    pub async fn history(&self) -> Result<HistoryReply, ClientError> {
        let mut whole: Option<HistoryReply> = None;
        self.pages(
            |after| AdminRequest::HistoryPage { after },
            |answer| match answer {
                AdminResponse::HistoryPage(page) => {
                    match &mut whole {
                        Some(whole) => whole.jobs.extend(page.reply.jobs),
                        None => whole = Some(page.reply),
                    }
                    Some(page.next)
                }
                _ => None,
            },
        )
        .await?;
        whole.ok_or_else(|| ClientError::Unexpected(self.cluster.clone()))
    }

    /// Asks `request(after)` page after page, from the first (`after`
    /// none) until an answer says no more follow; `take` keeps each
    /// answer's rows and gives where the next page starts (`None`: not a
    /// page). A cluster that answers the same place again, or keeps
    /// answering "more" past [`MAX_JOB_PAGES`], is stopped.
    async fn pages(
        &self,
        request: impl Fn(Option<u64>) -> AdminRequest,
        mut take: impl FnMut(AdminResponse) -> Option<Option<u64>>,
    ) -> Result<(), ClientError> {
        let mut after = None;
        for _ in 0..MAX_JOB_PAGES {
            let answer = self.ask(&request(after)).await?;
            let Some(next) = take(answer) else {
                return Err(ClientError::Unexpected(self.cluster.clone()));
            };
            match next {
                Some(next) if after.is_none_or(|after| next > after) => after = Some(next),
                Some(_) => return Err(ClientError::Unexpected(self.cluster.clone())),
                None => return Ok(()),
            }
        }
        Err(ClientError::Unexpected(self.cluster.clone()))
    }
}

/// Connects to `target`, lists the jobs `query` asks for (page after page:
/// [`Session::jobs`]) and closes.
pub fn jobs_once(target: &Target, query: &JobsQuery) -> Result<Vec<JobRow>, ClientError> {
    with_session(target, async |session| session.jobs(query).await)
}

/// Connects to `target`, reads its whole job history (page after page:
/// [`Session::history`]) and closes.
pub fn history_once(target: &Target) -> Result<HistoryReply, ClientError> {
    with_session(target, async |session| session.history().await)
}

/// Connects to `target`, runs `work` with the session and closes.
fn with_session<T>(
    target: &Target,
    work: impl AsyncFnOnce(&Session) -> Result<T, ClientError>,
) -> Result<T, ClientError> {
    let tls = admin_tls(&target.certs)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let session = Session::connect(
            &tls,
            &target.cluster,
            &target.address,
            Duration::from_secs(5),
        )
        .await?;
        let answer = work(&session).await;
        session.close().await;
        answer
    })
}

/// Connects to `target`, asks `request` and closes: for one-shot commands.
pub fn ask_once(target: &Target, request: &AdminRequest) -> Result<AdminResponse, ClientError> {
    let tls = admin_tls(&target.certs)?;
    let address = &target.address;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let session =
            Session::connect(&tls, &target.cluster, address, Duration::from_secs(5)).await?;
        let answer = session.ask(request).await;
        session.close().await;
        answer
    })
}
