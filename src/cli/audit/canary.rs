//! Canary secrets: fake credentials under the names servers and their
//! libraries look for, in the environment and in the temporary HOME. Each
//! holds a marker of its own, drawn afresh for every audit, so any of them
//! seen outside the process is a leak, and names which one left.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::path::PathBuf;

/// One planted secret.
#[derive(Clone, Debug)]
pub struct Canary {
    /// The variable's name, or the file's path relative to HOME.
    pub name: String,
    /// Whether it is a file in HOME.
    pub file: bool,
    /// The variable's value, or the file's content.
    pub value: String,
    /// What only this canary holds, to look for (hex, either case).
    pub marker: String,
}

/// Variables with a credential's usual shape: the name, then the text
/// before and after the marker.
const VARIABLES: &[(&str, &str, &str)] = &[
    ("AWS_ACCESS_KEY_ID", "AKIA", ""),
    ("AWS_SECRET_ACCESS_KEY", "pcAwsSecret/", "Xk9"),
    ("GITHUB_TOKEN", "ghp_", "00"),
    ("GH_TOKEN", "gho_", "00"),
    ("OPENAI_API_KEY", "sk-proj-", "T3BlbkFJ"),
    ("ANTHROPIC_API_KEY", "sk-ant-api03-", "AA"),
    ("SLACK_BOT_TOKEN", "xoxb-1-", ""),
    ("NPM_TOKEN", "npm_", ""),
    ("HF_TOKEN", "hf_", ""),
    ("GOOGLE_API_KEY", "AIza", ""),
    ("STRIPE_SECRET_KEY", "sk_test_", ""),
    ("DATABASE_URL", "postgres://app:", "@127.0.0.1:9/app"),
];

/// Files with a credential's usual place and shape: the path in HOME, and
/// the text around the marker.
const FILES: &[(&str, &str, &str)] = &[
    (".aws/credentials", "[default]\naws_access_key_id = AKIAPCCANARY\naws_secret_access_key = ", "\n"),
    (
        ".ssh/id_ed25519",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA",
        "\n-----END OPENSSH PRIVATE KEY-----\n",
    ),
    (".netrc", "machine api.example.invalid login portcullis password ", "\n"),
    (".config/gh/hosts.yml", "github.com:\n    oauth_token: gho_", "\n    user: portcullis\n"),
    (".docker/config.json", "{\"auths\":{\"registry.example.invalid\":{\"auth\":\"", "\"}}}\n"),
];

/// Every canary of one audit.
#[derive(Clone, Debug)]
pub struct Canaries {
    pub all: Vec<Canary>,
}

impl Canaries {
    /// Fresh canaries, leaving out the variables in `taken` (the user's
    /// own, which the server needs real).
    pub fn new(taken: &[String]) -> Canaries {
        let state = RandomState::new();
        let mut n = 0u32;
        let mut marker = || {
            n += 1;
            let mut h = state.build_hasher();
            h.write_u32(n);
            h.write_u32(std::process::id());
            format!("{:016x}", h.finish())
        };
        let mut all = Vec::new();
        for (name, before, after) in VARIABLES.iter().filter(|(name, ..)| !taken.iter().any(|t| t == name)) {
            let m = marker();
            let shown = if *before == "AKIA" { m.to_uppercase() } else { m.clone() };
            all.push(Canary {
                name: name.to_string(),
                file: false,
                value: format!("{before}{shown}{after}"),
                marker: m,
            });
        }
        for (path, before, after) in FILES {
            let m = marker();
            all.push(Canary { name: path.to_string(), file: true, value: format!("{before}{m}{after}"), marker: m });
        }
        Canaries { all }
    }

    /// The variables to set.
    pub fn env(&self) -> Vec<(String, Option<String>)> {
        self.all.iter().filter(|c| !c.file).map(|c| (c.name.clone(), Some(c.value.clone()))).collect()
    }

    /// The files to write into HOME.
    pub fn home_files(&self) -> Vec<(PathBuf, Vec<u8>)> {
        self.all.iter().filter(|c| c.file).map(|c| (PathBuf::from(&c.name), c.value.clone().into_bytes())).collect()
    }

    /// Each canary whose marker is in `bytes`, with where it first is.
    pub fn found_in<'a>(&'a self, bytes: &[u8]) -> Vec<(&'a Canary, usize)> {
        let lower = bytes.to_ascii_lowercase();
        self.all.iter().filter_map(|c| memchr::memmem::find(&lower, c.marker.as_bytes()).map(|at| (c, at))).collect()
    }

    /// The canary file at `path` relative to HOME, if one is.
    pub fn file_at(&self, relative: &std::path::Path) -> Option<&Canary> {
        self.all.iter().find(|c| c.file && std::path::Path::new(&c.name) == relative)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_canary_is_found_by_its_own_marker_in_either_case() {
        let c = Canaries::new(&["GITHUB_TOKEN".to_owned()]);
        assert!(c.env().iter().all(|(k, _)| k != "GITHUB_TOKEN"), "the user's variable is left alone");
        let aws = c.all.iter().find(|c| c.name == "AWS_ACCESS_KEY_ID").unwrap();
        assert!(aws.value.starts_with("AKIA") && aws.value.len() == 20, "{}", aws.value);
        let said = format!("config: AWS_ACCESS_KEY_ID={}\n", aws.value);
        let found: Vec<&str> = c.found_in(said.as_bytes()).iter().map(|(c, _)| c.name.as_str()).collect();
        assert_eq!(found, ["AWS_ACCESS_KEY_ID"]);
        assert!(c.found_in(b"nothing here").is_empty());
        assert_eq!(c.home_files().len(), FILES.len());
        let markers: std::collections::HashSet<&str> = c.all.iter().map(|c| c.marker.as_str()).collect();
        assert_eq!(markers.len(), c.all.len(), "every marker is its own");
    }
}
