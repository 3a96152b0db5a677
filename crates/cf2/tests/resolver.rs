//! `ipaddr()` through the host's resolver: IPv4 addresses only, each once, in the order the
//! resolver gave them first (docs/semantics.md, Figure 2).

use cf2::{Compiler, MemoryHost, Value};

#[test]
fn ipaddr_keeps_each_address_once_in_resolver_order() {
    let mut host = MemoryHost::new().with_file("site.cf2", "A => ipaddr('db.example.org')\n");
    let addrs = [
        "10.0.0.2", "10.0.0.1", "::1", "10.0.0.2", "10.0.0.1", "10.0.0.3",
    ];
    host.hosts.insert(
        "db.example.org".into(),
        addrs.iter().filter_map(|a| a.parse().ok()).collect(),
    );
    let config = Compiler::with_host(host)
        .compile_file("site.cf2")
        .expect("compiles");
    let got: Vec<&str> = config
        .get("A")
        .and_then(Value::as_list)
        .map(|l| l.iter().filter_map(Value::as_text).collect())
        .unwrap_or_default();
    assert_eq!(got, ["10.0.0.2", "10.0.0.1", "10.0.0.3"]);
}
