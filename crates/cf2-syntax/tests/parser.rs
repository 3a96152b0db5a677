//! Tests of the lexer and parser: every construct, the reference's examples, precedence,
//! newline rules, error messages and recovery, and robustness.

use cf2_syntax::ast::*;
use cf2_syntax::{parse, Diagnostic, FileId, MAX_NESTING};

// ----- helpers -----------------------------------------------------------------------------

/// Parses and returns the file, panicking (in the test) with the messages if there are
/// diagnostics.
fn ok(src: &str) -> File {
    let (file, diags) = parse(FileId(0), src);
    assert!(
        diags.is_empty(),
        "unexpected diagnostics for {src:?}:\n{}",
        diags
            .iter()
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
            .join("\n")
    );
    file
}

/// The messages of the diagnostics.
fn errs(src: &str) -> Vec<String> {
    let (_, diags) = parse(FileId(0), src);
    diags.into_iter().map(|d| d.message).collect()
}

fn diags(src: &str) -> Vec<Diagnostic> {
    parse(FileId(0), src).1
}

/// A compact rendering of an expression.
fn sx(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Literal(s) => format!("'{s}'"),
        ExprKind::String(parts) => format!("\"{}\"", parts_sx(parts)),
        ExprKind::Number(Number::Int(i)) => i.to_string(),
        ExprKind::Number(Number::Float(f)) => format!("{f:?}"),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Regex(parts) => format!("/{}/", parts_sx(parts)),
        ExprKind::Undef => "?".into(),
        ExprKind::List(items) => {
            format!("[{}]", items.iter().map(sx).collect::<Vec<_>>().join(" "))
        }
        ExprKind::Block(stmts) => format!(
            "{{{}}}",
            stmts.iter().map(stmt_sx).collect::<Vec<_>>().join("; ")
        ),
        ExprKind::Ref(i) => format!("${}", i.name),
        ExprKind::Select(a, b) => format!("(. {} {})", sx(a), sx(b)),
        ExprKind::Unary(op, a) => format!("({} {})", op.symbol(), sx(a)),
        ExprKind::Binary(op, a, b) => format!("({} {} {})", op.symbol(), sx(a), sx(b)),
        ExprKind::If(i) => if_sx(i),
        ExprKind::Call(c) => call_sx(c),
        ExprKind::Import(i) => import_sx(i),
        ExprKind::Error => "ERROR".into(),
    }
}

fn parts_sx(parts: &[Part]) -> String {
    parts
        .iter()
        .map(|p| match p {
            Part::Text(t) => t.clone(),
            Part::Interp(e) => format!("${{{}}}", sx(e)),
        })
        .collect()
}

fn if_sx(i: &If) -> String {
    match &i.otherwise {
        Some(e) => format!("(if {} {} {})", sx(&i.cond), sx(&i.then), sx(e)),
        None => format!("(if {} {})", sx(&i.cond), sx(&i.then)),
    }
}

fn call_sx(c: &Call) -> String {
    let args: Vec<String> = c.args.iter().map(sx).collect();
    format!("{}({})", c.name.name, args.join(" "))
}

fn import_sx(i: &Import) -> String {
    match &i.signers {
        Some(s) => format!("import({} {})", sx(&i.path), sx(s)),
        None => format!("import({})", sx(&i.path)),
    }
}

fn stmt_sx(s: &Statement) -> String {
    match s {
        Statement::Resource(r) => {
            let path: Vec<&str> = r.path.iter().map(|i| &*i.name).collect();
            let muts: Vec<String> = r
                .mutations
                .iter()
                .map(|m| {
                    let op = match &m.op {
                        MutationOp::Assign => "=>".to_string(),
                        MutationOp::Merge => "~>".to_string(),
                        MutationOp::Function(f) => format!("~({})>", f.name),
                    };
                    format!("{op} {}", sx(&m.value))
                })
                .collect();
            format!(
                "{}{} {}",
                if r.private { "private " } else { "" },
                path.join("."),
                muts.join(" ")
            )
        }
        Statement::Import(i) => import_sx(i),
        Statement::If(i) => if_sx(i),
        Statement::Call(c) => call_sx(c),
        Statement::Macro(m) => {
            let params: Vec<&str> = m.params.iter().map(|i| &*i.name).collect();
            format!(
                "def {}({}) = {}",
                m.name.name,
                params.join(" "),
                sx(&m.body)
            )
        }
    }
}

/// All statements of a file, rendered, one per line.
fn file_sx(src: &str) -> String {
    ok(src)
        .statements
        .iter()
        .map(stmt_sx)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The value of `X => ...`.
fn val(expr: &str) -> String {
    let src = format!("X => {expr}");
    let f = ok(&src);
    match f.statements.as_slice() {
        [Statement::Resource(r)] if r.mutations.len() == 1 => sx(&r.mutations[0].value),
        _ => panic!("not a single resource: {src:?}"),
    }
}

fn text_of(src: &str, span: cf2_syntax::Span) -> &str {
    &src[span.start as usize..span.end as usize]
}

// ----- quick smoke ---------------------------------------------------------------------------

#[test]
fn smoke() {
    assert_eq!(file_sx("X => 1"), "X => 1");
}

// ----- the reference's examples (§3 and §4), copied verbatim ------------------------------
// Examples that stand for elided content with `...` have `...` replaced by `x` (`...` is not
// CF2). The "compiles to" outputs are included: they are CF2 too.

const REFERENCE_EXAMPLES: &[&str] = &[
    // §3
    "Directory => '/home/foo'\nUID => 37\n",
    "// this is a comment\n// comments are ignored\nSize => 123 // disk size\n",
    // §3.1
    "String1 => \"two\\nlines\"\nString2 => \"${Literal2} is simple\"\nLiteral1 => 'a literal'\nLiteral2 => simple123\n",
    "OneTwoThree => 123\nDecimal => -45.67\n",
    "X => '1' > '02'\nY => 1 > 02\n",
    "X => true\nY => false\n",
    "X => true || false\nY => 'true' || 'false'\n",
    "RE1 => /ab*/\nString1 => 'ab*'\nRE2 => /x,${RE1},${String1}/\n",
    "RE1 => /ab*/\nString1 => 'ab*'\nRE2 => /x,ab*,ab\\*/\n",
    // §3.2
    "PathName => ?\n",
    // §3.3
    "Users => [john,jane]\nMixed => [3,[4,x],'foo bar']\n",
    // §3.4
    "MailService => {\n  Port => 25\n  Packages => [ sendmail ]\n}\n",
    "Users => {\n  Students => {\n    John => {\n      UID => 123\n    }\n  }\n}\n",
    "Users.Students.John.UID => 123\n",
    // §3.5
    "Domain => 'foo.com'\nWebDomain => $Domain\n",
    // §3.6
    "Ports => {\n  http => 80\n  ssl => 443\n}\nSSLPort => $Ports.ssl\n",
    "Ports => [ 80, 443 ]\nFirstPort => $Ports.0\n",
    "Lists => [ [1,2], [3,4,5] ]\nTwo => $Lists.(0).1\n",
    // §3.7
    "Port => 25\nMemory => 6\nCPU => slow\nTCPPort => $Port ++ '/tcp'\nBigMachine => $Memory>4 && $CPU==fast\n",
    // §3.8
    "BigMachine => true\nStandardSize => 50\nSize => if ($BigMachine)\n  then $StandardSize+100\n  else $StandardSize\n",
    "Type => server\nif ($Type == server)\n  then { Foo => 'something' }\n  else { Bar => 'something else' }\n",
    "Type => server\nFoo => something\n",
    // §3.9
    "Addr => '129.215.45.12'\nif ($Addr !~ /\\d+\\.\\d+\\.\\d+\\.\\d+$/)\nthen fail( \"invalid: ${Addr}\" )\n",
    "Date => '2/11/23'\nBlock =>\n  if ($Date=~/^(\\d+)\\.(\\d+)\\.(\\d+)/)\n  then {\n    Day => match(1)\n    Month => match(2)\n    Year => 2000 + match(3)\n  } else fail(\"invalid date: ${Date}\")\n",
    "Date => '2/11/23'\nBlock => {\n  Day => 2\n  Month => 11\n  Year => 2023\n}\n",
    "Date => '2/11/23'\nValid => $Date=~/^(\\d+)\\.(\\d+)\\.(\\d+)/\nMonth => match(1)\n",
    // §3.10
    "I => import(f1)\n",
    "Y => 3\nZ => 4\n",
    "I => {\n  Y => 3\n  Z => 4\n}\n",
    "File => 'f1'\nimport($File)\n",
    "File => f1\nY => 3\nZ => 4\n",
    // §3.11
    "private BigBlock => import(bigfile)\nv => $BigBlock.Res\n",
    // §3.12
    "private V => [a,b]\nT => upcase(typeof($V))\n",
    // §3.13
    "private Root => '/home/cf2'\ndef fullPath(x) = $Root ++ '/' ++ $x\nTestPath => fullPath(test)\nLivePath => fullPath(live)\n",
    "TestPath => '/home/cf2/test'\nLivePath => '/home/cf2/live'\n",
    // §4.1
    "import (f1)\nX => 1\nY => 2\n",
    "Y => 2\nZ => 4\nX => 1\n",
    "import (f2)\nX => 1\nY => { A=>10, B=>20 }\n",
    "Y => { A=>30, C=>40 }\nZ => 5\n",
    "Y => {\n  A => 10\n  B => 20\n}\nZ => 5\nX => 1\n",
    // §4.2
    "import (f2)\nX ~> 1\nY ~> { A=>10, B=>20 }\n",
    "Y => {\n  A => 10\n  C => 40\n  B => 20\n}\nZ => 5\nX => 1\n",
    // §4.3
    "import (f1)\nY ~ (max) > 2\nZ ~ (max) > 5\n",
    "Y => 3\nZ => 5\n",
    "import (f3)\nimport (f4)\n",
    "X ~ (sum) > 4\n",
    "X ~ (sum) > 3\n",
    "X => 7\n",
    // §4.4
    "Services => {\n  import (database)\n  import (webserver)\n}\n",
    "OsVersion => 23\nMoreDBResources => x\n",
    "OsVersion => 24\nMoreWebResources => x\n",
    "Services => {\n  OsVersion => 27\n  import (database)\n  import (webserver)\n}\n",
    "Services => {\n  OsVersion => 27\n  MoreDBResources => x\n  MoreWebResources => x\n}\n",
    "Services => {\n  import (database2)\n  import (webserver2)\n}\n",
    "OsVersion ~ (max) > 23\nMoreDBResources => x\n",
    "OsVersion ~ (max) > 24\nMoreWebResources => x\n",
    "Services => {\n  OsVersion => 24\n  MoreDBResources => x\n  MoreWebResources => x\n}\n",
    "Services => {\n  OsVersion => $Services.WebOsVersion\n  import(database3)\n  import(webserver3)\n}\n",
    "private DBOsVersion => 23\nOsVersion => $DBOsVersion\nMoreDBResources => x\n",
    "private WebOsVersion => 24\nOsVersion => $WebOsVersion\nMoreWebResources => x\n",
    "private VW => $Services.WebOsVersion\nprivate VD => $Services.DBOsVersion\nif ($VW != $VD) then {\n  warn('Mismatch '++$VW++' <> '++$VD)\n  private V => max([$VW, $VD])\n} else {\n  private V => $vw\n}\n\nServices => {\n  OsVersion => $V\n  import(database3)\n  import(webserver3)\n}\n",
    // §5 (CF2 fragments)
    "import (delegated)\n",
    "Login.Colour => green\n",
    "RootUsers ~> { jane=>x, john=>x }\nimport (delegated2)\n",
    "Login.Colour => green\nRootUsers ~> { hacker => x }\n",
    "RootUsers => {\n  hacker => x\n  jane => x\n  john => x\n}\nLogin => { Colour => green }\n",
    "RootUsers ~> { jane=>x, john=>x }\nprivate Delegated => import (delegated2)\nLogin.Colour => $Delegated.Login.Colour\n",
    "private MyPwds => import ('mydb.kdbx')\nFredspwd => $MyPwds.fred.Password\n",
    "entry★1 => {\n  Notes => ''\n  Password => 'secret'\n  Title => entry-1\n  URL => ''\n  UserName => mary\n  MyCustom => 'my value'\n}\n",
    "import (f1, ['user1@org', 'user2@org'])\nimport (f2, 'user@org')\n",
];

#[test]
fn reference_examples_parse_without_diagnostics() {
    for src in REFERENCE_EXAMPLES {
        ok(src);
    }
}

#[test]
fn reference_examples_have_the_expected_shape() {
    assert_eq!(
        file_sx(REFERENCE_EXAMPLES[19]),
        "BigMachine => true\nStandardSize => 50\nSize => (if $BigMachine (+ $StandardSize 100) $StandardSize)"
    );
    assert_eq!(
        file_sx(REFERENCE_EXAMPLES[23]),
        "Date => '2/11/23'\nBlock => (if (=~ $Date /^(\\d+)\\.(\\d+)\\.(\\d+)/) \
         {Day => match(1); Month => match(2); Year => (+ 2000 match(3))} fail(\"invalid date: ${$Date}\"))"
    );
    assert_eq!(
        file_sx(REFERENCE_EXAMPLES[22]),
        "Addr => '129.215.45.12'\n(if (!~ $Addr /\\d+\\.\\d+\\.\\d+\\.\\d+$/) fail(\"invalid: ${$Addr}\"))"
    );
    assert_eq!(
        file_sx(REFERENCE_EXAMPLES[17]),
        "Lists => [[1 2] [3 4 5]]\nTwo => (. (. $Lists 0) 1)"
    );
    assert_eq!(
        file_sx(REFERENCE_EXAMPLES[33]),
        "private Root => '/home/cf2'\ndef fullPath(x) = (++ (++ $Root '/') $x)\n\
         TestPath => fullPath('test')\nLivePath => fullPath('live')"
    );
    assert_eq!(
        file_sx("import (f1)\nY ~ (max) > 2\nZ ~ (max) > 5\n"),
        "import('f1')\nY ~(max)> 2\nZ ~(max)> 5"
    );
    assert_eq!(file_sx("Decimal => -45.67"), "Decimal => -45.67");
    assert_eq!(
        file_sx("import (f1, ['user1@org', 'user2@org'])"),
        "import('f1' ['user1@org' 'user2@org'])"
    );
}

// ----- constructs ------------------------------------------------------------------------------

#[test]
fn scalars() {
    assert_eq!(val("simple123"), "'simple123'");
    assert_eq!(val("entry-1"), "'entry-1'");
    assert_eq!(val("foo-bar-baz"), "'foo-bar-baz'");
    assert_eq!(val("_under"), "'_under'");
    assert_eq!(val("Ünïcödé★"), "'Ünïcödé★'");
    assert_eq!(val("'a literal'"), "'a literal'");
    assert_eq!(val("true"), "true");
    assert_eq!(val("false"), "false");
    assert_eq!(val("123"), "123");
    assert_eq!(val("02"), "2");
    assert_eq!(val("1.50"), "1.5");
    assert_eq!(val("-45.67"), "-45.67");
    assert_eq!(val("?"), "?");
    assert_eq!(val("/ab*/"), "/ab*/");
    assert_eq!(val("\"two\\nlines\""), "\"two\nlines\"");
}

#[test]
fn numbers_fit_in_i64_or_are_errors() {
    assert_eq!(val("9223372036854775807"), "9223372036854775807");
    assert_eq!(val("-9223372036854775808"), "-9223372036854775808");
    assert!(matches!(
        ok("X => -9223372036854775808").statements[0],
        Statement::Resource(ref r) if r.mutations[0].value.kind == ExprKind::Number(Number::Int(i64::MIN))
    ));
    assert_eq!(
        errs("X => 9223372036854775808"),
        ["number too large: `9223372036854775808`"]
    );
    assert_eq!(
        errs("X => -9223372036854775809"),
        ["number too large: `-9223372036854775809`"]
    );
    let big = format!("X => {}.5", "9".repeat(400));
    assert_eq!(errs(&big).len(), 1);
    // A negative literal is folded, but `-` before a selection stays an operator.
    assert_eq!(val("- 5"), "-5");
    assert_eq!(val("--5"), "(- -5)");
    assert_eq!(val("-$x"), "(- $x)");
    assert_eq!(val("-(5)"), "(- 5)");
    assert_eq!(val("-5.a"), "(- (. 5 'a'))");
    assert_eq!(val("3-5"), "(- 3 5)");
    assert_eq!(val("3 - -5"), "(- 3 -5)");
    match &ok("Decimal => -45.67").statements[0] {
        Statement::Resource(r) => {
            assert_eq!(
                r.mutations[0].value.kind,
                ExprKind::Number(Number::Float(-45.67))
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn references_and_selectors() {
    assert_eq!(val("$Domain"), "$Domain");
    assert_eq!(val("$X-1"), "(- $X 1)");
    assert_eq!(val("$Ports.ssl"), "(. $Ports 'ssl')");
    assert_eq!(val("$Ports.0"), "(. $Ports 0)");
    assert_eq!(val("$Lists.(0).1"), "(. (. $Lists 0) 1)");
    assert_eq!(val("$a.b.c"), "(. (. $a 'b') 'c')");
    assert_eq!(val("$a.$k"), "(. $a $k)");
    assert_eq!(val("$a.($k ++ x)"), "(. $a (++ $k 'x'))");
    assert_eq!(val("$a.'two words'"), "(. $a 'two words')");
    // In a selector a word ends at `-`.
    assert_eq!(val("$a.b-1"), "(- (. $a 'b') 1)");
    assert_eq!(val("{ A => 1 }.A"), "(. {A => 1} 'A')");
    assert_eq!(val("[1, 2].0"), "(. [1 2] 0)");
    assert_eq!(val("import(f).Res"), "(. import('f') 'Res')");
    assert_eq!(val("$a . b"), "(. $a 'b')");
    assert_eq!(val("$a.\n  b"), "(. $a 'b')");
    assert_eq!(val("$a\n  .b"), "(. $a 'b')");
}

#[test]
fn lists_and_blocks() {
    assert_eq!(val("[]"), "[]");
    assert_eq!(val("[john,jane]"), "['john' 'jane']");
    assert_eq!(val("[3,[4,x],'foo bar']"), "[3 [4 'x'] 'foo bar']");
    assert_eq!(val("[\n  a\n  b, c,\n\n  d,\n]"), "['a' 'b' 'c' 'd']");
    assert_eq!(val("[,, a ,, b ,,]"), "['a' 'b']");
    assert_eq!(val("{}"), "{}");
    assert_eq!(val("{ A=>10, B=>20 }"), "{A => 10; B => 20}");
    assert_eq!(val("{\n\n  A => 1,\n\n  ,B => 2\n\n}"), "{A => 1; B => 2}");
    assert_eq!(
        val("{ import(f)\n if ($a) then { B => 1 }\n warn(x)\n def m(a) = $a\n private C.D => 2 }"),
        "{import('f'); (if $a {B => 1}); warn('x'); def m(a) = $a; private C.D => 2}"
    );
}

#[test]
fn statements() {
    assert_eq!(
        file_sx("private private A.B.C => 1\nimport(f)\nimport(f, s)\nwarn('x')\nfail (x)\ndef f() = 1\ndef g(a, b\n c) = $a"),
        "private A.B.C => 1\nimport('f')\nimport('f' 's')\nwarn('x')\nfail('x')\ndef f() = 1\ndef g(a b c) = $a"
    );
    assert_eq!(file_sx("X => 1 ~(max)> 2"), "X => 1 ~(max)> 2");
    assert_eq!(file_sx("X ~(sum)> 2"), "X ~(sum)> 2");
    assert_eq!(file_sx("X ~ ( sum ) > 2"), "X ~(sum)> 2");
    assert_eq!(
        file_sx("X => 1 ~> { A => 1 } => 3"),
        "X => 1 ~> {A => 1} => 3"
    );
    assert_eq!(
        file_sx("X => 1\n  ~(max)> 2\n  => 3"),
        "X => 1 ~(max)> 2 => 3"
    );
    assert_eq!(file_sx("X\n  => 1"), "X => 1");
    assert_eq!(
        file_sx("Width => 4, Height => 5"),
        "Width => 4\nHeight => 5"
    );
    assert_eq!(file_sx("\n\n,, A => 1,,\n\n B => 2 ,\n"), "A => 1\nB => 2");
    assert_eq!(file_sx(""), "");
    assert_eq!(file_sx("// only a comment"), "");
    assert_eq!(file_sx("\u{feff}A => 1"), "A => 1");
    assert_eq!(file_sx("A => 1\r\nB => 2\r\n"), "A => 1\nB => 2");
    // A resource name that is also a function name, followed by a mutation.
    assert_eq!(file_sx("max => 1"), "max => 1");
    assert_eq!(file_sx("def f(x) =\n  $x"), "def f(x) = $x");
}

#[test]
fn calls() {
    assert_eq!(val("f()"), "f()");
    assert_eq!(val("upcase(typeof($V))"), "upcase(typeof($V))");
    assert_eq!(val("join(',', [a, b])"), "join(',' ['a' 'b'])");
    assert_eq!(val("max(\n  1\n  2,\n  3\n)"), "max(1 2 3)");
    assert_eq!(val("f (1)"), "f(1)");
    assert_eq!(val("f(1\n + 2)"), "f((+ 1 2))");
    assert_eq!(val("f(a\n -1)"), "f('a' -1)");
}

#[test]
fn conditionals() {
    assert_eq!(val("if ($a) then 1"), "(if $a 1)");
    assert_eq!(val("if ($a) then 1 else 2"), "(if $a 1 2)");
    assert_eq!(
        val("if ($a) then if ($b) then 1 else 2"),
        "(if $a (if $b 1 2))"
    );
    assert_eq!(
        val("if ($a) then 1 else if ($b) then 2 else 3"),
        "(if $a 1 (if $b 2 3))"
    );
    assert_eq!(val("if ($a) then 1 else 2 + 3"), "(if $a 1 (+ 2 3))");
    assert_eq!(val("1 + if ($a) then 2 else 3"), "(+ 1 (if $a 2 3))");
    assert_eq!(val("if\n($a)\nthen\n1\nelse\n2"), "(if $a 1 2)");
    assert_eq!(val("if (\n  $a &&\n  $b\n) then 1"), "(if (&& $a $b) 1)");
    assert_eq!(val("(if ($a)\n then 1\n else 2)"), "(if $a 1 2)");
    assert_eq!(val("[if ($a) then 1\n else 2, 3]"), "[(if $a 1 2) 3]");
}

// ----- precedence (clarifications §1) --------------------------------------------------------

#[test]
fn precedence_table() {
    assert_eq!(val("a || b && c"), "(|| 'a' (&& 'b' 'c'))");
    assert_eq!(val("a && b || c"), "(|| (&& 'a' 'b') 'c')");
    assert_eq!(val("a || b || c"), "(|| (|| 'a' 'b') 'c')");
    assert_eq!(val("a && b == c"), "(&& 'a' (== 'b' 'c'))");
    assert_eq!(val("a == b && c != d"), "(&& (== 'a' 'b') (!= 'c' 'd'))");
    for op in ["<", "<=", "==", "!=", ">=", ">"] {
        assert_eq!(
            val(&format!("a {op} b ++ c")),
            format!("({op} 'a' (++ 'b' 'c'))")
        );
    }
    assert_eq!(val("a < b =~ /x/"), "(< 'a' (=~ 'b' /x/))");
    assert_eq!(val("a =~ /x/ == true"), "(== (=~ 'a' /x/) true)");
    assert_eq!(val("a ++ b =~ /x/"), "(=~ (++ 'a' 'b') /x/)");
    assert_eq!(val("$a !~ $re"), "(!~ $a $re)");
    assert_eq!(val("a ++ b + c"), "(++ 'a' (+ 'b' 'c'))");
    assert_eq!(val("a + b ++ c"), "(++ (+ 'a' 'b') 'c')");
    assert_eq!(val("a ++ b ++ c"), "(++ (++ 'a' 'b') 'c')");
    assert_eq!(val("1 + 2 * 3"), "(+ 1 (* 2 3))");
    assert_eq!(val("1 * 2 + 3"), "(+ (* 1 2) 3)");
    assert_eq!(val("1 - 2 - 3"), "(- (- 1 2) 3)");
    assert_eq!(val("1 - 2 + 3"), "(+ (- 1 2) 3)");
    assert_eq!(val("8 / 4 * 2"), "(* (/ 8 4) 2)");
    assert_eq!(val("-2 * 3"), "(* -2 3)");
    assert_eq!(val("-$a * 3"), "(* (- $a) 3)");
    assert_eq!(val("!$a && $b"), "(&& (! $a) $b)");
    assert_eq!(val("!!$a"), "(! (! $a))");
    assert_eq!(val("-$a.b"), "(- (. $a 'b'))");
    assert_eq!(val("!$a.b.c"), "(! (. (. $a 'b') 'c'))");
    assert_eq!(val("(1 + 2) * 3"), "(* (+ 1 2) 3)");
    assert_eq!(
        val("$Memory>4 && $CPU==fast"),
        "(&& (> $Memory 4) (== $CPU 'fast'))"
    );
    assert_eq!(
        val("'Mismatch '++$VW++' <> '++$VD"),
        "(++ (++ (++ 'Mismatch ' $VW) ' <> ') $VD)"
    );
}

#[test]
fn comparison_and_match_are_not_associative() {
    assert_eq!(
        errs("X => 1 < 2 < 3"),
        ["comparisons cannot be chained: found `<` after a comparison"]
    );
    assert_eq!(
        errs("X => a == b != c"),
        ["comparisons cannot be chained: found `!=` after a comparison"]
    );
    assert_eq!(
        errs("X => a =~ /x/ =~ /y/"),
        ["`=~` cannot follow another regular expression match"]
    );
    assert_eq!(
        errs("X => a =~ /x/ ++ b"),
        ["`++` cannot follow a regular expression match: the right side of `=~` and `!~` is a single value"]
    );
    assert_eq!(
        errs("X => $a =~ $P.ip"),
        ["the right side of `=~` is a single value, so it cannot be followed by `.`"]
    );
    assert_eq!(val("$a =~ ($P.ip)"), "(=~ $a (. $P 'ip'))");
    assert_eq!(val("$a =~ (/x/ ++ $b)"), "(=~ $a (++ /x/ $b))");
    assert_eq!(val("(1 < 2) == true"), "(== (< 1 2) true)");
}

// ----- regex vs division --------------------------------------------------------------------

#[test]
fn regex_versus_division() {
    assert_eq!(val("6 / 2 / 3"), "(/ (/ 6 2) 3)");
    assert_eq!(val("6/2/3"), "(/ (/ 6 2) 3)");
    assert_eq!(val("/a/"), "/a/");
    assert_eq!(val("$a / /b/"), "(/ $a /b/)");
    assert_eq!(val("[/a/, /b c/]"), "[/a/ /b c/]");
    assert_eq!(val("$x.(0) / 2"), "(/ (. $x 0) 2)");
    assert_eq!(
        file_sx("if ($a =~ /x/) then { A => 1 }"),
        "(if (=~ $a /x/) {A => 1})"
    );
    assert_eq!(val("$a=~/^(\\d+)\\.(\\d+)/"), "(=~ $a /^(\\d+)\\.(\\d+)/)");
    // The body is verbatim except `\/`.
    assert_eq!(val(r"/a\/b\d\\/"), r"/a/b\d\\/");
    assert_eq!(val(r"/a\$b/"), r"/a\$b/");
    assert_eq!(val(r"/a$/"), r"/a$/");
    assert_eq!(val(r"/\${X}/"), r"/\${X}/");
    assert_eq!(val(r"/'x'/"), r"/'x'/");
    assert_eq!(val("/a\"b/"), "/a\"b/");
    assert_eq!(val("/x,${RE1},${String1}/"), "/x,${$RE1},${$String1}/");
    assert_eq!(val("/${X.a}$/"), "/${(. $X 'a')}$/");
    assert_eq!(val("6 /\n 2"), "(/ 6 2)");
    assert_eq!(file_sx("X => 6\n / 2"), "X => (/ 6 2)");
}

// ----- strings and escapes -------------------------------------------------------------------

#[test]
fn escapes() {
    assert_eq!(val(r"'a\'b'"), "'a'b'");
    assert_eq!(val(r#"'a\"b'"#), "'a\"b'");
    assert_eq!(val(r"'a\\b'"), r"'a\b'");
    assert_eq!(val(r"'a\nb\tc'"), "'a\nb\tc'");
    assert_eq!(val(r"'a\$b'"), "'a$b'");
    assert_eq!(val(r"'\d+'"), r"'\d+'");
    assert_eq!(val(r"'${X}'"), "'${X}'");
    assert_eq!(val(r#""a\"b""#), "\"a\"b\"");
    assert_eq!(val(r#""a\'b""#), "\"a'b\"");
    assert_eq!(val(r#""a\\b""#), r#""a\b""#);
    assert_eq!(val(r#""a\nb\tc""#), "\"a\nb\tc\"");
    assert_eq!(val(r#""\${X}""#), "\"${X}\"");
    assert_eq!(val(r#""\d""#), r#""\d""#);
    assert_eq!(val(r#""cost $5 $""#), "\"cost $5 $\"");
    assert_eq!(val("'two\nlines'"), "'two\nlines'");
    assert_eq!(val("\"two\nlines\""), "\"two\nlines\"");
    assert_eq!(val("''"), "''");
    match &ok("X => \"\"").statements[0] {
        Statement::Resource(r) => assert_eq!(r.mutations[0].value.kind, ExprKind::String(vec![])),
        other => panic!("{other:?}"),
    }
}

#[test]
fn interpolation() {
    assert_eq!(
        val("\"${Literal2} is simple\""),
        "\"${$Literal2} is simple\""
    );
    assert_eq!(val("\"${X.a}\""), "\"${(. $X 'a')}\"");
    assert_eq!(val("\"${L.0}\""), "\"${(. $L 0)}\"");
    assert_eq!(val("\"${L.(0).1}\""), "\"${(. (. $L 0) 1)}\"");
    assert_eq!(val("\"${X.($k)}\""), "\"${(. $X $k)}\"");
    assert_eq!(val("\"${ X . a }\""), "\"${(. $X 'a')}\"");
    assert_eq!(val("\"a${X}b${Y}c\""), "\"a${$X}b${$Y}c\"");
    assert_eq!(val("\"${X.(\"${Y}\")}\""), "\"${(. $X \"${$Y}\")}\"");
    assert_eq!(val("\"${X}}\""), "\"${$X}}\"");
    match &ok("X => \"a${B.c}d\"").statements[0] {
        Statement::Resource(r) => match &r.mutations[0].value.kind {
            ExprKind::String(parts) => {
                assert_eq!(parts.len(), 3);
                assert_eq!(parts[0], Part::Text("a".into()));
                let Part::Interp(e) = &parts[1] else { panic!() };
                assert_eq!(text_of("X => \"a${B.c}d\"", e.span), "B.c");
                let ExprKind::Select(base, _) = &e.kind else {
                    panic!()
                };
                let ExprKind::Ref(id) = &base.kind else {
                    panic!()
                };
                assert_eq!(text_of("X => \"a${B.c}d\"", id.span), "B");
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

// ----- newlines and continuation -----------------------------------------------------------

#[test]
fn newline_continuation() {
    // After an operator, a mutation operator, `if (...)`, `then`, `else`: newlines skipped.
    assert_eq!(file_sx("X => 1 +\n  2"), "X => (+ 1 2)");
    assert_eq!(file_sx("X =>\n\n  1"), "X => 1");
    assert_eq!(file_sx("X => - \n 1"), "X => -1");
    assert_eq!(file_sx("X => ! \n $a"), "X => (! $a)");
    // A line starting with an operator continues the expression.
    assert_eq!(file_sx("X => 1\n  + 2\n  * 3"), "X => (+ 1 (* 2 3))");
    assert_eq!(
        file_sx("X => $a\n  && $b\n  || $c"),
        "X => (|| (&& $a $b) $c)"
    );
    assert_eq!(
        file_sx("X => a\n  ++ b // comment\n\n  // another\n  ++ c"),
        "X => (++ (++ 'a' 'b') 'c')"
    );
    assert_eq!(file_sx("X => 1\n - 2"), "X => (- 1 2)");
    assert_eq!(file_sx("X => $a\n  =~ /x/"), "X => (=~ $a /x/)");
    // After `import`, `def`, `def name` and inside `~(name)>`, nothing can end either.
    assert_eq!(file_sx("X => import\n  (f)"), "X => import('f')");
    assert_eq!(file_sx("X ~\n  (max)> 1"), "X ~(max)> 1");
    assert_eq!(file_sx("X ~(\n  max\n)\n> 1"), "X ~(max)> 1");
    assert_eq!(ok("def\n  f(x) = $x\ndef g\n  (x) = $x").macros.len(), 2);
    // ... unless the next line starts a statement: one error, at the end of the line.
    assert_eq!(
        errs("X => import\nY => 1\ndef\nZ => 1\nW ~(\nV => 1"),
        [
            "expected `(` after `import`, found the end of the line",
            "expected a macro name after `def`, found the end of the line",
            "expected the name of a mutation function in `~( )>`, found the end of the line",
        ]
    );
    // ... but not a line that starts a statement.
    assert_eq!(file_sx("X => 1\nY => 2"), "X => 1\nY => 2");
    assert_eq!(
        errs("X => f\n(1)"),
        ["expected a resource definition (`Name => value`) or a statement, found `(`"],
        "`(` on the next line is not a call"
    );
    // Inside brackets around an expression newlines do not matter.
    assert_eq!(file_sx("X => (1\n\n+\n2\n)"), "X => (+ 1 2)");
    assert_eq!(file_sx("X => (\n  $a\n)"), "X => $a");
    // In lists and arguments a newline separates, and `-` or `/` at the start of a line
    // begins a new element.
    assert_eq!(file_sx("X => [\n  1\n  -2\n  /re/\n]"), "X => [1 -2 /re/]");
    assert_eq!(
        file_sx("X => [\n  1\n  + 2\n  ++ x\n]"),
        "X => [(++ (+ 1 2) 'x')]"
    );
    assert_eq!(file_sx("X => f(\n  a\n  -1\n)"), "X => f('a' -1)");
    // The reference's layouts.
    assert_eq!(
        file_sx("Size => if ($BigMachine)\n  then $StandardSize+100\n  else $StandardSize"),
        "Size => (if $BigMachine (+ $StandardSize 100) $StandardSize)"
    );
    assert_eq!(
        file_sx("Block =>\n  if ($Date=~/^(\\d+)/)\n  then {\n    Day => match(1)\n  } else fail(\"invalid date: ${Date}\")"),
        "Block => (if (=~ $Date /^(\\d+)/) {Day => match(1)} fail(\"invalid date: ${$Date}\"))"
    );
    assert_eq!(
        file_sx("if ($Addr !~ /\\d+$/)\nthen fail( \"invalid: ${Addr}\" )"),
        "(if (!~ $Addr /\\d+$/) fail(\"invalid: ${$Addr}\"))"
    );
    assert_eq!(
        file_sx("if ($a)\n\n  then { A => 1 }\n\n  else { B => 2 }\nC => 3"),
        "(if $a {A => 1} {B => 2})\nC => 3"
    );
    assert_eq!(
        file_sx("if ($a) then { A => 1 }\nB => 2"),
        "(if $a {A => 1})\nB => 2"
    );
    assert_eq!(file_sx("X ~ (max) > 2\nY => 1"), "X ~(max)> 2\nY => 1");
    assert_eq!(
        file_sx("Width => 4, Height => 5"),
        "Width => 4\nHeight => 5"
    );
    assert_eq!(file_sx("private\n  X => 1"), "private X => 1");
    assert_eq!(file_sx("A.\n  B => 1"), "A.B => 1");
}

// ----- spans ---------------------------------------------------------------------------------

#[test]
fn spans_cover_the_text() {
    let src = "private A.B => 1 + $c.d ~(max)> f(2, [3])\nif ($x) then { C => 1 } else { D => 2 }\nimport(f, s)\nwarn('w')\ndef m(p) = $p\nE => -5";
    let f = ok(src);
    let [Statement::Resource(r), Statement::If(i), Statement::Import(im), Statement::Call(c), Statement::Macro(m), Statement::Resource(e)] =
        f.statements.as_slice()
    else {
        panic!("{:?}", f.statements)
    };
    assert_eq!(
        text_of(src, r.span),
        "private A.B => 1 + $c.d ~(max)> f(2, [3])"
    );
    assert_eq!(text_of(src, r.path[0].span), "A");
    assert_eq!(text_of(src, r.path[1].span), "B");
    assert_eq!(text_of(src, r.mutations[0].op_span), "=>");
    assert_eq!(text_of(src, r.mutations[1].op_span), "~(max)>");
    let MutationOp::Function(fname) = &r.mutations[1].op else {
        panic!()
    };
    assert_eq!(text_of(src, fname.span), "max");
    let v = &r.mutations[0].value;
    assert_eq!(text_of(src, v.span), "1 + $c.d");
    let ExprKind::Binary(_, _, rhs) = &v.kind else {
        panic!()
    };
    assert_eq!(text_of(src, rhs.span), "$c.d");
    let ExprKind::Select(base, sel) = &rhs.kind else {
        panic!()
    };
    assert_eq!(text_of(src, base.span), "$c");
    let ExprKind::Ref(id) = &base.kind else {
        panic!()
    };
    assert_eq!(text_of(src, id.span), "c");
    assert_eq!(text_of(src, sel.span), "d");
    let call = &r.mutations[1].value;
    assert_eq!(text_of(src, call.span), "f(2, [3])");
    let ExprKind::Call(cl) = &call.kind else {
        panic!()
    };
    assert_eq!(text_of(src, cl.span), "f(2, [3])");
    assert_eq!(text_of(src, cl.args[1].span), "[3]");
    assert_eq!(
        text_of(src, i.span),
        "if ($x) then { C => 1 } else { D => 2 }"
    );
    assert_eq!(text_of(src, i.cond.span), "($x)");
    assert_eq!(text_of(src, i.then.span), "{ C => 1 }");
    assert_eq!(text_of(src, im.span), "import(f, s)");
    assert_eq!(text_of(src, c.span), "warn('w')");
    assert_eq!(text_of(src, c.name.span), "warn");
    assert_eq!(text_of(src, m.span), "def m(p) = $p");
    assert_eq!(text_of(src, m.params[0].span), "p");
    assert_eq!(text_of(src, e.mutations[0].value.span), "-5");
    let src2 = "X => (1 + 2) * \"s${a}\" ++ /r/";
    let f2 = ok(src2);
    let Statement::Resource(r2) = &f2.statements[0] else {
        panic!()
    };
    assert_eq!(
        text_of(src2, r2.mutations[0].value.span),
        "(1 + 2) * \"s${a}\" ++ /r/"
    );
    let ExprKind::Binary(_, l, rr) = &r2.mutations[0].value.kind else {
        panic!()
    };
    assert_eq!(text_of(src2, l.span), "(1 + 2) * \"s${a}\"");
    assert_eq!(text_of(src2, rr.span), "/r/");
}

// ----- errors and recovery ------------------------------------------------------------------

#[test]
fn several_errors_in_one_file() {
    let src = "A => 1\nX 42\nB => (1 + )\nC => [1, 2\nD => 3\nE => { F => 1 G => 2 }\nH => 4\nI = 5\nJ => 6";
    let (file, diags) = parse(FileId(0), src);
    let msgs: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        msgs,
        [
            "expected `=>`, `~>` or `~(name)>` after the resource name `X`, found `42`",
            "expected a value after `+`, found `)`",
            "expected `,` or `]` after a list element, found `=>`",
            "expected a newline or `,` after the definition of `E.F`, found `G`",
            "expected `=>`, `~>` or `~(name)>` after the resource name `I`, found `=`",
        ]
    );
    // The good statements around the errors are all there; a failed value is an error node.
    let names: Vec<String> = file
        .statements
        .iter()
        .map(|s| match s {
            Statement::Resource(r) => format!(
                "{}{}",
                r.path[0].name,
                if r.mutations.iter().any(|m| m.value.kind == ExprKind::Error) {
                    "!"
                } else {
                    ""
                }
            ),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(names, ["A", "B!", "C!", "E", "H", "J"]);
    // Each diagnostic points at the offending token.
    let at: Vec<&str> = diags
        .iter()
        .map(|d| text_of(src, d.span.unwrap()))
        .collect();
    assert_eq!(at, ["42", "+", "=>", "G", "="]);
    assert_eq!(
        diags[4].hint.as_deref(),
        Some("a resource is assigned with `=>`, e.g. `Name => value`")
    );
}

#[test]
fn recovery_with_unclosed_brackets() {
    // An unclosed `[` or `(` does not hide the definitions after it.
    let (f, d) = parse(
        FileId(0),
        "A => [1, 2\nB => 3\nC => max(1\nD => 4\nE => 5 5\nF => 6",
    );
    assert_eq!(
        d.iter().map(|d| d.message.as_str()).collect::<Vec<_>>(),
        [
            "expected `,` or `]` after a list element, found `=>`",
            "expected `,` or `)` after an argument of `max`, found `=>`",
            "expected a newline or `,` after the definition of `E`, found `5`",
        ]
    );
    assert_eq!(
        f.statements.iter().map(stmt_sx).collect::<Vec<_>>(),
        ["A => ERROR", "C => ERROR", "E => 5", "F => 6"]
    );
    // A block opened while skipping is skipped whole.
    let d = diags("X => [1 2, {\n  A => 1\n}]\nY => 1 1");
    assert_eq!(
        d.iter().map(|d| d.message.as_str()).collect::<Vec<_>>(),
        [
            "expected `,` or `]` after a list element, found `2`",
            "expected a newline or `,` after the definition of `Y`, found `1`",
        ]
    );
    // A `}` ends the block, even with a `(` left open in it.
    let d = diags("A => {\n  B => (1 +\n}\nC => 1 1");
    assert_eq!(
        d.iter().map(|d| d.message.as_str()).collect::<Vec<_>>(),
        [
            "expected a value after `+`, found `}`",
            "expected a newline or `,` after the definition of `C`, found `1`",
        ]
    );
}

#[test]
fn recovery_inside_lists_and_arguments() {
    // An element in error is skipped up to the next separator; the others still parse.
    let src = "A => [1 2, 3\n  4 5\n  => x\n  6]\nB => f(1 2, 3)\nC => [[1 2], (3 4)]";
    let (f, d) = parse(FileId(0), src);
    assert_eq!(
        d.iter()
            .map(|d| text_of(src, d.span.unwrap()))
            .collect::<Vec<_>>(),
        ["2", "5", "=>", "2", "2", "4"]
    );
    assert_eq!(
        f.statements.iter().map(stmt_sx).collect::<Vec<_>>(),
        [
            "A => [ERROR 3 ERROR ERROR 6]",
            "B => f(ERROR 3)",
            "C => [[ERROR] ERROR]"
        ]
    );
    // A block in a list never closed: the next element or the `]` ends it, one error.
    let src = "U => [\n  {\n    N => j\n  ,\n  { N => k }\n]\nV => [{ N => l\n]\nW => 1";
    let (f, d) = parse(FileId(0), src);
    assert_eq!(
        d.iter().map(|d| d.message.as_str()).collect::<Vec<_>>(),
        ["this `{` is never closed", "this `{` is never closed"]
    );
    assert_eq!(f.statements.len(), 3);
}

#[test]
fn nothing_after_an_operator_is_shown_at_the_operator() {
    // Not past the end of the file, nor at the `}` on the next line.
    for (src, at, msg) in [
        (
            "A => 1 +\n\n",
            "+",
            "expected a value after `+`, found the end of the file",
        ),
        (
            "A => {\n  B => 1 *\n}",
            "*",
            "expected a value after `*`, found `}`",
        ),
        (
            "A => 1.\n",
            ".",
            "expected a selector after `.`, found the end of the file",
        ),
        (
            "A => -",
            "-",
            "expected a value after `-`, found the end of the file",
        ),
        (
            "A => if\n",
            "if",
            "expected `(` after `if`, found the end of the file",
        ),
        (
            "A => if ($x) then 1 else\n",
            "else",
            "expected a value after `else`, found the end of the file",
        ),
        (
            "A => [1 +, 2]",
            "+",
            "expected a value after `+`, found `,`",
        ),
    ] {
        let d = diags(src);
        assert_eq!(d.len(), 1, "{src:?}: {d:?}");
        assert_eq!(d[0].message, msg, "{src:?}");
        assert_eq!(text_of(src, d[0].span.unwrap()), at, "{src:?}");
    }
}

#[test]
fn missing_then_is_one_error() {
    // The branches are read on, so the `else` on a later line is not a stray one.
    assert_eq!(
        errs("X => if ($a)\n  1\n  else 2\nY => if ($a) else 3\nZ => 1 1"),
        [
            "expected `then` after the condition of `if`, found `1`",
            "expected `then` after the condition of `if`, found the keyword `else`",
            "expected a newline or `,` after the definition of `Z`, found `1`",
        ]
    );
}

#[test]
fn recovery_inside_nested_blocks() {
    let src = "A => {\n  B => {\n    C => (\n  }\n  D => 1\n}\nE => 2";
    let (file, diags) = parse(FileId(0), src);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].message, "expected a value, found `}`");
    assert_eq!(file.statements.len(), 2);
    let src = "A => { x y z }\nB => { 1 }\nC => [ ) ]\nD => 1";
    let msgs = errs(src);
    assert_eq!(
        msgs,
        [
            "expected `=>`, `~>` or `~(name)>` after the resource name `x`, found `y`",
            "expected a resource definition (`Name => value`) or a statement, found `1`",
            "expected a list element or `]`, found `)`",
        ]
    );
    // The stray `)` is skipped.
    assert_eq!(file_sx_lossy(src), "A => {}\nB => {}\nC => []\nD => 1");
}

fn file_sx_lossy(src: &str) -> String {
    parse(FileId(0), src)
        .0
        .statements
        .iter()
        .map(stmt_sx)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn error_messages() {
    let cases: &[(&str, &str)] = &[
        ("foo-bar => 1", "resource names cannot contain `-`: `foo-bar`"),
        ("A.b-c => 1", "resource names cannot contain `-`: `b-c`"),
        ("42 => 1", "expected a resource definition (`Name => value`) or a statement, found `42`"),
        ("$X => 1", "a statement cannot start with the reference `$X`"),
        ("then => 1", "`then` is a keyword and cannot be used as a resource name"),
        ("private if ($a) then {}", "expected a resource name after `private`, found the keyword `if`"),
        ("A.if => 1", "expected a resource name after `.`, found the keyword `if`"),
        ("X", "expected `=>`, `~>` or `~(name)>` after the resource name `X`, found the end of the file"),
        ("X\nY => 1", "expected `=>`, `~>` or `~(name)>` after the resource name `X`, found the end of the line"),
        ("X => ", "expected a value for `X` after `=>`"),
        ("X => if", "expected `(` after `if`, found the end of the file"),
        ("X => 1 2", "expected a newline or `,` after the definition of `X`, found `2`"),
        ("X => two words", "expected a newline or `,` after the definition of `X`, found `words`"),
        ("X ~ 2", "expected `(` after `~`, found `2`"),
        ("X ~(max 2", "expected `)` after `~(max`, found `2`"),
        ("X ~(max) 2", "expected `>` after `~(max)`, found `2`"),
        ("X ~(a-b)> 2", "function names cannot contain `-`: `a-b`"),
        ("X => import f", "expected `(` after `import`, found `f`"),
        ("X => import()", "`import` takes one or two arguments: the file, and optionally the permitted signers"),
        ("import(a, b, c)", "`import` takes one or two arguments: the file, and optionally the permitted signers"),
        ("X => if $a then 1", "expected `(` after `if`, found `$a`"),
        ("X => if ($a) 1", "expected `then` after the condition of `if`, found `1`"),
        ("X => ()", "expected an expression inside `( )`, found `)`"),
        ("X => (1 2)", "expected `)`, found `2`"),
        ("X => [1 2]", "expected `,` or `]` after a list element, found `2`"),
        ("X => f(1 2)", "expected `,` or `)` after an argument of `f`, found `2`"),
        ("X => $", "expected a resource name after `$`, found the end of the file"),
        ("X => $ a", "expected a resource name after `$`, found `a`"),
        ("X => 1 ; Y => 2", "expected a newline or `,` after the definition of `X`, found the character `;`"),
        ("X => a & b", "expected a newline or `,` after the definition of `X`, found the character `&`"),
        ("X => \u{a0}1", "expected a value, found the invisible character U+00A0"),
        ("X => \"${}\"", "expected a resource name after `${`, found `}`"),
        ("X => \"${X y}\"", "expected `.` or `}` in `${...}`, found `y`"),
        ("X => \"${X\"", "this `${` is never closed: there is no matching `}`"),
        ("X => /${X/", "this `${` is never closed: there is no matching `}`"),
        ("def f(x) => 1", "expected `=` after `def f(...)`, found `=>`"),
        ("def f(x-y) = 1", "macro parameter names cannot contain `-`: `x-y`"),
        ("def (x) = 1", "expected a macro name after `def`, found `(`"),
        ("def f(1) = 1", "expected a parameter name or `)`, found `1`"),
        ("f-g(1)", "function names cannot contain `-`: `f-g`"),
        ("}", "unexpected `}`: there is no `{` for it to close"),
        ("X => 1 }", "unexpected `}`: there is no `{` for it to close"),
        (")", "unexpected `)`: there is no `(` for it to close"),
        ("X => ~", "expected a value, found `~`"),
    ];
    for (src, msg) in cases {
        let got = errs(src);
        assert!(
            got.first().is_some_and(|m| m == msg),
            "for {src:?}: expected {msg:?}, got {got:?}"
        );
    }
}

#[test]
fn unterminated_constructs() {
    let d = diags("X => \"abc\nY => 1\n");
    assert_eq!(d.len(), 1);
    assert_eq!(
        d[0].message,
        "this string is never closed: there is no matching `\"`"
    );
    assert_eq!(d[0].span.map(|s| (s.start, s.end)), Some((5, 6)));
    let d = diags("A => {\n  X => \"abc\n}\n");
    assert_eq!(d.len(), 1, "{d:?}");
    let d = diags("X => 'abc\nY => 1\n");
    assert_eq!(d.len(), 1);
    assert_eq!(
        d[0].message,
        "this literal is never closed: there is no matching `'`"
    );
    assert_eq!(d[0].span.map(|s| (s.start, s.end)), Some((5, 6)));
    // A regular expression ends on its line: the next lines still parse.
    let (f, d) = parse(FileId(0), "X => /abc\nY => 1\nZ => 2 2\n");
    assert_eq!(
        d.iter().map(|d| d.message.as_str()).collect::<Vec<_>>(),
        [
            "this regular expression is never closed: there is no matching `/` on its line",
            "expected a newline or `,` after the definition of `Z`, found `2`"
        ]
    );
    assert_eq!(d[0].span.map(|s| (s.start, s.end)), Some((5, 6)));
    assert_eq!(f.statements.len(), 3);
    let d = diags("X => {\n  A => 1\n  B => 2\n");
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].message, "this `{` is never closed");
    assert_eq!(d[0].span.map(|s| (s.start, s.end)), Some((5, 6)));
    let d = diags("X => [1, 2");
    assert_eq!(d[0].message, "this `[` is never closed");
    assert_eq!(d[0].span.map(|s| (s.start, s.end)), Some((5, 6)));
    let d = diags("X => (1 + 2");
    assert_eq!(d[0].message, "this `(` is never closed");
    let d = diags("X => f(1, 2");
    assert_eq!(d[0].message, "this `(` is never closed");
    let d = diags("def f(a, b");
    assert_eq!(d[0].message, "this `(` is never closed");
    // A multi-line string that swallowed the next line is pointed out.
    let d = diags("X => \"abc\nY => \"ghi\"\n");
    assert_eq!(
        d[0].message,
        "expected a newline or `,` after the definition of `X`, found `ghi`"
    );
    assert_eq!(
        d[0].labels[0].message,
        "this quoted text runs over several lines: is a closing quote missing?"
    );
}

#[test]
fn errors_in_interpolations_are_local() {
    let (f, d) = parse(
        FileId(0),
        "X => \"a ${1} b ${Y} c\"\nZ => \"${Q.(}\"\nW => 1",
    );
    assert_eq!(
        d.iter().map(|d| d.message.as_str()).collect::<Vec<_>>(),
        [
            "expected a resource name after `${`, found `1`",
            "expected a value, found `}`"
        ]
    );
    assert_eq!(
        f.statements.iter().map(stmt_sx).collect::<Vec<_>>(),
        [
            "X => \"a ${ERROR} b ${$Y} c\"",
            "Z => \"${ERROR}\"",
            "W => 1"
        ]
    );
    // A quoted text inside `${...}` is skipped with it; the string goes on after the `}`.
    let (f, d) = parse(FileId(0), "X => \"a ${\"n\"} b\"\nW => 1");
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        f.statements.iter().map(stmt_sx).collect::<Vec<_>>(),
        ["X => \"a ${ERROR} b\"", "W => 1"]
    );
}

#[test]
fn nul_byte_is_an_error() {
    let d = diags("X => 1\nY => 'a\0b'\n");
    assert_eq!(d.len(), 1);
    assert_eq!(
        d[0].message,
        "the file contains a NUL byte, so it is not a CF2 text file"
    );
    assert_eq!(d[0].span.map(|s| (s.start, s.end)), Some((14, 15)));
    assert_eq!(diags("\0").len(), 1);
}

#[test]
fn error_count_is_bounded() {
    let src = "X 1\n".repeat(10_000);
    let d = diags(&src);
    assert_eq!(d.len(), 100);
    assert!(d[99]
        .notes
        .iter()
        .any(|n| n.contains("too many syntax errors")));
}

// ----- nesting limits ----------------------------------------------------------------------

const TOO_DEEP: &str = "nesting too deep (more than 256 levels)";

fn run_with_small_stack<F: FnOnce() + Send + 'static>(f: F) {
    // Well below the 8 MiB of a main thread and the 2 MiB of a test thread.
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn deep_nesting_is_a_clean_error() {
    run_with_small_stack(|| {
        for (open, close) in [
            ("[", "]"),
            ("(", ")"),
            ("{ A => ", "}"),
            ("-", ""),
            ("!", ""),
            ("f(", ")"),
            ("if ($a) then ", ""),
            ("\"${A.(", ")}\""),
        ] {
            let n = 100_000;
            let src = format!("X => {}1{}\nY => 2", open.repeat(n), close.repeat(n));
            let start = std::time::Instant::now();
            let (file, d) = parse(FileId(0), &src);
            assert!(start.elapsed().as_secs() < 5, "{open}: too slow");
            assert!(
                d.iter().any(|d| d.message == TOO_DEEP),
                "{open}: {:?}",
                d.iter().map(|d| &d.message).collect::<Vec<_>>()
            );
            assert!(
                d.len() <= 3,
                "{open}: {:?}",
                d.iter().map(|d| &d.message).collect::<Vec<_>>()
            );
            drop(file);
            // Unclosed too.
            let src = open.repeat(n);
            let src = format!("X => {src}");
            let (_, d) = parse(FileId(0), &src);
            assert!(
                !d.is_empty() && d.len() <= 3,
                "{open}: {:?}",
                d.iter().map(|d| &d.message).collect::<Vec<_>>()
            );
        }
    });
}

#[test]
fn long_chains_are_bounded() {
    run_with_small_stack(|| {
        for sep in [" + ", ".", " * "] {
            let src = format!("X => $a{}", format!("{sep}b").repeat(100_000));
            let (_, d) = parse(FileId(0), &src);
            // A run of an operator that does not regroup says so.
            let run = format!(
                "{TOO_DEEP}: a run of `{}` nests each operand inside the next",
                sep.trim()
            );
            let expected = if sep == "." { TOO_DEEP } else { run.as_str() };
            assert_eq!(
                d.iter().map(|d| d.message.as_str()).collect::<Vec<_>>(),
                [expected],
                "{sep}"
            );
        }
        // Flat things are not nesting: a run of an associative operator becomes a
        // balanced tree.
        for sep in [" ++ ", " && ", " || "] {
            let src = format!("X => $a{}", format!("{sep}b").repeat(100_000));
            ok(&src);
        }
        let src = format!("X => [{}]", "1, ".repeat(100_000));
        ok(&src);
        let src = "A => 1\n".repeat(100_000);
        assert_eq!(ok(&src).statements.len(), 100_000);
        let src = format!("X => 1 {}", "~(sum)> 1 ".repeat(10_000));
        ok(&src);
    });
}

#[test]
fn nesting_up_to_the_limit_is_fine() {
    run_with_small_stack(|| {
        let n = MAX_NESTING;
        ok(&format!("X => {}1{}", "[".repeat(n), "]".repeat(n)));
        ok(&format!("X => {}1{}", "(".repeat(n), ")".repeat(n)));
        ok(&format!("X => {}1{}", "{ A => ".repeat(n), "}".repeat(n)));
        ok(&format!("X => {}$a", "-".repeat(n)));
        ok(&format!("X => $a{}", ".b".repeat(n)));
        ok(&format!("X => 1{}", " + 1".repeat(n - 1)));
        let d = diags(&format!("X => {}1{}", "[".repeat(n + 1), "]".repeat(n + 1)));
        assert_eq!(
            d.iter().map(|d| d.message.as_str()).collect::<Vec<_>>(),
            [TOO_DEEP]
        );
        let d = diags(&format!("X => {}$a", "-".repeat(n + 1)));
        assert_eq!(
            d.iter().map(|d| d.message.as_str()).collect::<Vec<_>>(),
            [TOO_DEEP]
        );
    });
}

#[test]
fn huge_inputs_are_linear() {
    let line = "Key_1.sub => { A => [1, 2.5, 'x', \"s ${B.c}\", /r+/], C => $d.e ++ f(g) } // c\n";
    let src = line.repeat(20_000);
    let start = std::time::Instant::now();
    let f = ok(&src);
    assert_eq!(f.statements.len(), 20_000);
    assert!(start.elapsed().as_secs() < 10);
    // A literal with many apostrophes inside strings.
    let src = "X => \"it's\"\n".repeat(20_000);
    let start = std::time::Instant::now();
    ok(&src);
    assert!(start.elapsed().as_secs() < 10);
    // Pathological unterminated things.
    for s in [
        "'",
        "\"",
        "/",
        "\"${",
        "[",
        "{",
        "(",
        "X => '",
        "X => \"",
        "X => /",
        "X => \"${",
    ] {
        let src = s.repeat(50_000);
        let start = std::time::Instant::now();
        let _ = parse(FileId(0), &src);
        assert!(start.elapsed().as_secs() < 10, "{s}");
    }
}

// ----- diagnostics as users see them (snapshots) --------------------------------------------

/// A diagnostic with its locations resolved, independent of the renderer.
fn show(src: &str) -> String {
    use cf2_syntax::SourceFile;
    let file = SourceFile::new("test.cf2", std::sync::Arc::from(src));
    let at = |span: cf2_syntax::Span| {
        let (l, c) = file.line_col(span.start);
        let text = src
            .get(span.start as usize..span.end as usize)
            .unwrap_or("?");
        format!("{l}:{c} {text:?}")
    };
    let mut out = format!("source:\n{src}\n---\n");
    for d in diags(src) {
        out += &format!("error: {}\n", d.message);
        if let Some(span) = d.span {
            out += &format!("  at {} ({})\n", at(span), d.label);
        }
        for l in &d.labels {
            out += &format!("  also {}: {}\n", at(l.span), l.message);
        }
        for n in &d.notes {
            out += &format!("  note: {n}\n");
        }
        if let Some(h) = &d.hint {
            out += &format!("  hint: {h}\n");
        }
    }
    out
}

#[test]
fn snapshot_missing_mutation_operator() {
    insta::assert_snapshot!(show("Port => 25\nHost 42\nName = 'x'\n"));
}

#[test]
fn snapshot_unclosed_brackets() {
    insta::assert_snapshot!(show(
        "Users => [john, jane\nGroups => [staff]\nMail => {\n  Port => 25\n"
    ));
}

#[test]
fn snapshot_unterminated_string_and_regex() {
    insta::assert_snapshot!(show(
        "A => /^\\d+\nB => \"a ${X.y\" \nC => \"never closed\n"
    ));
}

#[test]
fn snapshot_operators() {
    insta::assert_snapshot!(show(
        "A => 1 < 2 < 3\nB => $a =~ /x/ ++ y\nC => $a && & $b\nD => 9223372036854775808\n"
    ));
}

#[test]
fn snapshot_names_and_keywords() {
    insta::assert_snapshot!(show(
        "web-server => 1\n$X => 2\nthen => 3\nE => else\nF => 'two' words\n"
    ));
}

#[test]
fn snapshot_nesting_too_deep() {
    insta::assert_snapshot!(show(&format!(
        "Deep => {}1{}\nOther => 1 2\n",
        "[".repeat(300),
        "]".repeat(300)
    )));
}

// ----- public helpers ------------------------------------------------------------------------

#[test]
fn bare_literals_and_identifiers() {
    use cf2_syntax::lexer::{is_bare_literal, is_identifier};
    for s in [
        "simple123",
        "entry-1",
        "foo-bar",
        "_x",
        "x_",
        "é★",
        "Ünïcode",
        "a-b-c",
        "A1-2",
        "a-",
        "a--b",
    ] {
        assert!(is_bare_literal(s), "{s:?}");
        assert_eq!(val(s), format!("'{s}'"));
    }
    for s in [
        "", "if", "then", "else", "import", "def", "private", "true", "false", "a b", "-a", "1a",
        "12", "1.5", "a.b", "'a'", "a\n", " a", "a ", "$a", "a\u{a0}", "a/b", "a:b", "a@b",
    ] {
        assert!(!is_bare_literal(s), "{s:?}");
    }
    for s in ["X", "simple123", "_x", "Ünïcode", "entry★1", "OsVersion"] {
        assert!(is_identifier(s), "{s:?}");
        assert_eq!(file_sx(&format!("{s} => 1")), format!("{s} => 1"));
        assert_eq!(val(&format!("${s}")), format!("${s}"));
    }
    for s in [
        "",
        "entry-1",
        "if",
        "true",
        "private",
        "1a",
        "a.b",
        "a b",
        "★ ",
        "a\u{200b}",
    ] {
        assert!(!is_identifier(s), "{s:?}");
    }
}

// ----- properties ----------------------------------------------------------------------------

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Fragments of CF2, to build inputs that get deep into the parser.
    fn fragment() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "X",
            "a.b",
            " => ",
            " ~> ",
            " ~(max)> ",
            "~",
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            ",",
            "\n",
            " ",
            "$x",
            "$",
            "1",
            "-",
            "2.5",
            "'lit'",
            "'",
            "\"s ${a.b} t\"",
            "\"",
            "${",
            "/re/",
            "/",
            "if",
            "then",
            "else",
            "import",
            "def",
            "private",
            "true",
            "?",
            "+",
            "++",
            "*",
            "==",
            "<",
            "=~",
            "!~",
            "!",
            "&&",
            "||",
            ".",
            "f(",
            "//c\n",
            "\\",
            "=",
            "é",
            "\u{a0}",
            "9223372036854775808",
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn arbitrary_text_never_panics(s in any::<String>()) {
            let (_, d) = parse(FileId(3), &s);
            for d in d {
                let span = d.span.unwrap();
                prop_assert!(span.start <= span.end && span.end as usize <= s.len());
                prop_assert!(s.is_char_boundary(span.start as usize) && s.is_char_boundary(span.end as usize));
            }
        }

        #[test]
        fn token_soup_never_panics(parts in prop::collection::vec(fragment(), 0..60)) {
            let s: String = parts.concat();
            let (file, d) = parse(FileId(0), &s);
            for d in &d {
                let span = d.span.unwrap();
                prop_assert!(span.end as usize <= s.len());
                prop_assert!(s.is_char_boundary(span.start as usize) && s.is_char_boundary(span.end as usize));
            }
            if d.is_empty() {
                // Without errors there are no error nodes.
                let tree = format!("{:?}", file);
                prop_assert!(!tree.contains("Error"), "{}", tree);
            }
        }

        #[test]
        fn bare_literals_read_back(s in "[A-Za-z_é★][A-Za-z0-9_é★]{0,6}(-[A-Za-z0-9_é★]{1,3}){0,2}") {
            prop_assume!(cf2_syntax::lexer::is_bare_literal(&s));
            prop_assert_eq!(val(&s), format!("'{s}'"));
        }
    }
}

#[test]
fn file_lists_every_macro_in_source_order() {
    let f = ok("def a(x) = { def b(y) = $y, B => b(1) }\nS => { def c() = 1 }\ndef d() = 2\n");
    let names: Vec<&str> = f.macros.iter().map(|m| &*m.name.name).collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
    let Some(Statement::Macro(a)) = f.statements.first() else {
        panic!("first statement is not a macro")
    };
    assert!(
        std::sync::Arc::ptr_eq(a, &f.macros[0]),
        "the statement and the list share the definition"
    );
}
