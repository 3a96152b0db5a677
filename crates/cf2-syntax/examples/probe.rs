fn main() {
    for (o, c) in [
        ("[", "]"),
        ("(", ")"),
        ("{ A => ", "}"),
        ("f(", ")"),
        ("if ($a) then ", ""),
        ("\"${A.(", ")}\""),
    ] {
        let src = format!("X => {}1{}", o.repeat(120), c.repeat(120));
        eprintln!("{o}");
        let _ = cf2_syntax::parse(cf2_syntax::FileId(0), &src);
    }
}
