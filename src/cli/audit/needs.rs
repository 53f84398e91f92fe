//! The smallest environment a server needs, found by trying: the opening
//! (initialize, tools/list, ping) run without the canaries, then with no
//! variable of the user's, then without each one alone. A variable is
//! needed when the opening fails, or lists other tools, without it, or,
//! where the tool's valid call acts with every variable, when it no
//! longer acts without it (an allow-list, a HOME with its configuration).

use crate::cli::conversation::Conversation;
use crate::process::{ChildTarget, Command};
use crate::protocol::Revision;

/// What the trials showed.
#[derive(Clone, Debug, Default)]
pub struct Needs {
    /// Whether the trials ran (the audit's own opening worked).
    pub tried: bool,
    /// Whether the opening worked without any canary.
    pub without_canaries: bool,
    /// The user's variables it failed without.
    pub needed: Vec<String>,
    /// The user's variables it did as well without.
    pub unneeded: Vec<String>,
    /// Whether the tool's valid call acted with every variable, so each
    /// trial asked it to act too.
    pub by_call: bool,
    /// Why the trials could not tell, when a process would not start:
    /// a harness fault, not a need of the server's.
    pub inconclusive: Option<String>,
}

/// The tool names the opening of `cmd` lists, if the opening works; an
/// error when the process would not start.
fn opening(target: &ChildTarget, cmd: Command, revision: Revision) -> Result<Option<Vec<String>>, String> {
    let mut one = target.clone();
    one.command = cmd;
    let mut talk = Conversation::start(&one, revision, 0).map_err(|e| crate::cli::told(&e))?;
    let ok = talk.open();
    let names = talk
        .tools
        .as_ref()
        .map(|tools| tools.iter().filter_map(|t| t.get("name").and_then(|n| n.as_str()).map(str::to_owned)).collect());
    talk.finish();
    Ok(names.filter(|_| ok))
}

/// Whether the tool's valid call, made by a process of a command, acts;
/// an error when the process would not start.
pub type Acts<'a> = &'a dyn Fn(&Command) -> Result<bool, String>;

pub fn find(target: &ChildTarget, base: &Command, revision: Revision, acts: Option<Acts>) -> Needs {
    let mut needs = Needs { tried: true, ..Needs::default() };
    let listed = match opening(target, base.clone(), revision) {
        Ok(Some(listed)) => listed,
        Ok(None) => return needs,
        Err(e) => return Needs { inconclusive: Some(e), ..needs },
    };
    needs.without_canaries = true;
    let keys: Vec<String> = base.env.iter().map(|(k, _)| k.clone()).collect();
    if keys.is_empty() {
        return needs;
    }
    // A call that did not act is made once more before that counts: an
    // effect that came late, or a server slow once, is no need.
    let twice = |acts: Acts, cmd: &Command| Ok::<_, String>(acts(cmd)? || acts(cmd)?);
    // The call is asked to act only where it acts with every variable.
    let acts = match acts.map(|a| twice(a, base)) {
        Some(Ok(true)) => acts,
        Some(Err(e)) => return Needs { inconclusive: Some(e), ..needs },
        _ => None,
    };
    needs.by_call = acts.is_some();
    let without = |drop: &[String]| {
        let mut cmd = base.clone();
        cmd.env.retain(|(k, _)| !drop.contains(k));
        let opens = opening(target, cmd.clone(), revision)?.as_ref() == Some(&listed);
        match acts {
            Some(acts) if opens => twice(acts, &cmd),
            _ => Ok(opens),
        }
    };
    match without(&keys) {
        Ok(true) => {
            needs.unneeded = keys;
            return needs;
        }
        Ok(false) => {}
        Err(e) => return Needs { inconclusive: Some(e), ..needs },
    }
    for key in keys {
        match without(std::slice::from_ref(&key)) {
            Ok(true) => needs.unneeded.push(key),
            Ok(false) => needs.needed.push(key),
            Err(e) => return Needs { inconclusive: Some(e), ..needs },
        }
    }
    needs
}
