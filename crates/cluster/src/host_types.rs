//! Host types and models in a job's resource requirement (issue 27 item
//! 9): `-R "select[type==LINUX86]"` asks for hosts of that type,
//! `select[model==XeonE5]` for hosts of that model. A requirement is kept
//! among the job's boolean resources as the word `type==X` (or
//! `model==X`), which a host of that type offers as it offers its own
//! boolean resources — so placement, a queue's resources in its counters
//! and hello, chunk comparisons and the submission cluster's eligibility
//! all read it by the one rule they read resources by. Seed 004: "A remote
//! queue hostgroup satisfies host type requirements when any one of the
//! hosts available is the host type requested by a job. As for boolean
//! resources, the submission cluster assumes all slots within a hostgroup
//! are of the same host type."

use crate::config::HostConfig;

/// The requirement word for hosts of type `name`.
pub fn type_requirement(name: &str) -> String {
    format!("type=={name}")
}

/// The requirement word for hosts of model `name`.
pub fn model_requirement(name: &str) -> String {
    format!("model=={name}")
}

/// One term of a selection as a requirement word: a boolean resource as
/// written; `type == X`, `type==X` or `type=="X"` (and the same for
/// `model`) as `type==X`; `None` for `type==any` and `type==local`, which
/// ask for nothing here (mcfed has no submission host whose type `local`
/// could mean). Any other comparison is an error saying what is read.
pub fn requirement_word(term: &str) -> Result<Option<String>, String> {
    let term = term.trim();
    let Some((key, value)) = term.split_once("==") else {
        return Ok(Some(term.to_owned()));
    };
    let value = value.trim().trim_matches('"').trim();
    if value.is_empty() || !value.chars().all(is_name_char) {
        return Err(format!("`{term}`: a host {} is a name", key.trim()));
    }
    match key.trim() {
        "type" if matches!(value, "any" | "local") => Ok(None),
        "type" => Ok(Some(type_requirement(value))),
        "model" => Ok(Some(model_requirement(value))),
        other => Err(format!(
            "`{term}`: mcfed compares type and model (type==X, model==X), not `{other}`"
        )),
    }
}

/// Whether `c` may be part of a host type or model name.
pub fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

impl HostConfig {
    /// Whether the host meets requirement word `word`: has the boolean
    /// resource, or is of the type or model it names. A reservation word
    /// (`rsv==NAME`, [`crate::advance`]) is met by the reservation's own
    /// rules, not by hosts: every host passes it here.
    pub fn offers(&self, word: &str) -> bool {
        match word.split_once("==") {
            Some(("type", name)) => self.host_type.as_deref() == Some(name),
            Some(("model", name)) => self.model.as_deref() == Some(name),
            Some(("rsv", _)) => true,
            _ => self.resources.iter().any(|resource| resource == word),
        }
    }

    /// Every requirement word the host meets: its boolean resources, its
    /// type and its model.
    pub fn offered(&self) -> impl Iterator<Item = String> + '_ {
        self.resources
            .iter()
            .cloned()
            .chain(self.host_type.as_deref().map(type_requirement))
            .chain(self.model.as_deref().map(model_requirement))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_read_as_requirement_words() {
        let word = |term: &str| requirement_word(term).expect("reads");
        assert_eq!(word("bigmem"), Some("bigmem".into()));
        assert_eq!(word("type==LINUX86"), Some("type==LINUX86".into()));
        assert_eq!(word(" type == LINUX86 "), Some("type==LINUX86".into()));
        assert_eq!(word("type==\"LINUX86\""), Some("type==LINUX86".into()));
        assert_eq!(word("model==XeonE5"), Some("model==XeonE5".into()));
        assert_eq!(word("type==any"), None);
        assert_eq!(word("type == local"), None);
        assert!(requirement_word("mem==4096").is_err());
        assert!(requirement_word("type==").is_err());
        assert!(requirement_word("type==a b").is_err());
    }

    #[test]
    fn a_host_offers_its_resources_type_and_model() {
        let mut host = HostConfig::new("h", 4);
        host.resources = vec!["bigmem".into()];
        host.host_type = Some("LINUX86".into());
        assert!(host.offers("bigmem"));
        assert!(host.offers("type==LINUX86"));
        assert!(!host.offers("type==LINUXPPC64"));
        assert!(!host.offers("model==XeonE5"));
        assert!(!host.offers("LINUX86"), "a type is not a resource");
        let offered: Vec<String> = host.offered().collect();
        assert_eq!(offered, ["bigmem", "type==LINUX86"]);
    }
}
