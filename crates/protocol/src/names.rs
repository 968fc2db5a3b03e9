//! Names of clusters and queues, and `queue@cluster` references.
//!
//! Names are reference-counted strings: they are cloned into every counter
//! update and job message, so a clone must be cheap.

use std::borrow::Borrow;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Why a name or a `queue@cluster` reference was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The name is empty.
    #[error("a name cannot be empty")]
    Empty,
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

fn check_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if let Some(character) = name
        .chars()
        .find(|c| c.is_whitespace() || matches!(c, '@' | '[' | ']' | '"' | '\''))
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
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(Arc<str>);

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
    }
}
