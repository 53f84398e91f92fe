//! Stray text on stdin: debug lines, HTML error pages, shell prompts and
//! banners, on a line of their own or glued onto a valid frame.

use super::{Ctx, kinds, line};
use crate::frame::{Frame, Rule};
use crate::protocol::Id;
use proptest::prelude::*;

kinds! {
    /// Where the stray text goes.
    pub enum Kind {
        /// Control: a plain valid call.
        Valid => "valid_call",
        /// The text on a line of its own, then a valid call.
        LineBefore => "line_before",
        /// The text glued in front of a valid call on the same line.
        GluedPrefix => "glued_prefix",
        /// The text glued after a valid call on the same line.
        GluedSuffix => "glued_suffix",
    }
}

kinds! {
    /// What the stray text looks like.
    pub enum Text {
        /// A debug line.
        Debug => "debug",
        /// A startup banner.
        Banner => "banner",
        /// An HTML error page.
        Html => "html",
        /// A shell prompt.
        Prompt => "prompt",
        /// The first line of a traceback.
        Traceback => "traceback",
    }
}

impl Text {
    fn text(self) -> &'static str {
        match self {
            Text::Debug => "debug: entering tool handler",
            Text::Banner => "my-gateway v1.4.2 ready on stdio",
            Text::Html => "<html><body><h1>502 Bad Gateway</h1></body></html>",
            Text::Prompt => "user@host:~$ ",
            Text::Traceback => "Traceback (most recent call last):",
        }
    }
}

/// A stray-text attack.
#[derive(Clone, Debug, PartialEq, Eq, arbitrary::Arbitrary, serde::Serialize, serde::Deserialize)]
pub struct Noise {
    /// Where the text goes.
    pub kind: Kind,
    /// What it says.
    pub text: Text,
    /// Which runnable tool the call uses.
    pub tool: u8,
}

const FAMILY: &str = "noise";

impl Noise {
    /// The strategy.
    pub fn strategy() -> BoxedStrategy<Self> {
        (Kind::any(), Text::any(), any::<u8>()).prop_map(|(kind, text, tool)| Noise { kind, text, tool }).boxed()
    }

    /// The frames.
    pub(crate) fn render(&self, ctx: &mut Ctx) -> Vec<Frame> {
        let text = self.text.text();
        match self.kind {
            Kind::Valid => vec![ctx.valid_call(self.tool, FAMILY)],
            Kind::LineBefore => {
                let noise = ctx.rejected(line(text), Rule::StrayText, None, vec![], FAMILY, self.kind.name());
                vec![noise, ctx.valid_call(self.tool, FAMILY)]
            }
            Kind::GluedPrefix | Kind::GluedSuffix => {
                let parts = ctx.parts(self.tool);
                let body = if self.kind == Kind::GluedPrefix {
                    format!("{text}{}", parts.request())
                } else {
                    format!("{}{text}", parts.request())
                };
                let id = Some(Id::Int(parts.id));
                vec![ctx.rejected(line(body), Rule::StrayText, id, vec![parts.token], FAMILY, self.kind.name())]
            }
        }
    }
}
