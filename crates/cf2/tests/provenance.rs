//! The provenance the evaluator records for each resource (the base of `-Deval` and of a
//! future `explain`): which definition won, from which file and line, and what it overrode.

use cf2::{Compiler, Config, MemoryHost};

/// `main.cf2` of `host`, compiled with the trace recorded.
fn traced(host: MemoryHost) -> Config {
    let mut compiler = Compiler::with_host(host);
    compiler.options_mut().trace = true;
    compiler.compile_file("main.cf2").unwrap()
}

#[test]
fn records_winner_and_overridden_definitions() {
    let host = MemoryHost::new()
        .with_file("main.cf2", "import(base)\nPort => 8080\n")
        .with_file("base.cf2", "Port => 80\nName => web\n");
    let config = traced(host);
    let port = config.explain("Port").expect("Port was evaluated");
    assert_eq!(port.made.value, "8080");
    assert_eq!(port.made.rule, "assignment");
    assert_eq!(port.made.used.len(), 1);
    assert_eq!(port.made.used[0].location, "main.cf2:2:1");
    assert_eq!(port.made.used[0].op, "=>");
    assert_eq!(port.made.used[0].text, "Port => 8080");
    assert_eq!(port.made.overridden.len(), 1);
    assert_eq!(port.made.overridden[0].location, "base.cf2:1:1");
    let name = config.explain("Name").unwrap();
    assert!(name.made.overridden.is_empty());
}

#[test]
fn records_combined_definitions() {
    let host = MemoryHost::new()
        .with_file("main.cf2", "import(a)\nimport(b)\n")
        .with_file("a.cf2", "Disk ~(sum)> 10\n")
        .with_file("b.cf2", "Disk ~(sum)> 20\n");
    let config = traced(host);
    let disk = config.explain("Disk").unwrap();
    assert_eq!(disk.made.value, "30");
    assert_eq!(disk.made.rule, "sum");
    let places: Vec<&str> = disk.made.used.iter().map(|o| o.location.as_str()).collect();
    assert_eq!(places, ["a.cf2:1:1", "b.cf2:1:1"]);
}

#[test]
fn nothing_is_recorded_unless_asked() {
    let host = MemoryHost::new().with_file("main.cf2", "X => 1\n");
    let config = Compiler::with_host(host).compile_file("main.cf2").unwrap();
    assert!(config.provenance().is_empty());
}

/// An inline `if` in a block literal reads the literal's own `Tls` before a `~>` merges
/// it with the host's: both are recorded under `Web.Tls`, and `explain` gives the final one.
#[test]
fn explain_gives_the_merged_member_not_the_literal_one() {
    let host = MemoryHost::new()
        .with_file("main.cf2", "import(a)\nWeb.Tls => false\n")
        .with_file("a.cf2", "Web ~> { import(web) }\n")
        .with_file("web.cf2", "Tls => false\nif ($Tls) then { Extra => 1 }\n");
    let config = traced(host);
    let entries: Vec<bool> = config
        .provenance()
        .iter()
        .filter(|p| p.path == "Web.Tls")
        .map(|p| p.before_merge)
        .collect();
    assert_eq!(entries, [true, false]);
    let tls = config.explain("Web.Tls").expect("Web.Tls was evaluated");
    assert!(!tls.before_merge);
    assert_eq!(tls.made.used[0].location, "main.cf2:2:1");
    assert_eq!(tls.made.overridden[0].location, "web.cf2:1:1");
}

/// A chain that mixes functions: the top function's own definitions, then the value it
/// was given, made by another function, with its definitions (so the numbers add up).
#[test]
fn a_value_another_function_made_below_is_a_layer_of_its_own() {
    let host = MemoryHost::new()
        .with_file("main.cf2", "import(a)\nN ~(min)> 5\n")
        .with_file("a.cf2", "N ~(max)> 3 ~(max)> 7\n");
    let config = traced(host);
    let n = config.explain("N").unwrap();
    assert_eq!((n.made.value.as_str(), n.made.rule.as_str()), ("5", "min"));
    let top: Vec<&str> = n.made.used.iter().map(|o| o.location.as_str()).collect();
    assert_eq!(top, ["main.cf2:2:1"]);
    assert_eq!(n.below.len(), 1);
    let below = &n.below[0];
    assert_eq!((below.value.as_str(), below.rule.as_str()), ("7", "max"));
    let mutations: Vec<Option<u32>> = below.used.iter().map(|o| o.mutation).collect();
    assert_eq!(mutations, [Some(2), Some(1)]);
    // The same function down the chain is one fold: no layer.
    let host = MemoryHost::new().with_file("main.cf2", "N ~(max)> 3 ~(max)> 7\n");
    let config = traced(host);
    let n = config.explain("N").unwrap();
    assert!(n.below.is_empty());
    assert_eq!(n.made.used.len(), 2);
}

/// A block taken by reference is the referred resource's block: the entry says where its
/// members are listed; a block made for the resource itself says nothing more.
#[test]
fn a_block_taken_by_reference_names_where_its_members_are() {
    let host = MemoryHost::new().with_file(
        "main.cf2",
        "D => { P => 80 }\nW => $D\nS => { F => $D }\nOwn ~> $D\nOwn ~> { Q => 1 }\nAlone ~> $D\n",
    );
    let config = traced(host);
    assert_eq!(config.explain("W").unwrap().block_of.as_deref(), Some("D"));
    assert_eq!(
        config.explain("S.F").unwrap().block_of.as_deref(),
        Some("D")
    );
    assert_eq!(config.explain("D").unwrap().block_of, None);
    assert_eq!(config.explain("S").unwrap().block_of, None);
    // Merged with another block: a block of its own, with members by value.
    assert_eq!(config.explain("Own").unwrap().block_of, None);
    // `~>` over nothing is `=>`: the block itself.
    assert_eq!(
        config.explain("Alone").unwrap().block_of.as_deref(),
        Some("D")
    );
}

/// `Config::explanation`, what `cf2 explain` prints: the resource's entry, then a line per
/// member of a block; a list item is explained by its list.
#[test]
fn an_explanation_lists_a_blocks_members_and_what_they_overrode() {
    let host = MemoryHost::new()
        .with_file(
            "main.cf2",
            "import(base)\nWeb.Port => 8080\nDisks => [a, b]\n",
        )
        .with_file("base.cf2", "Web => { Port => 80, Name => web }\n");
    let config = traced(host);
    let web = config.explanation("Web");
    assert!(web.starts_with("Web = a block  [merge]\n"), "{web}");
    assert!(
        web.contains(
            "  member   Port = 8080  [assignment]  from main.cf2:2:1  (overrode 1 definition)\n"
        ),
        "{web}"
    );
    assert!(
        web.contains("  member   Name = 'web'  [assignment]  from base.cf2:1:22\n"),
        "{web}"
    );
    let port = config.explanation("Web.Port");
    assert!(
        port.contains("overrode base.cf2:1:10  =>  `Port => 80`"),
        "{port}"
    );
    let item = config.explanation("Disks.1");
    assert!(
        item.starts_with("Disks.1 is part of the value of Disks:\nDisks = ['a', 'b']"),
        "{item}"
    );
    let all = config.explanation("");
    assert!(all.contains("  resource Disks = ['a', 'b']"), "{all}");
}

/// An overridden definition says why it lost: here, the chain of imports that puts the
/// winner's file above it.
#[test]
fn an_overridden_definition_says_why() {
    let host = MemoryHost::new()
        .with_file("main.cf2", "import(mid)\nPort => 8080\n")
        .with_file("mid.cf2", "import(base)\n")
        .with_file("base.cf2", "Port => 80\n");
    let config = traced(host);
    let port = config.explain("Port").unwrap();
    assert_eq!(
        port.made.overridden[0].why.as_deref(),
        Some("main.cf2 imports mid.cf2, which imports base.cf2")
    );
    assert_eq!(port.made.used[0].why, None);
}

/// Without the trace nothing is recorded, and the explanation says so rather than guess.
#[test]
fn an_explanation_without_the_trace_says_there_is_no_record() {
    let host = MemoryHost::new().with_file("main.cf2", "X => 1\n");
    let config = Compiler::with_host(host).compile_file("main.cf2").unwrap();
    assert!(
        config
            .explanation("X")
            .starts_with("X: no record of how it got its value"),
        "{}",
        config.explanation("X")
    );
}

/// An entry lists the resources its definitions read by reference, with their values, in
/// the order first read: a member read through its block names the member, not the block;
/// what an inline `if` reads makes the block, and is listed under no resource.
#[test]
fn an_entry_lists_what_its_value_read() {
    let host = MemoryHost::new().with_file(
        "main.cf2",
        "C => 8\nD => { P => 80 }\nW => $D.P + $C + $C\nB => [$D.P, $D]\n\
         if ($C > 1) then { I => 1 }\nL => 'x'\n",
    );
    let config = traced(host);
    let reads = |path: &str| -> Vec<(String, String)> {
        let entry = config.explain(path).unwrap();
        entry
            .reads
            .iter()
            .map(|r| (r.path.clone(), r.value.clone()))
            .collect()
    };
    let pair = |p: &str, v: &str| (p.to_string(), v.to_string());
    assert_eq!(reads("W"), [pair("D.P", "80"), pair("C", "8")]);
    assert_eq!(reads("B"), [pair("D.P", "80"), pair("D", "a block")]);
    assert!(reads("I").is_empty());
    assert!(reads("L").is_empty());
}

/// `Config::readers`: the resources whose definitions read a resource, then the inline
/// statements that read it; a branch not taken read nothing.
#[test]
fn the_readers_of_a_resource_are_listed() {
    let host = MemoryHost::new().with_file(
        "main.cf2",
        "M => 32\nC => 8\nS => if ($M > 1) then 1 else $C\nT => { U => $M }\n\
         if ($M > 16) then { Big => true }\n",
    );
    let config = traced(host);
    assert_eq!(
        config.readers("M"),
        [
            "$S".to_string(),
            "$T.U".to_string(),
            "the inline statement at main.cf2:5:1  `if ($M > 16) then { Big => true }`".to_string()
        ]
    );
    assert!(config.readers("C").is_empty());
    // In the explanation, after the entry.
    let text = config.explanation_read_by("M", Some(&config));
    assert!(text.contains("  read by  $S\n  read by  $T.U\n"), "{text}");
}
