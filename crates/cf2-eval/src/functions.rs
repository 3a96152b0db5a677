//! The standard functions of Figure 2 (names are case-insensitive). Each checks its
//! arguments and reports a type error at the argument. A name that is not a standard
//! function goes to the custom functions ([`crate::external`]).

use crate::error::{ErrorKind, EvalError, R};
use crate::eval::Evaluator;
use crate::model::ScopeId;
use crate::ops::{numeric, scalar_text};
use crate::val::Val;
use cf2_syntax::ast::{self, Expr};
use cf2_syntax::{Diagnostic, FileId, Span};
use cf2_value::Number;
use std::cmp::Ordering;
use std::rc::Rc;

/// Names of the standard functions (for "did you mean" and documentation).
pub const STANDARD: &[&str] = &[
    "defined", "downcase", "fail", "ipaddr", "iphost", "join", "match", "max", "min", "read",
    "sum", "topdir", "typeof", "upcase", "warn",
];

/// Names other languages give what a standard function does, with the function (or the
/// operator) to use instead: a hint where "did you mean" finds nothing close. Only names
/// no standard function is near; the first of a pair is lower-case.
const FROM_OTHER_LANGUAGES: &[(&str, &str)] = &[
    ("lower", "`downcase(X)`"),
    ("lowercase", "`downcase(X)`"),
    ("tolower", "`downcase(X)`"),
    ("lc", "`downcase(X)`"),
    ("upper", "`upcase(X)`"),
    ("uppercase", "`upcase(X)`"),
    ("toupper", "`upcase(X)`"),
    ("uc", "`upcase(X)`"),
    ("error", "`fail(MESSAGE)`"),
    ("die", "`fail(MESSAGE)`"),
    ("abort", "`fail(MESSAGE)`"),
    ("raise", "`fail(MESSAGE)`"),
    ("throw", "`fail(MESSAGE)`"),
    ("panic", "`fail(MESSAGE)`"),
    ("print", "`warn(MESSAGE)`"),
    ("warning", "`warn(MESSAGE)`"),
    ("log", "`warn(MESSAGE)`"),
    ("echo", "`warn(MESSAGE)`"),
    ("type", "`typeof(X)`"),
    ("gettype", "`typeof(X)`"),
    ("isset", "`defined(X)`"),
    ("exists", "`defined(X)`"),
    ("isdefined", "`defined(X)`"),
    ("is_defined", "`defined(X)`"),
    ("implode", "`join(SEPARATOR, LIST)`"),
    ("concat", "the operator `++` (`$A ++ $B`)"),
    ("strcat", "the operator `++` (`$A ++ $B`)"),
    ("include", "`import(FILE)`"),
    ("require", "`import(FILE)`"),
    ("load", "`import(FILE)`"),
    ("source", "`import(FILE)`"),
    ("readfile", "`read(FILE)`"),
    ("file", "`read(FILE)`"),
    ("slurp", "`read(FILE)`"),
    ("gethostbyname", "`ipaddr(HOST)`"),
    ("resolve", "`ipaddr(HOST)`"),
    ("gethostbyaddr", "`iphost(ADDRESS)`"),
    // LCFG's mutation macros, written as values.
    ("mset", "`Name => value`"),
    ("madd", "`Name ~(append)> [value]`"),
    ("mremove", "`Name ~(remove)> [value]`"),
    ("mextra", "`Name ~(union)> [value]`"),
];

/// What to write instead of `name` by a `table` of names from other languages (this file's
/// [`FROM_OTHER_LANGUAGES`], and the mutation functions' in `mutators.rs`); names are
/// case-insensitive.
pub(crate) fn instead_of(table: &[(&str, &'static str)], name: &str) -> Option<&'static str> {
    table
        .iter()
        .find(|(other, _)| other.eq_ignore_ascii_case(name))
        .map(|(_, instead)| *instead)
}

/// Names listed for a message, each quoted: `` `defined`, `downcase`, ... ``.
pub(crate) fn listed(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn arity(call: &ast::Call, want: usize) -> R<()> {
    if call.args.len() == want {
        return Ok(());
    }
    Err(EvalError::new(
        Diagnostic::error(format!(
            "`{}` takes {want} argument{}, but {} {} given",
            call.name.name,
            if want == 1 { "" } else { "s" },
            call.args.len(),
            if call.args.len() == 1 { "was" } else { "were" }
        ))
        .at(call.span),
    ))
}

/// A list argument with a wrong element: says which element, and what it is.
fn element_error(call: &ast::Call, arg: &Expr, index: usize, want: &str, got: &Val) -> EvalError {
    EvalError::new(
        Diagnostic::error(format!(
            "`{}` needs a list of {want}, but element {index} of its argument is {}",
            call.name.name,
            got.describe()
        ))
        .at(arg.span)
        .with_label(format!(
            "element {index} of this list is {}",
            got.kind_phrase()
        )),
    )
}

fn arg_error(call: &ast::Call, arg: &Expr, want: &str, got: &Val) -> EvalError {
    EvalError::new(
        Diagnostic::error(format!(
            "`{}` needs {want}, but its argument is {}",
            call.name.name,
            got.describe()
        ))
        .at(arg.span)
        .with_label(format!("this is {}", got.kind_phrase())),
    )
}

/// `ipaddr()` and `iphost()` are not given secrets: the look-up would send the secret to
/// the name servers, in clear (docs/security.md §6). They are called with their argument
/// still closed, so a secret (or a list holding one) is seen here.
fn refuse_secret(call: &ast::Call, arg: &Expr, v: &Val) -> R<()> {
    let Some(origin) = crate::secret::secret_origin(std::iter::once(v)) else {
        return Ok(());
    };
    Err(EvalError::new(
        Diagnostic::error(format!(
            "`{}` cannot look up a secret: the name servers would see {}",
            call.name.name,
            v.describe()
        ))
        .at(arg.span)
        .with_label(format!("this is a secret from {origin}"))
        .note("a host name or address kept in a KeePass database is not looked up, so that it never leaves the compile (docs/security.md)")
        .hint("write the host name or address in the configuration, or keep it outside the database"),
    ))
}

impl<'a> Evaluator<'a> {
    pub(crate) fn call_function(&mut self, call: &'a ast::Call, sc: ScopeId) -> R<Val> {
        let name = call.name.name.to_lowercase();
        match name.as_str() {
            "defined" => {
                arity(call, 1)?;
                let Some(arg) = call.args.first() else {
                    return Ok(Val::Undef);
                };
                // Something the argument itself names that does not exist (directly or
                // through a macro's argument) is "not defined"; a missing name met while
                // evaluating a resource it names is an error in that resource — one that
                // names the resource it arose in — which must not be hidden
                // (`fn-defined-does-not-hide-an-error-in-the-resource`).
                match self.eval(arg, sc) {
                    Ok(v) => Ok(Val::Bool(!v.is_undef())),
                    Err(e) if e.kind == ErrorKind::Missing && e.diag.resource.is_none() => {
                        Ok(Val::Bool(false))
                    }
                    Err(e) => Err(e),
                }
            }
            "downcase" | "upcase" => {
                let (arg, v) = self.one_arg(call, sc)?;
                let up = name == "upcase";
                let text = match &v {
                    Val::Lit(s) | Val::Str(s) => s,
                    other => return Err(arg_error(call, arg, "text", other)),
                };
                // A character's case mapping is at most three times as long in UTF-8 (`ΐ`
                // upper-cased): only text that could pass the limit is measured first.
                if text.len().saturating_mul(3) > crate::ops::MAX_TEXT_BYTES {
                    let mut len = 0usize;
                    for c in text.chars() {
                        other_case(c, up, |m| len = len.saturating_add(m.len_utf8()));
                    }
                    if len > crate::ops::MAX_TEXT_BYTES {
                        return Err(crate::ops::text_too_long(
                            len,
                            call.span,
                            &format!("`{name}`"),
                        ));
                    }
                }
                let mut changed = String::with_capacity(text.len());
                for c in text.chars() {
                    other_case(c, up, |m| changed.push(m));
                }
                Ok(match v {
                    Val::Str(_) => Val::Str(changed.into()),
                    _ => Val::Lit(changed.into()),
                })
            }
            "fail" => {
                let (arg, v) = self.one_arg(call, sc)?;
                let Some(text) = scalar_text(&v) else {
                    return Err(arg_error(call, arg, "a message", &v));
                };
                Err(EvalError::new(
                    Diagnostic::error(said(text, &v, "fail"))
                        .at(call.span)
                        .with_label("fail() called here"),
                ))
            }
            "warn" => {
                let (arg, v) = self.one_arg(call, sc)?;
                let Some(text) = scalar_text(&v) else {
                    return Err(arg_error(call, arg, "a message", &v));
                };
                let mut w = Diagnostic::warning(said(text, &v, "warn")).at(call.span);
                if let Some(s) = self.stack.last() {
                    w = w.resource(self.slot_path(*s));
                }
                self.warn_once(w);
                Ok(Val::Undef)
            }
            "ipaddr" => {
                let (arg, v) = self.one_arg(call, sc)?;
                refuse_secret(call, arg, &v)?;
                let Some(host) = v.text() else {
                    return Err(arg_error(call, arg, "a host name", &v));
                };
                let addrs = self.host.lookup_host(host).map_err(|e| {
                    EvalError::new(
                        Diagnostic::error(format!("cannot resolve the host name `{host}`: {e}"))
                            .at(arg.span),
                    )
                })?;
                // Resolvers repeat an address once per socket type: keep each once, in
                // the order first given.
                let mut v4: Vec<String> = Vec::new();
                for a in addrs.iter().filter(|a| a.is_ipv4()) {
                    let a = a.to_string();
                    if !v4.contains(&a) {
                        v4.push(a);
                    }
                }
                let items = v4.into_iter().map(|a| Val::Lit(a.into())).collect();
                self.list_of(items, call.span)
            }
            "iphost" => {
                let (arg, v) = self.one_arg(call, sc)?;
                refuse_secret(call, arg, &v)?;
                let Some(addr) = v.text() else {
                    return Err(arg_error(call, arg, "an IPv4 address", &v));
                };
                let ip: std::net::Ipv4Addr = addr.trim().parse().map_err(|_| {
                    EvalError::new(
                        Diagnostic::error(format!("`{addr}` is not an IPv4 address")).at(arg.span),
                    )
                })?;
                let name = self
                    .host
                    .lookup_addr(std::net::IpAddr::V4(ip))
                    .map_err(|e| {
                        EvalError::new(
                            Diagnostic::error(format!("cannot find the host name of {addr}: {e}"))
                                .at(arg.span),
                        )
                    })?;
                Ok(Val::Lit(name.into()))
            }
            "join" => {
                arity(call, 2)?;
                let (Some(sa), Some(la)) = (call.args.first(), call.args.get(1)) else {
                    return Ok(Val::Undef);
                };
                let sep = self.eval(sa, sc)?;
                let list = self.eval(la, sc)?;
                let Some(sep_text) = scalar_text(&sep) else {
                    return Err(arg_error(
                        call,
                        sa,
                        "a separator as its first argument",
                        &sep,
                    ));
                };
                let Val::List(items) = &list else {
                    return Err(arg_error(call, la, "a list as its second argument", &list));
                };
                let mut parts = Vec::with_capacity(items.items.len());
                let mut string = matches!(sep, Val::Str(_));
                for (i, x) in items.items.iter().enumerate() {
                    string |= matches!(x, Val::Str(_));
                    match scalar_text(x) {
                        Some(t) => parts.push(t),
                        None => return Err(element_error(call, la, i, "scalars", x)),
                    }
                }
                let len = parts.iter().fold(
                    sep_text.len().saturating_mul(parts.len().saturating_sub(1)),
                    |n, p| n.saturating_add(p.len()),
                );
                if len > crate::ops::MAX_TEXT_BYTES {
                    return Err(crate::ops::text_too_long(len, call.span, "`join`"));
                }
                let joined: Rc<str> = parts.join(&sep_text).into();
                Ok(if string {
                    Val::Str(joined)
                } else {
                    Val::Lit(joined)
                })
            }
            "match" => {
                let (arg, v) = self.one_arg(call, sc)?;
                self.capture(call, arg, &v, sc)
            }
            "max" | "min" => {
                let (arg, v) = self.one_arg(call, sc)?;
                let Val::List(items) = &v else {
                    return Err(arg_error(call, arg, "a list", &v));
                };
                let want = if name == "max" {
                    Ordering::Greater
                } else {
                    Ordering::Less
                };
                let order = crate::ops::extreme_order(items.items.iter()).map_err(|e| {
                    let (crate::ops::Unordered::NotScalar(i) | crate::ops::Unordered::Mixed(i)) = e;
                    let x = items.items.get(i).unwrap_or(&Val::Undef);
                    element_error(call, arg, i, "numbers, or text", x)
                })?;
                let mut best: Option<&Val> = None;
                for x in items.items.iter() {
                    best = match best {
                        None => Some(x),
                        Some(b) => match order(x, b) {
                            Some(o) if o == want => Some(x),
                            // A tie (`1` and `1.0`) is settled by kind, then by text, as
                            // `~(max)>` settles it, never by the order of the list.
                            Some(Ordering::Equal) if crate::mutators::tie_first(x, b) => Some(x),
                            _ => Some(b),
                        },
                    };
                }
                best.cloned().ok_or_else(|| {
                    EvalError::new(
                        Diagnostic::error(format!("`{}` of an empty list", call.name.name))
                            .at(arg.span),
                    )
                })
            }
            "sum" => {
                let (arg, v) = self.one_arg(call, sc)?;
                let Val::List(items) = &v else {
                    return Err(arg_error(call, arg, "a list of numbers", &v));
                };
                let mut numbers = Vec::with_capacity(items.items.len());
                for (i, x) in items.items.iter().enumerate() {
                    let Some(n) = numeric(x) else {
                        return Err(element_error(call, arg, i, "numbers", x));
                    };
                    numbers.push(n);
                }
                // As `~(sum)>` sums: integers exactly, so that a total in range is found
                // even where a partial one is not (`[9223372036854775807, 1, -1]`).
                let total = crate::mutators::order_free_sum(numbers)
                    .ok_or_else(|| crate::ops::overflow(call.span))?;
                Ok(Val::Num(total))
            }
            "read" => {
                let (arg, v) = self
                    .one_arg(call, sc)
                    .map_err(|e| match call.args.first() {
                        Some(arg) => self.unquoted_path(e, arg, "read"),
                        None => e,
                    })?;
                let Some(name) = v.text() else {
                    return Err(arg_error(call, arg, "a file name", &v));
                };
                // A name computed from a secret: the paths an error shows (resolved,
                // searched) hold parts of it that scrubbing the whole text misses, and which
                // error it is (not found, outside the allowed directories, protected, not
                // text) tells something of it too. So any error is told as one, without
                // details.
                let secret_name = self.taint.is_some();
                let file = self.scope(sc).file;
                match self.read_named_file(name, file, arg.span) {
                    Err(e) if secret_name => Err(e.told_as(
                        Diagnostic::error("`read` cannot read the file a secret names")
                            .at(arg.span)
                            .note("the details are not shown, because the file name is computed from a secret"),
                    )),
                    r => r,
                }
            }
            "topdir" => {
                arity(call, 0)?;
                Ok(Val::Lit(
                    self.project_dir_absolute().display().to_string().into(),
                ))
            }
            "typeof" => {
                let (_, v) = self.one_arg(call, sc)?;
                Ok(Val::Lit(Rc::from(v.type_name())))
            }
            _ => match self.find_external(&name, call.name.span)? {
                Some(f) => self.call_external(f, call, sc),
                None => Err(self.unknown_function(call, sc)),
            },
        }
    }

    fn one_arg(&mut self, call: &'a ast::Call, sc: ScopeId) -> R<(&'a Expr, Val)> {
        arity(call, 1)?;
        let Some(arg) = call.args.first() else {
            return Err(EvalError::new(
                Diagnostic::error("missing argument").at(call.span),
            ));
        };
        let v = self.eval(arg, sc)?;
        Ok((arg, v))
    }

    /// `match(n)`: capture group `n` (or a named group) of the condition's regex match.
    fn capture(&mut self, call: &ast::Call, arg: &Expr, v: &Val, sc: ScopeId) -> R<Val> {
        let Some(caps) = self.scope(sc).captures.clone() else {
            return Err(EvalError::new(
                Diagnostic::error("`match()` has no regular expression match to read")
                    .at(call.span)
                    .hint("use `match()` in a branch of an `if` whose condition matches a regex with capture groups"),
            ));
        };
        if caps.unevaluated {
            return Err(EvalError::new(
                Diagnostic::error(
                    "`match()` has no capture to read: the regular expression in the condition was not evaluated",
                )
                .at(call.span)
                .note("`||` and `&&` evaluate their right side only when the left side does not decide")
                .hint("match the regex first in the condition (`if ($X =~ /(...)/ || ...)`), or nest the `if`s"),
            ));
        }
        if caps.ambiguous {
            return Err(EvalError::new(
                Diagnostic::error(
                    "`match()` cannot tell which regular expression to read: the condition matches several and none has capture groups",
                )
                .at(call.span)
                .hint("give the one to read capture groups, e.g. `/(\\d+)/`"),
            ));
        }
        if caps.groups.is_empty() {
            return Err(EvalError::new(
                Diagnostic::error(
                    "`match()` cannot read a capture: the regular expression did not match",
                )
                .at(call.span)
                .hint("read captures in the branch taken when the regex matches"),
            ));
        }
        // A whole number is a group number, also as a float (`2.0`) or as text that spells
        // one, as everywhere else (`' 2'` is 2, `'+1'` is not a number); any other text
        // names a group.
        let whole = |n: Number| n.as_whole().and_then(|i| usize::try_from(i).ok());
        let index = match v {
            Val::Num(n) => whole(*n),
            Val::Lit(s) | Val::Str(s) => match numeric(v) {
                Some(n) => whole(n),
                None => caps.names.iter().find(|(n, _)| **n == **s).map(|(_, i)| *i),
            },
            _ => None,
        };
        let Some(i) = index else {
            return Err(arg_error(call, arg, "a capture group number", v));
        };
        match caps.groups.get(i) {
            Some(Some(text)) => Ok(Val::Lit(text.as_str().into())),
            Some(None) => Ok(Val::Undef),
            // Matched with a secret (a regex a secret selector picked, or a secret text):
            // how many groups the regex has could tell which regex it is.
            None if caps.secret.is_some() => Err(EvalError::new(
                Diagnostic::error(format!(
                    "`match({i})`: the regular expression matched with a secret has no such capture group"
                ))
                .at(arg.span),
            )),
            None => Err(EvalError::new(
                Diagnostic::error(format!(
                    "`match({i})`: the regular expression has only {} capture group{}",
                    caps.groups.len().saturating_sub(1),
                    if caps.groups.len() == 2 { "" } else { "s" }
                ))
                .at(arg.span),
            )),
        }
    }

    fn unknown_function(&self, call: &ast::Call, sc: ScopeId) -> EvalError {
        let file = self.scope(sc).file;
        let mut names: Vec<String> = STANDARD.iter().map(|s| s.to_string()).collect();
        names.extend(self.opts.functions.names());
        // `improt(base)` is a call of an unknown function.
        names.push("import".to_string());
        if let Some(f) = self.file(file) {
            names.extend(f.ast.macros.iter().map(|m| m.name.name.to_string()));
        }
        let mut d = Diagnostic::error(format!("unknown function `{}`", call.name.name))
            .at(call.name.span)
            .with_label(if self.opts.functions.is_empty() {
                "not a standard function or a macro defined above"
            } else {
                "not a standard function, a macro defined above, or a custom function"
            });
        // A module may be missing because a directory of the function path is.
        let mut unavailable = false;
        for why in self.opts.functions.unavailable() {
            d = d.note(why);
            unavailable = true;
        }
        // A macro of that name in another file of this configuration: macros are local to
        // their file (reference §3.13), which people putting `def`s in a base do not expect.
        let key = crate::loader::macro_key(&call.name.name);
        let elsewhere = self
            .insts
            .iter()
            .flat_map(|i| i.files.iter())
            .filter(|f| **f != file)
            .find_map(|f| Some((*f, self.file(*f)?.macros.get(&*key)?.span)));
        if let Some((other, at)) = elsewhere {
            d = d
                .also(
                    at,
                    format!("a macro `{}` is defined in {}", call.name.name, self.loader_name(other)),
                )
                .note("a macro can be used only in the file that defines it, after its `def` (reference §3.13)")
                .hint("define the macro in this file too, or compute the value in the file that defines it");
        } else if let Some(s) =
            cf2_syntax::diagnostic::did_you_mean(&call.name.name, names.iter().map(|s| s.as_str()))
        {
            d = d.hint(format!("did you mean `{s}`?"));
        } else if !unavailable {
            // Nothing close (and no module missing, the likelier cause): the whole list, and
            // what a name from another language is here.
            d = d.note(format!(
                "the standard functions are {} (names are case-insensitive)",
                listed(STANDARD)
            ));
            if let Some(instead) = instead_of(FROM_OTHER_LANGUAGES, &call.name.name) {
                d = d.hint(format!(
                    "to do what `{}` does elsewhere, use {instead}",
                    call.name.name
                ));
            }
        }
        EvalError::new(d)
    }
}

impl<'a> Evaluator<'a> {
    /// The text of the file `read(name)` names, found as imports are (§3.10), confined to
    /// the allowed directories, never a protected file.
    fn read_named_file(&mut self, name: &str, file: FileId, at: Span) -> R<Val> {
        let path = self.find_file(name, file, false, at)?;
        let canonical = self.canonical(&path);
        self.refuse_protected(&canonical, || name.to_string(), at, false)?;
        let bytes = self.host.read_file(&path).map_err(|e| {
            EvalError::new(
                Diagnostic::error(format!("cannot read `{}`: {e}", path.display())).at(at),
            )
        })?;
        let text = String::from_utf8(bytes).map_err(|_| {
            EvalError::new(
                Diagnostic::error(format!("`{}` is not UTF-8 text", path.display())).at(at),
            )
        })?;
        Ok(Val::Lit(text.into()))
    }
}

/// `c` upper-cased (`up`) or lower-cased, given character by character to `each`, as Perl's
/// `uc` and `lc` map: Rust's `str::to_lowercase` also applies the Greek final-sigma rule
/// (`ΣΑΣ` to `σας`), which Perl's `lc` does not (`σασ`).
fn other_case(c: char, up: bool, each: impl FnMut(char)) {
    if up {
        c.to_uppercase().for_each(each);
    } else {
        c.to_lowercase().for_each(each);
    }
}

/// The message `fail()` or `warn()` gives for `text`, the text of `v`. An empty (or blank)
/// one would print `error:` and nothing: it says what happened instead (not for a secret,
/// where that would tell it is blank).
fn said(text: String, v: &Val, function: &str) -> String {
    if text.trim().is_empty() && !matches!(v, Val::Secret(_)) {
        format!("{function}() was called with an empty message")
    } else {
        text
    }
}
