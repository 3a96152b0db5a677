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
        self.explanation_read_by(path, None)
    }

    /// [`Config::explanation`], with a `read by` line after the entry for each reader that
    /// `whole`, a compile of the whole configuration with the trace, found
    /// ([`Config::readers`]): this compile, of one path, evaluated only what its value needs.
    pub fn explanation_read_by(&self, path: &str, whole: Option<&Config>) -> String {
        if path.is_empty() {
            // The configuration itself: no definition makes it, its resources do.
            return format!("the configuration:\n{}", self.member_lines("", ""));
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
        let readers = whole.map(|w| w.readers(holder)).unwrap_or_default();
        for reader in readers {
            let line = format!("  read by  {reader}\n");
            text.push_str(&cf2_syntax::visible(&line));
        }
        // A block made for another resource (`Web => $Defaults`) has its members' entries
        // under that resource.
        let entries_at = entry.block_of.as_deref().unwrap_or(holder);
        text.push_str(&self.member_lines(holder, entries_at));
        text
    }

    /// What read the resource at `path` by reference in this compile, as `cf2 explain`
    /// lists them: each resource whose definitions read it (`$Services.web.Workers`), then
    /// each inline statement (`the inline statement at base.cf2:12:1 `if ($Memory > 16)
    /// then { …``). Only what was evaluated counts: a branch not taken read nothing, and
    /// a compile of one path ([`crate::Compiler::compile_file_at`]) evaluated only what
    /// that value needs. Needs the trace. A resource a secret's pick may have read is not
    /// named (its entry is hidden too).
    pub fn readers(&self, path: &str) -> Vec<String> {
        let read_here =
            |reads: &[cf2_eval::Read]| reads.iter().any(|r| !r.hidden && r.path == path);
        let resources = self
            .final_entries()
            .filter(|p| read_here(&p.reads))
            .map(|p| format!("${}", p.path));
        let statements = self
            .statement_reads
            .iter()
            .filter(|s| read_here(&s.reads))
            .map(|s| format!("the inline statement at {}  `{}`", s.location, s.text));
        let mut seen = std::collections::HashSet::new();
        resources
            .chain(statements)
            .filter(|r| seen.insert(r.clone()))
            .collect()
    }

    /// A line per member of the block at `path`, from their entries under `entries_at`
    /// (for the configuration, `path` empty, a `resource` line per resource).
    fn member_lines(&self, path: &str, entries_at: &str) -> String {
        let Some(Value::Block(block)) = self.value_at(path) else {
            return String::new();
        };
        // Each resource's entry, found once: looking each member up in the whole
        // provenance made a block of n members cost n scans of it.
        let mut entries = std::collections::HashMap::new();
        for p in self.final_entries() {
            entries.entry(p.path.as_str()).or_insert(p);
        }
        let label = if path.is_empty() {
            "resource"
        } else {
            "member  "
        };
        let mut text = String::new();
        for (key, _) in block.iter() {
            let member = if entries_at.is_empty() {
                key.to_string()
            } else {
                format!("{entries_at}.{key}")
            };
            text.push_str(&member_line(
                label,
                key,
                entries.get(member.as_str()).copied(),
            ));
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
}

/// `  member   KEY = VALUE  [RULE]  from PLACES`: one member of an explained block (or,
/// labelled `resource`, of the configuration), from its entry.
fn member_line(label: &str, key: &str, entry: Option<&Provenance>) -> String {
    let Some(entry) = entry else {
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
    // The key and the value preview come from the sources: their control characters are
    // shown, not run, as in `-Deval`.
    cf2_syntax::visible(&line).into_owned()
}
