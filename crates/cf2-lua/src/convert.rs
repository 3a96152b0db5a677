//! Values across the boundary (docs/functions.md §"Values"). Every value is copied, so a
//! module never holds anything of the evaluator's.
//!
//! | cf2 | Lua |
//! |---|---|
//! | literal, string | string (`cf2.string(s)` returns text of kind string) |
//! | number | integer or float |
//! | boolean | boolean |
//! | regex | `cf2.regex(pattern)`: a table `{ pattern = ... }` |
//! | list | sequence table marked as a list |
//! | block | table marked as a block, iterated by `pairs` in member order |
//! | undefined | `nil` |
//!
//! Back from Lua, a plain table whose keys are exactly `1..n` is a list (an empty one
//! too); one whose keys are all text is a block with its members sorted by name; a table
//! made by `cf2.block()` keeps the order its members were added in.

use cf2_value::{Block, Number, Value};
use mlua::{Lua, Table};
use std::collections::HashSet;

/// The metatables that mark values, and the block order table (from the prelude).
pub(crate) struct Marks {
    order: Table,
    block: Table,
    list: Table,
    string: Table,
    regex: Table,
    pub(crate) arg: Table,
    ctx: Table,
    /// `call_eval(eval, dispatch, args)` and `call_mutate(mutate, dispatch, top, lower)`.
    pub(crate) call_eval: mlua::Function,
    pub(crate) call_mutate: mlua::Function,
}

pub(crate) fn same(a: &Table, b: &Table) -> bool {
    a.to_pointer() == b.to_pointer()
}

impl Marks {
    pub(crate) fn new(t: &Table) -> mlua::Result<Marks> {
        Ok(Marks {
            order: t.raw_get("ORDER")?,
            block: t.raw_get("BLOCK")?,
            list: t.raw_get("LIST")?,
            string: t.raw_get("STRING")?,
            regex: t.raw_get("REGEX")?,
            arg: t.raw_get("ARG")?,
            ctx: t.raw_get("CTX")?,
            call_eval: t.raw_get("call_eval")?,
            call_mutate: t.raw_get("call_mutate")?,
        })
    }

    /// A cf2 value as a Lua value (`None`, undefined, is `nil`).
    pub(crate) fn lua_value(&self, lua: &Lua, v: Option<&Value>) -> mlua::Result<mlua::Value> {
        let Some(v) = v else {
            return Ok(mlua::Value::Nil);
        };
        Ok(match v {
            Value::Literal(s) | Value::String(s) => mlua::Value::String(lua.create_string(s)?),
            Value::Number(Number::Int(i)) => mlua::Value::Integer(*i),
            Value::Number(Number::Float(f)) => mlua::Value::Number(*f),
            Value::Bool(b) => mlua::Value::Boolean(*b),
            Value::Regex(p) => {
                let t = lua.create_table_with_capacity(0, 1)?;
                t.raw_set("pattern", p.as_str())?;
                t.set_metatable(Some(self.regex.clone()))?;
                mlua::Value::Table(t)
            }
            Value::List(items) => {
                let t = lua.create_table_with_capacity(items.len(), 0)?;
                for (i, x) in items.iter().enumerate() {
                    t.raw_set(i + 1, self.lua_value(lua, Some(x))?)?;
                }
                t.set_metatable(Some(self.list.clone()))?;
                mlua::Value::Table(t)
            }
            Value::Block(members) => {
                let t = lua.create_table_with_capacity(0, members.len())?;
                let keys = lua.create_table_with_capacity(members.len(), 0)?;
                for (i, (k, x)) in members.iter().enumerate() {
                    t.raw_set(k.as_str(), self.lua_value(lua, Some(x))?)?;
                    keys.raw_set(i + 1, k.as_str())?;
                }
                self.order.raw_set(&t, keys)?;
                t.set_metatable(Some(self.block.clone()))?;
                mlua::Value::Table(t)
            }
        })
    }

    /// A module's result as a cf2 value (`nil` is undefined).
    /// `limit` bounds the size of the converted value, in bytes of text plus
    /// [`NODE_COST`] per value: Lua shares tables and strings, and a result that refers to
    /// one string 2,000 times, or nests one table 40 times in itself twice, is small in
    /// Lua but huge once copied (the module's memory limit does not see it).
    pub(crate) fn result(&self, v: mlua::Value, limit: usize) -> Result<Option<Value>, String> {
        let mut path = Walk {
            path: Vec::new(),
            left: limit,
            limit,
        };
        match v {
            mlua::Value::Nil => Ok(None),
            v => self.value(v, &mut path).map(Some).map_err(|e| {
                if path.is_empty() {
                    return e;
                }
                let shown: Vec<&str> = path.path.iter().take(8).map(String::as_str).collect();
                let more = if path.len() > 8 { ".…" } else { "" };
                format!("{e} (at `{}{more}`)", shown.join("."))
            }),
        }
    }

    /// `path` holds the member names and list indexes down to the value (left as it is
    /// where an error is found).
    fn value(&self, v: mlua::Value, path: &mut Walk) -> Result<Value, String> {
        if path.len() >= cf2_value::MAX_DEPTH {
            return Err(format!(
                "a value nested more than {} levels deep (a table that contains itself?)",
                cf2_value::MAX_DEPTH
            ));
        }
        path.spend(NODE_COST)?;
        if let mlua::Value::String(s) = &v {
            path.spend(s.as_bytes().len())?;
        }
        Ok(match v {
            mlua::Value::Nil => return Err("nil inside a list or block".into()),
            mlua::Value::Boolean(b) => Value::Bool(b),
            mlua::Value::Integer(i) => Value::Number(Number::Int(i)),
            mlua::Value::Number(f) if f.is_finite() => Value::Number(Number::Float(f)),
            mlua::Value::Number(f) => return Err(format!("the number {f}, which is not finite")),
            mlua::Value::String(s) => Value::Literal(text(&s)?),
            mlua::Value::Table(t) => self.table(t, path)?,
            other => {
                return Err(format!(
                    "a Lua {}, which is not a cf2 value",
                    other.type_name()
                ))
            }
        })
    }

    fn table(&self, t: Table, path: &mut Walk) -> Result<Value, String> {
        let lua_err = |e: mlua::Error| e.to_string();
        if let Some(mt) = t.metatable() {
            if same(&mt, &self.string) {
                return match t.raw_get::<mlua::Value>("text").map_err(lua_err)? {
                    mlua::Value::String(s) => Ok(Value::String(text(&s)?)),
                    _ => Err("a cf2.string without text".into()),
                };
            }
            if same(&mt, &self.regex) {
                return match t.raw_get::<mlua::Value>("pattern").map_err(lua_err)? {
                    mlua::Value::String(s) => Ok(Value::Regex(text(&s)?)),
                    _ => Err("a cf2.regex without a pattern".into()),
                };
            }
            if same(&mt, &self.list) {
                // Marked a list, it must be one: an element past a gap, at 0 or under a
                // name would otherwise be dropped without a word.
                let n = t.raw_len();
                for pair in t.pairs::<mlua::Value, mlua::Value>() {
                    let (k, _) = pair.map_err(lua_err)?;
                    let fits = matches!(k, mlua::Value::Integer(i) if i >= 1 && (i as usize) <= n);
                    if !fits {
                        let key = match k {
                            mlua::Value::String(s) => format!("the key `{}`", text(&s)?),
                            mlua::Value::Integer(i) => format!("the index {i}"),
                            other => format!("a {} key", other.type_name()),
                        };
                        return Err(format!(
                            "a cf2.list with {key}: a list's elements are at 1..n, with no gap"
                        ));
                    }
                }
                return self.list(&t, path);
            }
            if same(&mt, &self.block) {
                return self.block(&t, path, true);
            }
            // Handles are valid only during the call; one returned whole is evaluated
            // before the call ends (the prelude's `call_eval`), one inside a table cannot be.
            if same(&mt, &self.arg) {
                return Err(
                    "a NOEVAL argument's handle inside the result, which is not a value: \
                            put its value there (`h:eval()`)"
                        .into(),
                );
            }
            if same(&mt, &self.ctx) {
                return Err("the call's context (`ctx`), which is not a cf2 value".into());
            }
        }
        // A plain table: a list if its keys are exactly 1..n, a block if they are all text.
        let mut count = 0usize;
        let mut all_text = true;
        let mut all_index = true;
        for pair in t.pairs::<mlua::Value, mlua::Value>() {
            let (k, _) = pair.map_err(lua_err)?;
            count += 1;
            match k {
                mlua::Value::String(_) => all_index = false,
                mlua::Value::Integer(i) if i >= 1 => all_text = false,
                _ => {
                    all_text = false;
                    all_index = false;
                }
            }
        }
        if all_index && t.raw_len() == count {
            self.list(&t, path)
        } else if all_text {
            self.block(&t, path, false)
        } else {
            Err("a table that is neither a list (keys 1..n) nor a block (text keys)".into())
        }
    }

    fn list(&self, t: &Table, path: &mut Walk) -> Result<Value, String> {
        let n = t.raw_len();
        let mut items = Vec::with_capacity(n);
        for i in 1..=n {
            let x: mlua::Value = t.raw_get(i).map_err(|e| e.to_string())?;
            path.push((i - 1).to_string());
            items.push(self.value(x, path)?);
            path.pop();
        }
        Ok(Value::List(items))
    }

    /// A block: members in the order recorded by `cf2.block()` (when `ordered`), then any
    /// others sorted by name.
    fn block(&self, t: &Table, path: &mut Walk, ordered: bool) -> Result<Value, String> {
        let lua_err = |e: mlua::Error| e.to_string();
        let mut keys: Vec<String> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        if ordered {
            if let Ok(mlua::Value::Table(order)) = self.order.raw_get::<mlua::Value>(t) {
                for k in order.sequence_values::<mlua::Value>() {
                    if let mlua::Value::String(s) = k.map_err(lua_err)? {
                        let name = text(&s)?;
                        if seen.insert(name.clone()) {
                            keys.push(name);
                        }
                    }
                }
            }
        }
        let mut rest: Vec<String> = Vec::new();
        for pair in t.pairs::<mlua::Value, mlua::Value>() {
            let (k, _) = pair.map_err(lua_err)?;
            match k {
                mlua::Value::String(s) => {
                    let name = text(&s)?;
                    if !seen.contains(&name) {
                        rest.push(name);
                    }
                }
                other => {
                    return Err(format!(
                        "a block with a {} key (member names are text)",
                        other.type_name()
                    ))
                }
            }
        }
        rest.sort();
        keys.extend(rest);
        let mut out = Block::default();
        for k in keys {
            let x: mlua::Value = t.raw_get(k.as_str()).map_err(lua_err)?;
            if x.is_nil() {
                continue;
            }
            path.spend(k.len())?;
            path.push(k.clone());
            let v = self.value(x, path)?;
            path.pop();
            out.insert(k, v);
        }
        Ok(Value::Block(out))
    }
}

/// What one converted value counts against a result's size limit, besides its text.
const NODE_COST: usize = 32;

/// Where the conversion of a result is (member names and list indexes down to the value,
/// left as they are where an error is found), and how much of its size limit is left.
pub(crate) struct Walk {
    path: Vec<String>,
    left: usize,
    limit: usize,
}

impl Walk {
    fn push(&mut self, step: String) {
        self.path.push(step);
    }

    fn pop(&mut self) {
        self.path.pop();
    }

    fn len(&self) -> usize {
        self.path.len()
    }

    fn is_empty(&self) -> bool {
        self.path.is_empty()
    }

    fn spend(&mut self, bytes: usize) -> Result<(), String> {
        match self.left.checked_sub(bytes) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(format!(
                "a value larger than {} once copied out of Lua, the limit (a table or text shared many times?)",
                crate::mebibytes(self.limit)
            )),
        }
    }
}

fn text(s: &mlua::LuaString) -> Result<String, String> {
    s.to_str()
        .map(|s| s.to_string())
        .map_err(|_| "text that is not UTF-8".to_string())
}
