//! Share assignments: a queue's `FAIRSHARE=USER_SHARES[[user, shares]
//! ...]` and a user group's `USER_SHARES` in lsb.users (its share tree),
//! parsed and printed back.
//!
//! An assignment names a user, a user group collectively (`group`: one
//! share account for its members), the members of a group individually
//! (`group@`: each member gets the shares), every user not otherwise
//! named individually (`default`) or collectively (`others`). Whether a
//! name is a user or a group is known only with lsb.users' groups
//! (`tree`).

use std::fmt;
use std::str::FromStr;

/// The share-assignment name for every user not named, individually.
pub const DEFAULT_SHARE_USER: &str = "default";
/// The share-assignment name for every user not named, collectively.
pub const OTHERS_SHARE_USER: &str = "others";

/// Whom one share assignment is for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ShareTarget {
    /// A user, or a user group collectively (told apart by lsb.users).
    Name(String),
    /// Each member of a user group, individually (`group@`).
    Members(String),
    /// Each user not otherwise named, individually (`default`).
    Default,
    /// The users not otherwise named, collectively (`others`).
    Others,
}

/// One `[name, shares]` assignment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareEntry {
    /// Whom it is for.
    pub target: ShareTarget,
    /// Its shares (at least 1).
    pub shares: u32,
}

/// A list of share assignments: a queue's `USER_SHARES[...]` or a user
/// group's `USER_SHARES`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserShares {
    /// The assignments, in the order written.
    pub entries: Vec<ShareEntry>,
}

impl UserShares {
    /// The shares of the assignment naming `name` (a user or a group, as
    /// written, not through `default` or a group).
    pub fn named(&self, name: &str) -> Option<u32> {
        self.entries
            .iter()
            .find(|entry| matches!(&entry.target, ShareTarget::Name(named) if named == name))
            .map(|entry| entry.shares)
    }

    /// The assignment for `target`, if any.
    pub fn find(&self, target: &ShareTarget) -> Option<(usize, &ShareEntry)> {
        self.entries
            .iter()
            .enumerate()
            .find(|(_, entry)| &entry.target == target)
    }

    /// Parses the list of `[name, shares]` assignments, optionally in
    /// parentheses as lsb.users writes it (`([user1, 4] [others, 10])`).
    /// An empty list is allowed here (a group's `()`).
    pub fn parse_list(text: &str) -> Result<UserShares, UserSharesParseError> {
        let text = text.trim();
        let inner = text
            .strip_prefix('(')
            .and_then(|rest| rest.strip_suffix(')'))
            .unwrap_or(text);
        let mut shares = UserShares {
            entries: Vec::new(),
        };
        let mut rest = inner.trim();
        while !rest.is_empty() {
            let body = rest
                .strip_prefix('[')
                .ok_or_else(|| UserSharesParseError::BadEntry(rest.to_owned()))?;
            let close = body
                .find(']')
                .ok_or_else(|| UserSharesParseError::BadEntry(rest.to_owned()))?;
            let entry = parse_entry(&body[..close])?;
            rest = body[close + 1..].trim_start();
            if shares.find(&entry.target).is_some() {
                return Err(UserSharesParseError::Repeated(target_text(&entry.target)));
            }
            shares.entries.push(entry);
        }
        Ok(shares)
    }
}

fn parse_entry(entry: &str) -> Result<ShareEntry, UserSharesParseError> {
    let (name, number) = entry
        .split_once(',')
        .ok_or_else(|| UserSharesParseError::BadEntry(format!("[{entry}]")))?;
    let (name, number) = (name.trim(), number.trim());
    let plain = name.strip_suffix('@').unwrap_or(name);
    if plain.is_empty() || name.contains(char::is_whitespace) || plain.contains('@') {
        return Err(UserSharesParseError::BadEntry(format!("[{entry}]")));
    }
    let shares: u32 = number
        .parse()
        .ok()
        .filter(|&count| count > 0)
        .ok_or_else(|| UserSharesParseError::BadShares(format!("[{entry}]")))?;
    let target = match name {
        DEFAULT_SHARE_USER => ShareTarget::Default,
        OTHERS_SHARE_USER => ShareTarget::Others,
        _ if name.ends_with('@') => ShareTarget::Members(plain.to_owned()),
        _ => ShareTarget::Name(name.to_owned()),
    };
    Ok(ShareEntry { target, shares })
}

fn target_text(target: &ShareTarget) -> String {
    match target {
        ShareTarget::Name(name) => name.clone(),
        ShareTarget::Members(group) => format!("{group}@"),
        ShareTarget::Default => DEFAULT_SHARE_USER.to_owned(),
        ShareTarget::Others => OTHERS_SHARE_USER.to_owned(),
    }
}

/// Why a FAIRSHARE or USER_SHARES value does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UserSharesParseError {
    /// Not of the form `USER_SHARES[...]`.
    #[error("expected USER_SHARES[[user, shares] ...]")]
    NotUserShares,
    /// An entry is not `[name, number]`.
    #[error(
        "bad share assignment `{0}`: expected [user, shares], [group, shares], [group@, shares], [default, shares] or [others, shares]"
    )]
    BadEntry(String),
    /// Shares must be a positive whole number.
    #[error("bad number of shares in `{0}`: shares are a positive whole number")]
    BadShares(String),
    /// A user or group appears twice.
    #[error("`{0}` has two share assignments")]
    Repeated(String),
    /// No assignment at all.
    #[error("USER_SHARES needs at least one [user, shares] assignment")]
    Empty,
}

impl FromStr for UserShares {
    type Err = UserSharesParseError;

    /// A queue's `USER_SHARES[[user, shares] ...]`: at least one
    /// assignment.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let inner = text
            .trim()
            .strip_prefix("USER_SHARES")
            .map(str::trim_start)
            .and_then(|rest| rest.strip_prefix('['))
            .and_then(|rest| rest.trim_end().strip_suffix(']'))
            .ok_or(UserSharesParseError::NotUserShares)?;
        let shares = UserShares::parse_list(inner)?;
        if shares.entries.is_empty() {
            return Err(UserSharesParseError::Empty);
        }
        Ok(shares)
    }
}

impl fmt::Display for UserShares {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("USER_SHARES[")?;
        for (index, entry) in self.entries.iter().enumerate() {
            if index > 0 {
                f.write_str(" ")?;
            }
            write!(f, "[{}, {}]", target_text(&entry.target), entry.shares)?;
        }
        f.write_str("]")
    }
}
