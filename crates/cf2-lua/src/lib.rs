//! Custom CF2 functions written in Lua (reference §3.12, §4.3, §6; docs/functions.md).
//!
//! [`LuaFunctions`] is a [`FunctionProvider`] over a *function path*: the function `name`
//! is the module `NAME.lua` (file names compared case-insensitively) in the first
//! directory of the path that has one. A module returns a table:
//!
//! ```lua
//! return {
//!   proto = { "NUMBER", "NUMBER|STRING" },      -- argument types (§6.1)
//!   eval = function(args, ctx) return args[1] + 1 end,
//!   mutate = function(top, lower, ctx) ... end, -- optional: X ~(name)> value (§6.2)
//!   commutative = true,                         -- with mutate
//! }
//! ```
//!
//! Each module runs in its own Lua 5.4 state (one per compile and thread that calls it),
//! sandboxed:
//! no files, processes, network, clock or randomness ([`prelude.lua`](../src/prelude.lua)),
//! a bounded number of instructions per call and bounded memory ([`Limits`]). A module
//! that breaks a limit fails the compile with a clear error at the call instead of hanging
//! it.

mod convert;
mod pattern;

use cf2_eval::external::{
    Arg, CallContext, CompileId, Function, FunctionProvider, Mutation, ParamType, Unevaluated,
};
use cf2_value::Value;
use convert::Marks;
use mlua::chunk::ChunkMode;
use mlua::{ffi, Lua, LuaOptions, StdLib};
use std::collections::HashMap;
use std::ffi::{c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

const PRELUDE: &str = include_str!("prelude.lua");

/// How often (in Lua instructions) the instruction count is checked.
const HOOK_STEP: u32 = 1000;

/// Lua instructions that count as one step of the compile's evaluation budget
/// (`CallContext::charge`): each call is bounded by [`Limits::instructions`], and all of a
/// compile's calls together by that budget (50,000,000 steps: a billion instructions, a
/// few seconds), so that a configuration making many calls cannot run for hours.
const INSTRUCTIONS_PER_STEP: u64 = 20;

/// The limits of the sandbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Lua instructions one call may run (counting what nested calls run). Loading a module
    /// has the same allowance.
    pub instructions: u64,
    /// Bytes one module's Lua state may hold (per thread that uses it).
    pub memory: usize,
    /// The estimated worst-case number of steps a pattern match (`string.find`, `match`,
    /// `gmatch`, `gsub`, plain searches and `gsub`'s replacement text included) may take;
    /// a longer one is refused before it starts.
    pub pattern_steps: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            instructions: 100_000_000,
            memory: 64 * 1024 * 1024,
            pattern_steps: 1_000_000_000,
        }
    }
}

/// Lua modules on a function path (`-F DIR:DIR`, `CF2_FUNCTION_PATH`).
pub struct LuaFunctions {
    dirs: Vec<PathBuf>,
    /// The directories from this index on came from this environment variable (named in
    /// messages).
    from_env: Option<(usize, String)>,
    limits: Limits,
    /// Modules by lower-case name (`None`: not on the path), loaded once.
    modules: Mutex<HashMap<String, Option<Loaded>>>,
}

/// A module, or why it could not be loaded.
type Loaded = Result<Arc<LuaModule>, String>;

/// Names that standard functions and mutation functions own: a module with one of these
/// names would never be called.
fn reserved(name: &str) -> bool {
    cf2_eval::STANDARD_FUNCTIONS.contains(&name) || cf2_eval::STANDARD_MUTATORS.contains(&name)
}

impl LuaFunctions {
    /// The modules in `dirs`, searched in order.
    pub fn new(dirs: Vec<PathBuf>) -> LuaFunctions {
        LuaFunctions {
            dirs,
            from_env: None,
            limits: Limits::default(),
            modules: Mutex::new(HashMap::new()),
        }
    }

    /// The directories of a colon-separated path (`a:b:c`); empty entries are skipped.
    pub fn parse_path(path: &str) -> Vec<PathBuf> {
        path.split(':')
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .collect()
    }

    /// Adds, after the directories given, those of a path taken from the environment
    /// variable `var` (`CF2_FUNCTION_PATH`), which a message about a missing one names.
    pub fn then_from_env(mut self, var: &str, dirs: Vec<PathBuf>) -> LuaFunctions {
        self.from_env = Some((self.dirs.len(), var.to_string()));
        self.dirs.extend(dirs);
        self
    }

    pub fn with_limits(mut self, limits: Limits) -> LuaFunctions {
        self.limits = limits;
        self
    }

    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The module file for `name` (lower case): the first directory with `NAME.lua` (any
    /// case) wins; two files differing only in case in one directory are an error.
    fn find_file(&self, name: &str) -> Result<Option<PathBuf>, String> {
        let want = format!("{name}.lua");
        for dir in &self.dirs {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut found: Vec<String> = entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|f| f.to_lowercase() == want)
                .collect();
            found.sort();
            match found.as_slice() {
                [] => continue,
                [one] => return Ok(Some(dir.join(one))),
                [a, b, ..] => {
                    return Err(format!(
                        "`{}` has two modules for `{name}`: {a} and {b} (function names are case-insensitive)",
                        dir.display()
                    ))
                }
            }
        }
        // The original compiler's functions were Perl modules (reference §6): one on the
        // path is named, so that it is not taken for a missing function, and never run.
        let perl = format!("{name}.pm");
        for dir in &self.dirs {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let found = entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .find(|f| f.to_lowercase() == perl);
            if let Some(file) = found {
                return Err(format!(
                    "`{}` is a Perl module, and cf2 runs functions written in Lua: write the function as `{name}.lua` (docs/functions.md)",
                    dir.join(file).display()
                ));
            }
        }
        Ok(None)
    }
}

impl FunctionProvider for LuaFunctions {
    fn function(&self, name: &str) -> Option<Result<Arc<dyn Function>, String>> {
        let name = name.to_lowercase();
        if reserved(&name) {
            return None;
        }
        let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        let entry = modules
            .entry(name.clone())
            .or_insert_with(|| match self.find_file(&name) {
                Ok(None) => None,
                Ok(Some(path)) => Some(LuaModule::load(&name, &path, self.limits).map(Arc::new)),
                Err(e) => Some(Err(e)),
            });
        entry.clone().map(|r| r.map(|m| m as Arc<dyn Function>))
    }

    /// The directories of the path that do not exist: skipped, as `PATH`'s are, and
    /// named when a function is not found.
    fn unavailable(&self) -> Option<String> {
        let missing: Vec<(usize, &PathBuf)> = self
            .dirs
            .iter()
            .enumerate()
            .filter(|(_, d)| !d.is_dir())
            .collect();
        let shown: Vec<String> = missing
            .iter()
            .map(|(_, d)| format!("`{}`", d.display()))
            .collect();
        let (these, exist) = match shown.len() {
            0 => return None,
            1 => ("directory", "does not exist"),
            _ => ("directories", "do not exist"),
        };
        let from = match &self.from_env {
            Some((start, var)) if missing.iter().all(|(i, _)| i >= start) => {
                format!(" (from {var})")
            }
            _ => String::new(),
        };
        Some(format!(
            "the function path {these} {}{from} {exist}",
            shown.join(", ")
        ))
    }

    fn names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for dir in &self.dirs {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for e in entries.filter_map(Result::ok) {
                let file = e.file_name().to_string_lossy().to_lowercase();
                if let Some(stem) = file.strip_suffix(".lua") {
                    if !reserved(stem) && !names.iter().any(|n| n == stem) {
                        names.push(stem.to_string());
                    }
                }
            }
        }
        names
    }
}

/// Instructions spent by the current outermost call of one Lua state, and what makes the
/// current call fail whatever the module does.
struct Budget {
    used: AtomicU64,
    /// Set when the limit is reached; `pcall` then re-raises.
    spent: AtomicBool,
    /// Calls into this state in progress (a module can be re-entered through
    /// `ctx:lookup`); the count is reset only when the outermost one starts.
    depth: AtomicU32,
    limit: u64,
    /// [`Budget::exceeded_message`], for the instruction hook (which must not allocate
    /// in Rust: it leaves by a Lua error).
    exceeded: CString,
    /// The evaluator's error from `h:eval()` in the innermost call in progress: the call
    /// fails with it, and `pcall` re-raises it (docs/functions.md).
    failure: Mutex<Option<String>>,
}

impl Budget {
    fn exceeded_message(&self) -> String {
        self.exceeded.to_string_lossy().into_owned()
    }

    /// Counts `n` more instructions; true (and the budget spent) once over the limit.
    fn charge(&self, n: u64) -> bool {
        let used = self.used.fetch_add(n, Ordering::SeqCst).saturating_add(n);
        if used > self.limit {
            // Later charges must not wrap the count around.
            self.used
                .store(self.limit.saturating_add(1), Ordering::SeqCst);
            self.spent.store(true, Ordering::SeqCst);
            true
        } else {
            false
        }
    }

    fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn set_failure(&self, failure: Option<String>) -> Option<String> {
        std::mem::replace(
            &mut *self.failure.lock().unwrap_or_else(|e| e.into_inner()),
            failure,
        )
    }
}

/// The registry key of the [`Budget`] the instruction hook charges.
static BUDGET_KEY: u8 = 0;

/// The instruction hook, called every [`HOOK_STEP`] instructions. It is a plain C hook
/// rather than an mlua one because of how it leaves: mlua's hooks report an error by first
/// cutting the stack of the interrupted function (`lua_settop`), which runs the `__close`
/// metamethods of its to-be-closed variables there and then, inside the hook, where Lua
/// counts no instructions, so an endless `__close` hung the compile. This hook raises the
/// error directly; Lua then closes the variables as it unwinds, with the hook on.
unsafe extern "C-unwind" fn count_hook(l: *mut ffi::lua_State, ar: *mut ffi::lua_Debug) {
    // SAFETY: `l` and `ar` come from Lua for this hook call. The budget pointer was stored
    // by `new_state` and stays valid while the state lives (the state keeps an `Arc` of it
    // as app data). No value with a destructor is alive when `lua_error` (or an allocation
    // failure in `lua_pushfstring`) leaves this frame by `longjmp`.
    unsafe {
        ffi::lua_rawgetp(l, ffi::LUA_REGISTRYINDEX, budget_key());
        let budget = ffi::lua_touserdata(l, -1) as *const Budget;
        ffi::lua_pop(l, 1);
        let Some(b) = budget.as_ref() else {
            return;
        };
        if !b.charge(u64::from(HOOK_STEP)) {
            return;
        }
        // The place named is the module's: the first function up the stack that is not
        // the sandbox's own (the prelude wraps some library functions).
        let mut known = ffi::lua_getinfo(l, c"Sl".as_ptr(), ar) != 0;
        let mut level = 1;
        while known && CStr::from_ptr((*ar).short_src.as_ptr()).to_bytes() == SANDBOX_NAME {
            known = ffi::lua_getstack(l, level, ar) != 0
                && ffi::lua_getinfo(l, c"Sl".as_ptr(), ar) != 0;
            level += 1;
        }
        if known && (*ar).currentline >= 0 {
            ffi::lua_pushfstring(
                l,
                c"%s:%d: %s".as_ptr(),
                (*ar).short_src.as_ptr(),
                (*ar).currentline,
                b.exceeded.as_ptr(),
            );
        } else {
            ffi::lua_pushstring(l, b.exceeded.as_ptr());
        }
        ffi::lua_error(l);
    }
}

/// The prelude's name in messages (it is loaded as `=cf2 sandbox`).
const SANDBOX_NAME: &[u8] = b"cf2 sandbox";

fn budget_key() -> *const c_void {
    std::ptr::addr_of!(BUDGET_KEY).cast()
}

/// Entering a Lua state: resets the budget for an outermost call.
struct Enter<'b>(&'b Budget);

impl<'b> Enter<'b> {
    fn new(b: &'b Budget) -> Enter<'b> {
        if b.depth.fetch_add(1, Ordering::SeqCst) == 0 {
            b.used.store(0, Ordering::SeqCst);
            b.spent.store(false, Ordering::SeqCst);
        }
        Enter(b)
    }
}

impl Drop for Enter<'_> {
    fn drop(&mut self) {
        self.0.depth.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One Lua state running one module.
struct State {
    lua: Lua,
    eval: Option<mlua::Function>,
    mutate: Option<mlua::Function>,
    marks: Marks,
    budget: Arc<Budget>,
}

/// A thread's state of a module, and the compile it serves (`None`: none yet).
type ServingState = (Option<CompileId>, Arc<State>);

/// What the module's table declares.
struct Declared {
    params: Vec<ParamType>,
    mutation: Option<Mutation>,
    has_eval: bool,
}

/// A Lua module, loaded: one [`Function`].
pub struct LuaModule {
    name: String,
    /// The module file as named in messages.
    display: String,
    /// The module's code as Lua bytecode: a new state loads it without parsing it again.
    compiled: Vec<u8>,
    limits: Limits,
    params: Vec<ParamType>,
    mutation: Option<Mutation>,
    has_eval: bool,
    /// One state per thread, so that threads never wait on each other, with the compile it
    /// serves (`None`: none yet). A compile on the thread after it gets a new state, so a
    /// module's globals never carry one host's values into another's.
    states: Mutex<HashMap<ThreadId, ServingState>>,
}

impl LuaModule {
    /// Loads the module at `path` as the function `name`.
    pub fn load(name: &str, path: &Path, limits: Limits) -> Result<LuaModule, String> {
        let display = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read `{display}`: {e}"))?;
        let source =
            String::from_utf8(bytes).map_err(|_| format!("`{display}` is not UTF-8 text"))?;
        Self::from_source(name, &display, &source, limits)
    }

    /// A module from its text; `display` names it in messages.
    pub fn from_source(
        name: &str,
        display: &str,
        source: &str,
        limits: Limits,
    ) -> Result<LuaModule, String> {
        let compiled = module_bytecode(display, source, limits)?;
        let (state, declared) = new_state(display, &compiled, limits)?;
        let states = HashMap::from([(std::thread::current().id(), (None, Arc::new(state)))]);
        Ok(LuaModule {
            name: name.to_lowercase(),
            display: display.to_string(),
            compiled,
            limits,
            params: declared.params,
            mutation: declared.mutation,
            has_eval: declared.has_eval,
            states: Mutex::new(states),
        })
    }

    /// This thread's state for `compile`.
    fn state(&self, compile: CompileId) -> Result<Arc<State>, String> {
        let id = std::thread::current().id();
        let mut states = self.states.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((serves, state)) = states.get_mut(&id) {
            if serves.is_none_or(|c| c == compile) {
                *serves = Some(compile);
                return Ok(state.clone());
            }
        }
        let (state, _) = new_state(&self.display, &self.compiled, self.limits)?;
        let state = Arc::new(state);
        states.insert(id, (Some(compile), state.clone()));
        Ok(state)
    }

    /// Runs `f` in this thread's state; `f` gets the call's link to the evaluator (the
    /// `dispatch` function behind `ctx` and `NOEVAL` handles), valid only during the call.
    fn run(
        &self,
        cx: &mut dyn CallContext,
        handles: Vec<Unevaluated>,
        f: impl FnOnce(&State, mlua::Function) -> mlua::Result<mlua::Value>,
    ) -> Result<Option<Value>, String> {
        let state = self.state(cx.compile())?;
        let _enter = Enter::new(&state.budget);
        // A call re-entered through ctx:lookup has its own failure; the outer call's comes
        // back when it ends.
        let outer_failure = state.budget.set_failure(None);
        let lua = &state.lua;
        let cx = std::cell::RefCell::new(cx);
        let result = lua.scope(|scope| {
            let dispatch = scope.create_function(|lua, (op, x): (u8, mlua::Value)| {
                let mut cx = cx
                    .try_borrow_mut()
                    .map_err(|_| mlua::Error::runtime("the call's context is busy"))?;
                let text = |x: &mlua::Value| match x {
                    mlua::Value::String(s) => Some(s.to_string_lossy()),
                    _ => None,
                };
                match op {
                    // A field of ctx, read on first use.
                    0 => {
                        let field = text(&x).unwrap_or_default();
                        let loc = || cx.location();
                        Ok(match field.as_str() {
                            "name" => mlua::Value::String(lua.create_string(cx.name())?),
                            "file" => mlua::Value::String(lua.create_string(loc().file)?),
                            "line" => mlua::Value::Integer(loc().line as i64),
                            "column" => mlua::Value::Integer(loc().column as i64),
                            "resource" => match cx.resource() {
                                Some(r) => mlua::Value::String(lua.create_string(r)?),
                                None => mlua::Value::Nil,
                            },
                            _ => mlua::Value::Nil,
                        })
                    }
                    1 => {
                        let Some(path) = text(&x) else {
                            return Err(mlua::Error::runtime(
                                "ctx:lookup needs a path such as 'Web.Ports'",
                            ));
                        };
                        let v = cx.lookup(&path).map_err(mlua::Error::runtime)?;
                        state.marks.lua_value(lua, v.as_ref())
                    }
                    2 => {
                        cx.warn(&text(&x).unwrap_or_default());
                        Ok(mlua::Value::Nil)
                    }
                    3 => {
                        let i = match x {
                            mlua::Value::Integer(i) => i,
                            _ => 0,
                        };
                        let Some(h) = usize::try_from(i - 1).ok().and_then(|i| handles.get(i))
                        else {
                            return Err(mlua::Error::runtime("not an argument of this call"));
                        };
                        let v = match cx.evaluate(h) {
                            Ok(v) => v,
                            Err(e) => {
                                // The call fails with this error, caught or not.
                                if state.budget.failure().is_none() {
                                    state.budget.set_failure(Some(e.clone()));
                                }
                                return Err(mlua::Error::runtime(e));
                            }
                        };
                        state.marks.lua_value(lua, v.as_ref())
                    }
                    _ => Err(mlua::Error::runtime("unknown context operation")),
                }
            })?;
            let v = f(&state, dispatch)?;
            state.marks.result(v, self.limits.memory).map_err(|e| {
                mlua::Error::runtime(format!("{}: the function returned {e}", self.display))
            })
        });
        let failure = state.budget.set_failure(outer_failure);
        if let Some(failure) = failure {
            // The evaluator's own message, so that it reports its error as is.
            return Err(failure);
        }
        let result = result.map_err(|e| self.message(&state, &e))?;
        // The outermost call charges what it ran, nested calls through `ctx:lookup`
        // included (they count in the same budget).
        if state.budget.depth.load(Ordering::SeqCst) == 1 {
            let used = state.budget.used.load(Ordering::SeqCst);
            cx.into_inner()
                .charge(used / INSTRUCTIONS_PER_STEP)
                .map_err(|e| format!("{}: {e}", self.display))?;
        }
        Ok(result)
    }

    /// A Lua error as a message for the compile's diagnostic.
    fn message(&self, state: &State, e: &mlua::Error) -> String {
        if state.budget.spent.load(Ordering::SeqCst) {
            let m = error_text(e);
            if m.contains(&state.budget.exceeded_message()) {
                return m;
            }
            return format!("{}: {}", self.display, state.budget.exceeded_message());
        }
        match root_cause(e) {
            mlua::Error::MemoryError(_) => format!(
                "{}: the module used more than {} of memory, the limit",
                self.display,
                mebibytes(self.limits.memory)
            ),
            _ => {
                // Lua puts FILE:LINE: before a message raised in the module, but not where
                // no line is known (a tail call, an error raised by cf2 itself).
                let text = error_text(e);
                if text.starts_with(&format!("{}:", self.display)) || text.starts_with("...") {
                    text
                } else {
                    format!("{}: {text}", self.display)
                }
            }
        }
    }
}

pub(crate) fn mebibytes(bytes: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && (bytes / MIB) * MIB == bytes {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

fn root_cause(e: &mlua::Error) -> &mlua::Error {
    match e {
        mlua::Error::CallbackError { cause, .. } => root_cause(cause),
        mlua::Error::WithContext { cause, .. } => root_cause(cause),
        other => other,
    }
}

/// The message of a Lua error, without mlua's traceback.
fn error_text(e: &mlua::Error) -> String {
    let text = match root_cause(e) {
        mlua::Error::RuntimeError(m) => m.clone(),
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::MemoryError(m) => m.clone(),
        mlua::Error::ExternalError(x) => x.to_string(),
        other => other.to_string(),
    };
    let text = match text.find("\nstack traceback:") {
        Some(i) => text.get(..i).unwrap_or_default().to_string(),
        None => text,
    };
    without_addresses(&text)
}

/// `text` with Lua's `table: 0x55d0c1a2b3c0` (and the same for functions, threads and
/// userdata) written as `a table`: `error({ code = 1 })` raises a table, which Lua shows by
/// its address, and a message must not change from one run to the next (docs/functions.md:
/// nothing in the sandbox varies between runs).
fn without_addresses(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'scan: while !rest.is_empty() {
        for (kind, shown) in [
            ("table: 0x", "a table"),
            ("function: 0x", "a function"),
            ("thread: 0x", "a thread"),
            ("userdata: 0x", "a userdata"),
            ("function: builtin: 0x", "a function"),
        ] {
            if let Some(after) = rest.strip_prefix(kind) {
                let digits = after.len()
                    - after
                        .trim_start_matches(|c: char| c.is_ascii_hexdigit())
                        .len();
                if digits > 0 {
                    out.push_str(shown);
                    rest = after.get(digits..).unwrap_or_default();
                    continue 'scan;
                }
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out
}

/// Lua text compiled to bytecode without running it, in a bare state of its own whose
/// memory is bounded by `memory`: the first of `texts` that compiles.
fn bytecode(name: &str, texts: &[&str], memory: usize) -> mlua::Result<Vec<u8>> {
    let lua = Lua::new_with(StdLib::NONE, LuaOptions::new())?;
    lua.set_memory_limit(memory)?;
    let mut refused = mlua::Error::runtime("no text to compile");
    for text in texts {
        match lua
            .load(*text)
            .set_name(name)
            .set_mode(ChunkMode::Text)
            .into_function()
        {
            // Not stripped: messages keep their line numbers.
            Ok(chunk) => return Ok(chunk.dump(false)),
            Err(e) => refused = e,
        }
    }
    Err(refused)
}

/// The sandbox prelude as bytecode, compiled once per process: a state is made for every
/// compile that calls a module (a batch makes one per host), and parsing the prelude was
/// most of the cost of making one.
fn prelude_bytecode() -> Result<&'static [u8], String> {
    static COMPILED: std::sync::OnceLock<Result<Vec<u8>, String>> = std::sync::OnceLock::new();
    COMPILED
        .get_or_init(|| {
            // SANDBOX_NAME
            bytecode("=cf2 sandbox", &[PRELUDE], usize::MAX).map_err(|e| error_text(&e))
        })
        .as_ref()
        .map(Vec::as_slice)
        .map_err(|e| format!("cannot start Lua: {e}"))
}

/// A module's text as bytecode, compiled once when the module is loaded. The text is read
/// as an expression where it is one (`{ proto = ..., eval = ... }` without `return`), as
/// Lua's own interpreter reads a line.
fn module_bytecode(display: &str, source: &str, limits: Limits) -> Result<Vec<u8>, String> {
    let texts = [&format!("return {source}"), source];
    bytecode(&format!("@{display}"), &texts, limits.memory).map_err(|e| {
        if let mlua::Error::MemoryError(_) = root_cause(&e) {
            format!(
                "{display}: the module used more than {} of memory while loading, the limit",
                mebibytes(limits.memory)
            )
        } else {
            error_text(&e)
        }
    })
}

/// A new sandboxed state with the module (its bytecode) loaded, and what it declares.
fn new_state(display: &str, module: &[u8], limits: Limits) -> Result<(State, Declared), String> {
    let fail = |e: mlua::Error| format!("cannot start Lua for `{display}`: {}", error_text(&e));
    let lua = Lua::new_with(
        StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::UTF8,
        LuaOptions::new(),
    )
    .map_err(fail)?;
    let exceeded = format!(
        "the function ran for more than {} Lua instructions, the limit (an endless loop?)",
        limits.instructions
    );
    let budget = Arc::new(Budget {
        used: AtomicU64::new(0),
        spent: AtomicBool::new(false),
        depth: AtomicU32::new(0),
        limit: limits.instructions,
        exceeded: CString::new(exceeded).map_err(|e| fail(mlua::Error::runtime(e)))?,
        failure: Mutex::new(None),
    });
    let _enter = Enter::new(&budget);
    lua.set_app_data(budget.clone());
    let budget_ptr = Arc::as_ptr(&budget) as *mut c_void;
    // SAFETY: the closure only stores a light userdata in the registry and sets the hook;
    // `exec_raw` runs it protected, so a Lua error in it becomes an `Err`.
    unsafe {
        lua.exec_raw::<()>((), |l| {
            ffi::lua_pushlightuserdata(l, budget_ptr);
            ffi::lua_rawsetp(l, ffi::LUA_REGISTRYINDEX, budget_key());
            ffi::lua_sethook(l, Some(count_hook), ffi::LUA_MASKCOUNT, HOOK_STEP as c_int);
        })
    }
    .map_err(fail)?;
    // What the prelude's pcall and xpcall re-raise: the instruction limit, once spent, and
    // the evaluator's error from `h:eval()` in this call. `caught` is the error the pcall
    // caught: when it is that same error with the module's file and line in front, it is
    // re-raised as it is (`true`: it has its place), so that the message keeps its place.
    let check_budget = budget.clone();
    let fatal_check = lua
        .create_function(move |_, caught: mlua::Value| {
            let fatal = if check_budget.spent.load(Ordering::SeqCst) {
                check_budget.exceeded_message()
            } else {
                match check_budget.failure() {
                    Some(failure) => failure,
                    None => return Ok((None, false)),
                }
            };
            let placed = match caught {
                mlua::Value::String(c) => Some(c.to_string_lossy()),
                _ => None,
            }
            .filter(|c| c.len() > fatal.len() && c.ends_with(fatal.as_str()));
            Ok(match placed {
                Some(placed) => (Some(placed), true),
                None => (Some(fatal), false),
            })
        })
        .map_err(fail)?;
    let fatal_budget = budget.clone();
    let fatal = lua
        .create_function(move |_, ()| {
            Ok(fatal_budget.spent.load(Ordering::SeqCst) || fatal_budget.failure().is_some())
        })
        .map_err(fail)?;
    // Work a library function does in C, where the hook cannot count it, charged before it
    // starts: the message if that spends the budget (the prelude raises it in the caller).
    let charge_budget = budget.clone();
    let charge = lua
        .create_function(move |_, n: mlua::Integer| {
            let n = u64::try_from(n).unwrap_or(0);
            Ok(charge_budget
                .charge(n)
                .then(|| charge_budget.exceeded_message()))
        })
        .map_err(fail)?;
    let max_steps = limits.pattern_steps;
    let pattern_check = lua
        .create_function(
            move |_, (s, p, r, plain): (mlua::Value, mlua::Value, mlua::Value, bool)| {
                // The message, if the match is refused (the prelude raises it in the caller).
                let (mlua::Value::String(s), mlua::Value::String(p)) = (&s, &p) else {
                    return Ok(None);
                };
                let (text, pat) = (s.as_bytes(), p.as_bytes());
                let mut steps = if plain {
                    pattern::plain_cost(text.len(), pat.len())
                } else {
                    pattern::cost(&text, &pat)
                };
                // gsub reads a replacement text at every match (`%0` copies nothing when
                // the match is empty), and there can be a match at every position.
                if let mlua::Value::String(r) = &r {
                    let per_match = r.as_bytes().len() as u64;
                    steps = steps.saturating_add((text.len() as u64 + 1).saturating_mul(per_match));
                }
                if steps <= max_steps {
                    return Ok(None);
                }
                // A sought text can be long: the message shows its start.
                let p = p.to_string_lossy();
                let shown: String = p.chars().take(40).collect();
                let more = if shown.len() < p.len() { "..." } else { "" };
                Ok(Some(format!(
                    "the pattern '{shown}{more}' could take too long on text of {} bytes: refused (at most {max_steps} steps)",
                    text.len()
                )))
            },
        )
        .map_err(fail)?;
    let marks: mlua::Table = lua
        .load(prelude_bytecode()?)
        .set_name("=cf2 sandbox") // SANDBOX_NAME
        .set_mode(ChunkMode::Binary)
        .call((fatal_check, fatal, charge, pattern_check))
        .map_err(fail)?;
    let marks = Marks::new(&marks).map_err(fail)?;
    lua.set_memory_limit(limits.memory).map_err(fail)?;

    let module: mlua::Value = lua
        .load(module)
        .set_name(format!("@{display}"))
        .set_mode(ChunkMode::Binary)
        .call(())
        .map_err(|e| {
            if budget.spent.load(Ordering::SeqCst) {
                format!("{display}: {} while loading", budget.exceeded_message())
            } else if let mlua::Error::MemoryError(_) = root_cause(&e) {
                format!(
                    "{display}: the module used more than {} of memory while loading, the limit",
                    mebibytes(limits.memory)
                )
            } else {
                error_text(&e)
            }
        })?;
    let (declared, eval, mutate) = declare(display, module)?;
    drop(_enter);
    Ok((
        State {
            lua,
            eval,
            mutate,
            marks,
            budget,
        },
        declared,
    ))
}

const FIELDS: &str = "proto, eval, mutate, commutative, description";

/// Reads and checks the table a module returns.
fn declare(
    display: &str,
    module: mlua::Value,
) -> Result<(Declared, Option<mlua::Function>, Option<mlua::Function>), String> {
    let mlua::Value::Table(t) = module else {
        return Err(format!(
            "{display}: the module must return a table with `proto` and `eval` (see docs/functions.md), not {}",
            module.type_name()
        ));
    };
    let err = |m: String| format!("{display}: {m}");
    for pair in t.pairs::<mlua::Value, mlua::Value>() {
        let (k, _) = pair.map_err(|e| err(error_text(&e)))?;
        let key = match &k {
            mlua::Value::String(s) => s.to_string_lossy(),
            other => format!("{other:?}"),
        };
        if !FIELDS.split(", ").any(|f| f == key) {
            return Err(err(format!(
                "the module's table has an unknown field `{key}` (expected {FIELDS})"
            )));
        }
    }
    let function = |field: &str| -> Result<Option<mlua::Function>, String> {
        match t
            .raw_get::<mlua::Value>(field)
            .map_err(|e| err(error_text(&e)))?
        {
            mlua::Value::Nil => Ok(None),
            mlua::Value::Function(f) => Ok(Some(f)),
            other => Err(err(format!(
                "`{field}` must be a function, not {}",
                other.type_name()
            ))),
        }
    };
    let eval = function("eval")?;
    let mutate = function("mutate")?;
    if eval.is_none() && mutate.is_none() {
        return Err(err(
            "the module defines neither `eval` nor `mutate`".to_string()
        ));
    }
    let mut params = Vec::new();
    match t.raw_get::<mlua::Value>("proto").map_err(|e| err(error_text(&e)))? {
        mlua::Value::Nil if eval.is_some() => {
            return Err(err(
                "the module has no `proto` (the argument types, e.g. proto = { \"NUMBER\", \"NUMBER\" })"
                    .to_string(),
            ))
        }
        mlua::Value::Nil => {}
        mlua::Value::Table(p) => {
            let n = p.raw_len();
            for i in 1..=n {
                let v: mlua::Value = p.raw_get(i).map_err(|e| err(error_text(&e)))?;
                let mlua::Value::String(s) = v else {
                    return Err(err(format!(
                        "`proto[{i}]` must be text such as \"NUMBER|STRING\", not {}",
                        v.type_name()
                    )));
                };
                let ty = ParamType::parse(&s.to_string_lossy())
                    .map_err(|m| err(format!("`proto[{i}]`: {m}")))?;
                params.push(ty);
            }
            if p.pairs::<mlua::Value, mlua::Value>().count() != n {
                return Err(err(
                    "`proto` must be a list of argument types".to_string()
                ));
            }
        }
        other => {
            return Err(err(format!(
                "`proto` must be a list of argument types, not {}",
                other.type_name()
            )))
        }
    }
    let commutative = match t
        .raw_get::<mlua::Value>("commutative")
        .map_err(|e| err(error_text(&e)))?
    {
        mlua::Value::Nil => false,
        mlua::Value::Boolean(b) => b,
        other => {
            return Err(err(format!(
                "`commutative` must be true or false, not {}",
                other.type_name()
            )))
        }
    };
    if commutative && mutate.is_none() {
        return Err(err(
            "`commutative` is set but the module has no `mutate` function".to_string(),
        ));
    }
    let declared = Declared {
        params,
        mutation: mutate.as_ref().map(|_| Mutation { commutative }),
        has_eval: eval.is_some(),
    };
    Ok((declared, eval, mutate))
}

impl Function for LuaModule {
    fn name(&self) -> &str {
        &self.name
    }

    fn params(&self) -> &[ParamType] {
        &self.params
    }

    fn callable(&self) -> bool {
        self.has_eval
    }

    fn call(&self, cx: &mut dyn CallContext, args: Vec<Arg>) -> Result<Option<Value>, String> {
        let handles: Vec<Unevaluated> = args
            .iter()
            .filter_map(|a| match a {
                Arg::Unevaluated(u) => Some(u.clone()),
                Arg::Value(_) => None,
            })
            .collect();
        self.run(cx, handles, |state, dispatch| {
            let lua = &state.lua;
            let t = lua.create_table_with_capacity(args.len(), 2)?;
            let types = lua.create_table_with_capacity(args.len(), 0)?;
            let mut handle = 0;
            for (i, a) in args.iter().enumerate() {
                let (v, kind) = match a {
                    Arg::Value(v) => (
                        state.marks.lua_value(lua, v.as_ref())?,
                        v.as_ref().map(Value::type_name).unwrap_or("undef"),
                    ),
                    Arg::Unevaluated(u) => {
                        handle += 1;
                        let h = lua.create_table_with_capacity(0, 8)?;
                        h.raw_set("index", handle)?;
                        h.raw_set("argument", u.index + 1)?;
                        h.raw_set("kind", u.kind)?;
                        h.raw_set("source", u.source.as_str())?;
                        h.raw_set("file", u.location.file.as_str())?;
                        h.raw_set("line", u.location.line)?;
                        h.raw_set("column", u.location.column)?;
                        h.raw_set("_d", &dispatch)?;
                        h.set_metatable(Some(state.marks.arg.clone()))?;
                        (mlua::Value::Table(h), "unevaluated")
                    }
                };
                t.raw_set(i + 1, v)?;
                types.raw_set(i + 1, kind)?;
            }
            t.raw_set("n", args.len())?;
            t.raw_set("types", types)?;
            let result = match &state.eval {
                Some(f) => state.marks.call_eval.call((f, dispatch, t))?,
                None => mlua::Value::Nil,
            };
            // Reference §6.1: the result may be "an AST node". A NOEVAL argument's handle
            // returned as it is gives its value, evaluated while the call's link to the
            // evaluator is still valid.
            match &result {
                mlua::Value::Table(h)
                    if h.metatable()
                        .is_some_and(|m| convert::same(&m, &state.marks.arg)) =>
                {
                    let eval: mlua::Function = h.get("eval")?;
                    eval.call(h)
                }
                _ => Ok(result),
            }
        })
    }

    fn mutation(&self) -> Option<Mutation> {
        self.mutation
    }

    fn mutate(
        &self,
        cx: &mut dyn CallContext,
        top: Vec<Value>,
        lower: Option<Value>,
    ) -> Result<Option<Value>, String> {
        self.run(cx, Vec::new(), |state, dispatch| {
            let lua = &state.lua;
            let list = state.marks.lua_value(lua, Some(&Value::List(top)))?;
            let lower = state.marks.lua_value(lua, lower.as_ref())?;
            match &state.mutate {
                Some(f) => state.marks.call_mutate.call((f, dispatch, list, lower)),
                None => Ok(mlua::Value::Nil),
            }
        })
    }

    fn origin(&self) -> String {
        self.display.clone()
    }
}
