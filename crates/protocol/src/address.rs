//! Addresses of cluster processes, `host:port` (`[v6]:port` for IPv6),
//! split into the host a certificate must name and the port.

use std::fmt;

/// A `host:port` address split in two.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostPort<'a> {
    /// The host name or IP address (IPv6 without its brackets).
    pub host: &'a str,
    /// The port.
    pub port: u16,
}

impl fmt::Display for HostPort<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// Splits `host:port` (`[v6]:port` for IPv6); `None` when it is not one.
pub fn split_address(address: &str) -> Option<HostPort<'_>> {
    let (host, port) = address.rsplit_once(':')?;
    let host = match host.strip_prefix('[') {
        Some(inner) => inner.strip_suffix(']')?,
        None if host.contains(':') => return None,
        None => host,
    };
    if host.is_empty() || host.chars().any(char::is_whitespace) {
        return None;
    }
    Some(HostPort {
        host,
        port: port.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_split_into_host_and_port() {
        let split = |text| split_address(text).map(|hp| (hp.host.to_owned(), hp.port));
        assert_eq!(split("127.0.0.2:7101"), Some(("127.0.0.2".into(), 7101)));
        assert_eq!(split("[::1]:80"), Some(("::1".into(), 80)));
        assert_eq!(split("node:1"), Some(("node".into(), 1)));
        for bad in [
            "::1:80", ":80", "node", "node:x", "[::1:80", "a b:1", "a:99999",
        ] {
            assert_eq!(split(bad), None, "{bad}");
        }
        let v6 = HostPort {
            host: "::1",
            port: 80,
        };
        assert_eq!(v6.to_string(), "[::1]:80");
    }
}
