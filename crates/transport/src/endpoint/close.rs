//! QUIC close codes mcfed uses (application error codes).

/// A clean shutdown.
pub const SHUTDOWN: u32 = 0;
/// The peers speak different protocol versions.
pub const VERSION: u32 = 1;
/// The peer claimed a name its certificate does not carry.
pub const IDENTITY: u32 = 2;
/// The peer is not part of this cluster's federation links.
pub const UNKNOWN_PEER: u32 = 3;
/// A frame over the size limit or one that does not decode.
pub const BAD_FRAME: u32 = 4;
/// A message out of place (a second hello, an admin request from a
/// cluster, ...).
pub const PROTOCOL: u32 = 5;

/// Closes `connection` with `code` and `reason` (sent to the peer).
pub(crate) fn close_connection(connection: &quinn::Connection, code: u32, reason: &str) {
    connection.close(quinn::VarInt::from_u32(code), reason.as_bytes());
}

/// Why a connection closed, in words for the logs and the status.
pub(crate) fn describe_close(error: &quinn::ConnectionError) -> String {
    match error {
        quinn::ConnectionError::ApplicationClosed(close) => format!(
            "closed by the peer (code {}): {}",
            close.error_code,
            String::from_utf8_lossy(&close.reason)
        ),
        other => other.to_string(),
    }
}
