//! Requests and answers on the admin channel: postcard, bounded by the
//! transport's frame size.

use serde::{Deserialize, Serialize};

/// Why an admin message could not be encoded or decoded.
#[derive(Debug, thiserror::Error)]
#[error("admin message does not {what}: {source}")]
pub struct CodecError {
    what: &'static str,
    #[source]
    source: postcard::Error,
}

/// Encodes a request or response.
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    postcard::to_allocvec(value).map_err(|source| CodecError {
        what: "encode",
        source,
    })
}

/// Decodes a request or response.
pub fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, CodecError> {
    postcard::from_bytes(bytes).map_err(|source| CodecError {
        what: "decode",
        source,
    })
}
