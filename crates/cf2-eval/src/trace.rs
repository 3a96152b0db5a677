//! `-Deval`: a readable account of how each resource got its value — the rule that
//! decided, the definitions that made the value (file, line, operator) and those it
//! overrode. Built from the [`crate::model::Outcome`] the fold records for every slot.

use crate::eval::Evaluator;
use crate::model::{DefId, SlotState};
use crate::val::Val;
use cf2_syntax::Sources;

impl<'a> Evaluator<'a> {
    /// One entry per resource, in the order their values were settled.
    pub fn trace(&self) -> Vec<String> {
        let mut out = Vec::new();
        for s in &self.settled {
            let slot = self.slot(*s);
            let SlotState::Done(v) = &slot.state else {
                continue;
            };
            let Some(o) = &slot.outcome else { continue };
            let rule = if o.rule.is_empty() {
                "no value"
            } else {
                o.rule.as_str()
            };
            let mut entry = format!("eval: {} = {}  [{}]", slot.path, preview(v), rule);
            for d in &o.used {
                entry.push_str(&format!("\n  from     {}", self.describe_def(*d)));
            }
            for d in &o.overridden {
                entry.push_str(&format!(
                    "\n  overrode {}  (not evaluated)",
                    self.describe_def(*d)
                ));
            }
            for d in &o.undefined {
                entry.push_str(&format!(
                    "\n  skipped  {}  (gave no value)",
                    self.describe_def(*d)
                ));
            }
            out.push(entry);
        }
        out
    }

    fn describe_def(&self, d: DefId) -> String {
        let def = self.def(d);
        let text = self.loader.snippet(def.site);
        let first_line = text.lines().next().unwrap_or("");
        let short: String = first_line.chars().take(70).collect();
        let more = if first_line.chars().count() > 70 || text.lines().nth(1).is_some() {
            " …"
        } else {
            ""
        };
        format!(
            "{}  {}  `{}{more}`",
            self.loader.location(def.site),
            def.op.symbol(),
            short.trim(),
        )
    }
}

/// A value as the trace shows it: scalars in full (shortened), short lists of scalars
/// inline, other lists and blocks by their size.
fn preview(v: &Val) -> String {
    if let Val::List(l) = v {
        let parts: Vec<String> = l
            .items
            .iter()
            .map(|x| match x {
                Val::List(_) | Val::Block(_) => None,
                other => Some(other.describe()),
            })
            .collect::<Option<Vec<_>>>()
            .unwrap_or_default();
        let joined = parts.join(", ");
        if parts.len() == l.items.len() && joined.chars().count() <= 70 {
            return format!("[{joined}]");
        }
    }
    v.describe()
}
