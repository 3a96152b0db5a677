//! How a resource got its value, as `cf2 explain` prints it: its entry of the provenance
//! the evaluator records (the definitions that made it, by which rule, what they overrode),
//! then one line per member of a block, so that a block is explained a level at a time.

use crate::{Config, Value};
use cf2_eval::Provenance;

impl Config {
    /// How the resource at `path` (`Web.Port`) got its value: the rule that decided, each
    /// definition that made it (`FILE:LINE:COL`, operator, statement), what it overrode; for
    /// a block, a line per member with its value and where it came from. Needs the
    /// provenance (`options_mut().trace = true`). A path inside a value no resource made on
    /// its own (`Disks.0`, an item of a list) is explained by the resource that holds it.
    /// Values stay hidden as in `-Deval`: a secret shows as `‹secret›`, and a resource a
    /// secret selector picked has no record. The empty path lists the configuration's
    /// resources, a line each.
    pub fn explanation(&self, path: &str) -> String {
        if path.is_empty() {
            // The configuration itself: no definition makes it, its resources do.
            let mut text = "the configuration:\n".to_string();
            if let Some(Value::Block(block)) = self.value_at("") {
                for (key, _) in block.iter() {
                    text.push_str(&self.member_line("resource", key, key));
                }
            }
            return text;
        }
        let Some((entry, holder)) = self.entry_or_holder(path) else {
            return format!(
                "{path}: no record of how it got its value (a value a secret selector \
                 picked is not explained, nor one compiled without the trace)\n"
            );
        };
        let mut text = String::new();
        if holder != path {
            text.push_str(&format!("{path} is part of the value of {holder}:\n"));
        }
        text.push_str(&cf2_eval::trace::render_entry(entry));
        text.push('\n');
        // A block made for another resource (`Web => $Defaults`) has its members' entries
        // under that resource.
        let members_at = entry.block_of.as_deref().unwrap_or(holder);
        if let Some(Value::Block(block)) = self.value_at(holder) {
            for (key, _) in block.iter() {
                let member = format!("{members_at}.{key}");
                text.push_str(&self.member_line("member  ", key, &member));
            }
        }
        text
    }

    /// The entry of `path`, or of the nearest resource above it that has one, with that
    /// resource's path.
    fn entry_or_holder<'p>(&self, path: &'p str) -> Option<(&Provenance, &'p str)> {
        let mut at = path;
        loop {
            if let Some(entry) = self.explain(at) {
                return Some((entry, at));
            }
            at = at.get(..at.rfind('.')?)?;
        }
    }

    /// The value at the full `path`, whether the whole configuration was compiled or only
    /// the value at a path ([`crate::Compiler::compile_file_at`]).
    fn value_at(&self, path: &str) -> Option<&Value> {
        let at = self.rerun.at.as_str();
        if at.is_empty() {
            return self.get(path);
        }
        if path == at {
            return Some(&self.value);
        }
        let below = path.strip_prefix(at)?.strip_prefix('.')?;
        self.get(below)
    }

    /// `  member   KEY = VALUE  [RULE]  from PLACES`: one member of an explained block (or,
    /// labelled `resource`, of the configuration).
    fn member_line(&self, label: &str, key: &str, path: &str) -> String {
        let Some(entry) = self.explain(path) else {
            return format!("  {label} {key}  (no record)\n");
        };
        let made = &entry.made;
        let places: Vec<&str> = made.used.iter().map(|o| o.location.as_str()).collect();
        let from = if places.is_empty() {
            String::new()
        } else {
            format!("  from {}", places.join(", "))
        };
        let overrode = match made.overridden.len() {
            0 => String::new(),
            1 => "  (overrode 1 definition)".to_string(),
            n => format!("  (overrode {n} definitions)"),
        };
        let line = format!(
            "  {label} {key} = {}  [{}]{from}{overrode}\n",
            made.value, made.rule
        );
        // The key and the value preview come from the sources: their control characters
        // are shown, not run, as in `-Deval`.
        cf2_syntax::visible(&line).into_owned()
    }
}
