//! Two or more JSON values on one line: the frames a streaming parser
//! configured for several top-level values would happily split and run.

use super::{Ctx, kinds, line};
use crate::frame::{Frame, Rule};
use crate::protocol::Id;
use proptest::prelude::*;

kinds! {
    /// What is concatenated.
    pub enum Kind {
        /// Control: a plain valid call.
        Valid => "valid_call",
        /// Two complete calls.
        TwoCalls => "two_calls",
        /// A call, then a scalar.
        CallThenScalar => "call_then_scalar",
        /// A scalar, then a call.
        ScalarThenCall => "scalar_then_call",
        /// A call, then an empty array.
        CallThenArray => "call_then_array",
    }
}

kinds! {
    /// What stands between the values.
    pub enum Sep {
        /// Nothing.
        Nothing => "nothing",
        /// A space.
        Space => "space",
        /// A tab.
        Tab => "tab",
    }
}

impl Sep {
    fn text(self) -> &'static str {
        match self {
            Sep::Nothing => "",
            Sep::Space => " ",
            Sep::Tab => "\t",
        }
    }
}

/// A concatenation attack.
#[derive(Clone, Debug, PartialEq, Eq, arbitrary::Arbitrary, serde::Serialize, serde::Deserialize)]
pub struct Concat {
    /// What is concatenated.
    pub kind: Kind,
    /// The separator.
    pub sep: Sep,
    /// Which runnable tool the calls use.
    pub tool: u8,
}

const FAMILY: &str = "concat";

impl Concat {
    /// The strategy.
    pub fn strategy() -> BoxedStrategy<Self> {
        (Kind::any(), Sep::any(), any::<u8>()).prop_map(|(kind, sep, tool)| Concat { kind, sep, tool }).boxed()
    }

    /// The frames.
    pub(crate) fn render(&self, ctx: &mut Ctx) -> Vec<Frame> {
        if self.kind == Kind::Valid {
            return vec![ctx.valid_call(self.tool, FAMILY)];
        }
        let sep = self.sep.text();
        let a = ctx.parts(self.tool);
        let mut tokens = vec![a.token.clone()];
        let text = match self.kind {
            Kind::TwoCalls => {
                let b = ctx.parts(self.tool.wrapping_add(1));
                tokens.push(b.token.clone());
                format!("{}{sep}{}", a.request(), b.request())
            }
            Kind::CallThenScalar => format!("{}{sep}1", a.request()),
            Kind::ScalarThenCall => format!("1{sep}{}", a.request()),
            Kind::CallThenArray => format!("{}{sep}[]", a.request()),
            Kind::Valid => unreachable!("handled above"),
        };
        vec![ctx.rejected(line(text), Rule::MultipleValues, Some(Id::Int(a.id)), tokens, FAMILY, self.kind.name())]
    }
}
