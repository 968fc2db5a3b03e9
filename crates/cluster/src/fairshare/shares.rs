//! Share assignments: a queue's `FAIRSHARE=USER_SHARES[[user, shares] ...]`,
//! parsed and printed back.

use std::fmt;
use std::str::FromStr;

/// The share-assignment name for every user not named.
pub const DEFAULT_SHARE_USER: &str = "default";

/// A queue's `FAIRSHARE=USER_SHARES[[user, shares] ...]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserShares {
    /// Users named, with their shares, in the order written.
    pub users: Vec<(String, u32)>,
    /// Shares of each user not named (`[default, n]`); without it, users
    /// not named cannot use the queue.
    pub default: Option<u32>,
}

impl UserShares {
    /// The shares of `user`, or `None` if the user has none in this queue.
    pub fn shares_of(&self, user: &str) -> Option<u32> {
        self.users
            .iter()
            .find(|(name, _)| name == user)
            .map(|&(_, shares)| shares)
            .or(self.default)
    }
}

/// Why a FAIRSHARE value does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UserSharesParseError {
    /// Not of the form `USER_SHARES[...]`.
    #[error("expected USER_SHARES[[user, shares] ...]")]
    NotUserShares,
    /// An entry is not `[name, number]`.
    #[error("bad share assignment `{0}`: expected [user, shares]")]
    BadEntry(String),
    /// Shares must be a positive whole number.
    #[error("bad number of shares in `{0}`: shares are a positive whole number")]
    BadShares(String),
    /// A user appears twice.
    #[error("user `{0}` has two share assignments")]
    Repeated(String),
    /// A form mcfed does not emulate (groups, `others`).
    #[error("`{0}`: mcfed assigns shares to single users and `default` only")]
    Unsupported(String),
    /// No assignment at all.
    #[error("USER_SHARES needs at least one [user, shares] assignment")]
    Empty,
}

impl FromStr for UserShares {
    type Err = UserSharesParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let inner = text
            .trim()
            .strip_prefix("USER_SHARES")
            .map(str::trim_start)
            .and_then(|rest| rest.strip_prefix('['))
            .and_then(|rest| rest.trim_end().strip_suffix(']'))
            .ok_or(UserSharesParseError::NotUserShares)?;
        let mut shares = UserShares {
            users: Vec::new(),
            default: None,
        };
        let mut rest = inner.trim();
        while !rest.is_empty() {
            let body = rest
                .strip_prefix('[')
                .ok_or_else(|| UserSharesParseError::BadEntry(rest.to_owned()))?;
            let close = body
                .find(']')
                .ok_or_else(|| UserSharesParseError::BadEntry(rest.to_owned()))?;
            let entry = &body[..close];
            rest = body[close + 1..].trim_start();
            let (name, number) = entry
                .split_once(',')
                .ok_or_else(|| UserSharesParseError::BadEntry(format!("[{entry}]")))?;
            let (name, number) = (name.trim(), number.trim());
            if name.is_empty() || name.contains(char::is_whitespace) {
                return Err(UserSharesParseError::BadEntry(format!("[{entry}]")));
            }
            if name == "others" || name.ends_with('@') {
                return Err(UserSharesParseError::Unsupported(name.to_owned()));
            }
            let count: u32 = number
                .parse()
                .ok()
                .filter(|&count| count > 0)
                .ok_or_else(|| UserSharesParseError::BadShares(format!("[{entry}]")))?;
            if name == DEFAULT_SHARE_USER {
                if shares.default.replace(count).is_some() {
                    return Err(UserSharesParseError::Repeated(name.to_owned()));
                }
            } else {
                if shares.users.iter().any(|(other, _)| other == name) {
                    return Err(UserSharesParseError::Repeated(name.to_owned()));
                }
                shares.users.push((name.to_owned(), count));
            }
        }
        if shares.users.is_empty() && shares.default.is_none() {
            return Err(UserSharesParseError::Empty);
        }
        Ok(shares)
    }
}

impl fmt::Display for UserShares {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("USER_SHARES[")?;
        let mut first = true;
        let default = self.default.map(|n| (DEFAULT_SHARE_USER, n));
        for (name, count) in self
            .users
            .iter()
            .map(|(name, count)| (name.as_str(), *count))
            .chain(default)
        {
            if !first {
                f.write_str(" ")?;
            }
            first = false;
            write!(f, "[{name}, {count}]")?;
        }
        f.write_str("]")
    }
}
