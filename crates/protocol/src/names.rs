//! Names of clusters and queues, and `queue@cluster` references.
//!
//! Names are reference-counted strings: they are cloned into every counter
//! update and job message, so a clone must be cheap.
//!
//! A name is checked wherever it comes from: [`ClusterName::new`] and
//! [`QueueName::new`] (and their [`FromStr`] impls, which scenario files go
//! through) apply the same rules as deserialization, so a wire frame or a
//! JSON record cannot carry a name that a scenario file would refuse. Names
//! serialize as plain strings.

use std::borrow::Borrow;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize, Serializer};

/// The longest name accepted, in bytes (UTF-8).
///
/// LSF's own limits are shorter (cluster names of 39 characters, queue names
/// of 59); this bound is mcfed's, generous enough for any configuration, and
/// keeps a name read from a peer from being arbitrarily long.
pub const MAX_NAME_LEN: usize = 255;

/// Why a name or a `queue@cluster` reference was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The name is empty.
    #[error("a name cannot be empty")]
    Empty,
    /// The name is longer than [`MAX_NAME_LEN`] bytes.
    #[error("a name of {len} bytes is longer than the limit of {max} bytes")]
    TooLong {
        /// The name's length in bytes.
        len: usize,
        /// The limit, [`MAX_NAME_LEN`].
        max: usize,
    },
    /// The name contains a character LSF does not allow in names.
    #[error("`{name}` contains `{character}`, which is not allowed in a name")]
    BadCharacter {
        /// The name as given.
        name: String,
        /// The offending character.
        character: char,
    },
    /// A remote queue reference is not of the form `queue@cluster`.
    #[error("`{0}` is not of the form queue@cluster")]
    NotQueueAtCluster(String),
}

/// The one check every name goes through, from a configuration or from the
/// wire: not empty, at most [`MAX_NAME_LEN`] bytes, and no whitespace, control
/// characters, `@`, brackets or quotes.
fn check_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if name.len() > MAX_NAME_LEN {
        // The length is checked before the characters, so an error never
        // copies an overlong name.
        return Err(NameError::TooLong {
            len: name.len(),
            max: MAX_NAME_LEN,
        });
    }
    if let Some(character) = name
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || matches!(c, '@' | '[' | ']' | '"' | '\''))
    {
        return Err(NameError::BadCharacter {
            name: name.to_owned(),
            character,
        });
    }
    Ok(())
}

macro_rules! shared_name {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        ///
        /// Serializes as a plain string; deserializes through the same check
        /// as [`Self::new`], so an invalid name is a deserialization error.
        #[derive(Clone, Eq, PartialOrd, Ord, Deserialize)]
        #[serde(try_from = "String")]
        pub struct $name(Arc<str>);

        impl PartialEq for $name {
            /// Equal names: clones of one name are equal without reading
            /// their bytes (`Arc<str>`'s own comparison always reads them).
            fn eq(&self, other: &Self) -> bool {
                Arc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
            }
        }

        impl std::hash::Hash for $name {
            /// The name's bytes, as the derived hash hashed them.
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                self.0.hash(state);
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                // As `#[serde(transparent)]` over `Arc<str>` did: the wire
                // format is unchanged.
                serializer.serialize_str(&self.0)
            }
        }

        impl TryFrom<String> for $name {
            type Error = NameError;
            fn try_from(name: String) -> Result<Self, NameError> {
                check_name(&name)?;
                Ok(Self(Arc::from(name)))
            }
        }

        impl $name {
            /// Checks `name` and wraps it.
            pub fn new(name: &str) -> Result<Self, NameError> {
                check_name(name)?;
                Ok(Self(Arc::from(name)))
            }

            /// The name as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&*self.0, f)
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = NameError;
            fn from_str(s: &str) -> Result<Self, NameError> {
                Self::new(s)
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                &*self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                &*self.0 == *other
            }
        }
    };
}

shared_name!(
    /// The name of a cluster in the federation (`Cluster1`).
    ClusterName
);
shared_name!(
    /// The name of a queue within one cluster (`HighPriority`).
    QueueName
);

/// A queue in a named cluster, written `queue@cluster` as in LSF's
/// SNDJOBS_TO parameter.
///
/// Serializes as a struct of its two names; each is checked when it is
/// deserialized, and a valid name cannot contain `@`, so a deserialized
/// reference is one [`FromStr`] would accept.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct QueueRef {
    /// The queue's name in its cluster.
    pub queue: QueueName,
    /// The cluster the queue belongs to.
    pub cluster: ClusterName,
}

impl QueueRef {
    /// A reference to `queue` in `cluster`.
    pub fn new(queue: QueueName, cluster: ClusterName) -> Self {
        QueueRef { queue, cluster }
    }
}

impl FromStr for QueueRef {
    type Err = NameError;
    fn from_str(s: &str) -> Result<Self, NameError> {
        let (queue, cluster) = s
            .split_once('@')
            .ok_or_else(|| NameError::NotQueueAtCluster(s.to_owned()))?;
        if queue.is_empty() || cluster.is_empty() || cluster.contains('@') {
            return Err(NameError::NotQueueAtCluster(s.to_owned()));
        }
        Ok(QueueRef {
            queue: QueueName::new(queue)?,
            cluster: ClusterName::new(cluster)?,
        })
    }
}

impl fmt::Display for QueueRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.queue, self.cluster)
    }
}

impl fmt::Debug for QueueRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_queue_at_cluster() {
        let parsed: QueueRef = "HighPriority@Cluster2".parse().expect("valid reference");
        assert_eq!(parsed.queue, "HighPriority");
        assert_eq!(parsed.cluster, "Cluster2");
        assert_eq!(parsed.to_string(), "HighPriority@Cluster2");
    }

    #[test]
    fn refuses_malformed_references() {
        for bad in [
            "HighPriority",
            "@Cluster2",
            "HighPriority@",
            "a@b@c",
            "q @c",
        ] {
            assert!(bad.parse::<QueueRef>().is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn refuses_bad_names() {
        assert_eq!(ClusterName::new(""), Err(NameError::Empty));
        assert!(matches!(
            QueueName::new("a b"),
            Err(NameError::BadCharacter { character: ' ', .. })
        ));
        assert!(matches!(
            QueueName::new("a\u{1b}b"),
            Err(NameError::BadCharacter {
                character: '\u{1b}',
                ..
            })
        ));
        assert_eq!(
            ClusterName::new(&"c".repeat(MAX_NAME_LEN + 1)),
            Err(NameError::TooLong {
                len: MAX_NAME_LEN + 1,
                max: MAX_NAME_LEN
            })
        );
        assert!(ClusterName::new(&"c".repeat(MAX_NAME_LEN)).is_ok());
    }

    /// Names that `new` refuses, one per rule.
    fn bad_names() -> Vec<String> {
        vec![
            String::new(),
            "Cluster 2".into(),
            "tab\tname".into(),
            "nul\0name".into(),
            "q@c".into(),
            "[group]".into(),
            "\"quoted\"".into(),
            "x".repeat(MAX_NAME_LEN + 1),
        ]
    }

    #[test]
    fn json_refuses_what_new_refuses() {
        for bad in bad_names() {
            let json = serde_json::to_string(&bad).expect("a string encodes");
            let cluster = serde_json::from_str::<ClusterName>(&json);
            let queue = serde_json::from_str::<QueueName>(&json);
            assert!(cluster.is_err(), "cluster name {bad:?} should be refused");
            assert!(queue.is_err(), "queue name {bad:?} should be refused");
            let expected = ClusterName::new(&bad).expect_err("refused").to_string();
            assert!(
                cluster
                    .expect_err("refused")
                    .to_string()
                    .contains(&expected),
                "the error says why ({expected})"
            );
        }
    }

    #[test]
    fn json_refuses_bad_names_inside_a_queue_ref() {
        for json in [
            r#"{"queue":"High Priority","cluster":"Cluster2"}"#,
            r#"{"queue":"HighPriority","cluster":""}"#,
            r#"{"queue":"HighPriority","cluster":"a@b"}"#,
        ] {
            assert!(
                serde_json::from_str::<QueueRef>(json).is_err(),
                "{json} should be refused"
            );
        }
    }

    #[test]
    fn valid_names_round_trip_as_plain_strings() {
        let cluster = ClusterName::new("Cluster2").expect("valid");
        let json = serde_json::to_string(&cluster).expect("encodes");
        assert_eq!(json, r#""Cluster2""#);
        assert_eq!(
            serde_json::from_str::<ClusterName>(&json).expect("decodes"),
            cluster
        );

        let queue = QueueName::new("HighPriority").expect("valid");
        let bytes = postcard::to_allocvec(&queue).expect("encodes");
        assert_eq!(
            bytes,
            postcard::to_allocvec("HighPriority").expect("encodes"),
            "the wire format is a plain string"
        );
        assert_eq!(
            postcard::from_bytes::<QueueName>(&bytes).expect("decodes"),
            queue
        );

        let longest = ClusterName::new(&"c".repeat(MAX_NAME_LEN)).expect("valid");
        let bytes = postcard::to_allocvec(&longest).expect("encodes");
        assert_eq!(
            postcard::from_bytes::<ClusterName>(&bytes).expect("decodes"),
            longest
        );

        let reference: QueueRef = "HighPriority@Cluster2".parse().expect("valid");
        let json = serde_json::to_string(&reference).expect("encodes");
        assert_eq!(json, r#"{"queue":"HighPriority","cluster":"Cluster2"}"#);
        assert_eq!(
            serde_json::from_str::<QueueRef>(&json).expect("decodes"),
            reference
        );
        let bytes = postcard::to_allocvec(&reference).expect("encodes");
        assert_eq!(
            postcard::from_bytes::<QueueRef>(&bytes).expect("decodes"),
            reference
        );
    }

    #[test]
    fn postcard_refuses_what_new_refuses() {
        for bad in bad_names() {
            let bytes = postcard::to_allocvec(bad.as_str()).expect("a string encodes");
            assert!(
                postcard::from_bytes::<ClusterName>(&bytes).is_err(),
                "{bad:?} should be refused"
            );
            assert!(
                postcard::from_bytes::<QueueName>(&bytes).is_err(),
                "{bad:?} should be refused"
            );
        }
    }
}
