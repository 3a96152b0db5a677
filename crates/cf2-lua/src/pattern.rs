//! A bound on the work of a Lua pattern match. Pattern matching (`string.find`, `match`,
//! `gmatch`, `gsub`) runs in C, where the instruction limit cannot interrupt it, and its
//! backtracking can take time exponential in the number of repeated items
//! (`string.find(s, ".-.-.-.-x")`). The sandbox estimates the worst case before the match
//! starts and refuses one that could run too long.
//!
//! The estimate: the number of starting positions (1 if the pattern is anchored with `^`,
//! else the length + 1) times the cost of matching from one position, computed from the
//! last item back: a repeated item (`*`, `+`, `-`) multiplies the cost of the rest by the
//! longest run of subject bytes its class matches, plus one — unless the next item is a
//! literal character its class cannot match, so that only one length can go on; `?`
//! doubles it; `%b` and back-references add the length of the subject.

/// A single-character class of a pattern.
enum Class<'p> {
    Any,
    Byte(u8),
    /// `%a`, `%d`, ... (the letter as written; upper case is the complement).
    Named(u8),
    /// `[...]`: the text between the brackets.
    Set(&'p [u8]),
}

fn named(letter: u8, c: u8) -> bool {
    let m = match letter.to_ascii_lowercase() {
        b'a' => c.is_ascii_alphabetic(),
        b'c' => c.is_ascii_control(),
        b'd' => c.is_ascii_digit(),
        b'g' => c.is_ascii_graphic(),
        b'l' => c.is_ascii_lowercase(),
        b'p' => c.is_ascii_punctuation(),
        b's' => c.is_ascii_whitespace() || c == 0x0b,
        b'u' => c.is_ascii_uppercase(),
        b'w' => c.is_ascii_alphanumeric(),
        b'x' => c.is_ascii_hexdigit(),
        _ => return c == letter,
    };
    if letter.is_ascii_uppercase() {
        !m
    } else {
        m
    }
}

fn in_set(set: &[u8], c: u8) -> bool {
    let (negate, body) = match set.split_first() {
        Some((b'^', rest)) => (true, rest),
        _ => (false, set),
    };
    let mut i = 0;
    let mut found = false;
    while i < body.len() {
        let x = body[i];
        if x == b'%' && i + 1 < body.len() {
            if named(body[i + 1], c) {
                found = true;
            }
            i += 2;
        } else if i + 2 < body.len() && body[i + 1] == b'-' {
            if x <= c && c <= body[i + 2] {
                found = true;
            }
            i += 3;
        } else {
            if x == c {
                found = true;
            }
            i += 1;
        }
    }
    found != negate
}

impl Class<'_> {
    fn matches(&self, c: u8) -> bool {
        match self {
            Class::Any => true,
            Class::Byte(b) => *b == c,
            Class::Named(l) => named(*l, c),
            Class::Set(s) => in_set(s, c),
        }
    }

    /// The longest run of bytes of `s` in this class.
    fn longest_run(&self, s: &[u8]) -> u64 {
        if let Class::Any = self {
            return s.len() as u64;
        }
        let (mut best, mut run) = (0u64, 0u64);
        for &c in s {
            if self.matches(c) {
                run += 1;
                best = best.max(run);
            } else {
                run = 0;
            }
        }
        best
    }
}

/// The index just after the `]` closing the set that starts at `p[i] == '['` (as Lua's
/// `classEnd` reads it: the first character after `[` or `[^` is always part of the set).
fn set_end(p: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    if p.get(j) == Some(&b'^') {
        j += 1;
    }
    loop {
        match p.get(j) {
            None => return p.len(),
            Some(b'%') => j += 2,
            _ => j += 1,
        }
        if j >= p.len() {
            return p.len();
        }
        if p[j] == b']' {
            return j + 1;
        }
    }
}

/// One pattern item: its class (`None` for captures, anchors, `%b`, `%f`, back-references)
/// and the index after it (before any quantifier).
fn item(p: &[u8], i: usize) -> (Option<Class<'_>>, usize, u8) {
    match p[i] {
        b'(' | b')' => (None, i + 1, b'('),
        b'.' => (Some(Class::Any), i + 1, 0),
        b'[' => {
            let end = set_end(p, i);
            let inner = &p[(i + 1).min(end)..end.saturating_sub(1).max(i + 1)];
            (Some(Class::Set(inner)), end, 0)
        }
        b'%' => match p.get(i + 1) {
            Some(b'b') => (None, (i + 4).min(p.len()), b'b'),
            Some(b'f') => {
                let end = if p.get(i + 2) == Some(&b'[') {
                    set_end(p, i + 2)
                } else {
                    (i + 2).min(p.len())
                };
                (None, end, b'f')
            }
            Some(d) if d.is_ascii_digit() => (None, i + 2, b'1'),
            Some(&l) if l.is_ascii_alphabetic() => (Some(Class::Named(l)), i + 2, 0),
            Some(&c) => (Some(Class::Byte(c)), i + 2, 0),
            None => (None, p.len(), 0),
        },
        c => (Some(Class::Byte(c)), i + 1, 0),
    }
}

/// One item of a pattern, as far as its cost goes.
enum Item {
    /// Matches one character, or nothing (captures, anchors, `%f`): no backtracking.
    Step,
    /// `%b` and back-references: may scan the whole subject.
    Scan,
    /// `x*`, `x+`, `x-`: tries up to `run + 1` lengths; `locked` when the next item is a
    /// literal its class cannot match, so only one length can lead on.
    Repeat { run: u64, locked: bool },
    /// `x?`: two tries.
    Optional,
}

/// The estimated worst-case number of steps of matching pattern `p` on subject `s`.
pub(crate) fn cost(s: &[u8], p: &[u8]) -> u64 {
    let n = s.len() as u64 + 1;
    let anchored = p.first() == Some(&b'^');
    let mut i = usize::from(anchored);
    let mut items = Vec::new();
    while i < p.len() {
        if p[i] == b'$' && i + 1 == p.len() {
            break;
        }
        let (class, next, special) = item(p, i);
        i = next;
        let Some(class) = class else {
            items.push(match special {
                b'b' | b'1' => Item::Scan,
                _ => Item::Step,
            });
            continue;
        };
        match p.get(i) {
            Some(b'*' | b'+' | b'-') => {
                i += 1;
                // The next item that matches a character (captures do not).
                let mut j = i;
                while matches!(p.get(j), Some(b'(' | b')')) {
                    j += 1;
                }
                // That literal must be there: one that may match nothing (`b*`, `b-`,
                // `b?`) lets every length lead on (`a*b*a*c` backtracks like `a*a*c`).
                let mandatory = j < p.len() && {
                    let (_, after, _) = item(p, j);
                    !matches!(p.get(after), Some(b'*' | b'-' | b'?'))
                };
                let locked = mandatory
                    && match p.get(j) {
                        Some(&c) if !b"%.[$".contains(&c) => !class.matches(c),
                        Some(b'%') => match p.get(j + 1) {
                            Some(&c) if !c.is_ascii_alphanumeric() => !class.matches(c),
                            _ => false,
                        },
                        _ => false,
                    };
                items.push(Item::Repeat {
                    run: class.longest_run(s),
                    locked,
                });
            }
            Some(b'?') => {
                i += 1;
                items.push(Item::Optional);
            }
            _ => items.push(Item::Step),
        }
    }
    // The cost of matching items[k..] from one position, folded from the end.
    let mut c: u64 = 1;
    for it in items.iter().rev() {
        c = match it {
            Item::Step => c.saturating_add(1),
            Item::Scan => n.saturating_add(c),
            Item::Repeat { run, locked: true } => (run + 1).saturating_add(c),
            Item::Repeat { run, locked: false } => (run + 1).saturating_mul(c.saturating_add(1)),
            Item::Optional => c.saturating_add(1).saturating_mul(2),
        };
    }
    if anchored {
        c
    } else {
        c.saturating_mul(n)
    }
}

/// The worst-case number of byte comparisons of a plain search (`string.find(s, p, init,
/// true)`, or a pattern without special characters) for `p_len` bytes in `s_len`: Lua
/// compares the sought text at every position where it could start.
pub(crate) fn plain_cost(s_len: usize, p_len: usize) -> u64 {
    if p_len == 0 || p_len > s_len {
        return 1;
    }
    ((s_len - p_len) as u64 + 1).saturating_mul(p_len as u64)
}

#[cfg(test)]
mod tests {
    use super::{cost, plain_cost};

    #[test]
    fn plain_searches_cost_text_times_sought() {
        assert_eq!(plain_cost(10, 0), 1);
        assert_eq!(plain_cost(3, 4), 1);
        assert_eq!(plain_cost(10, 3), 24);
        assert!(plain_cost(32_000_000, 16_000_001) > 1_000_000_000);
        assert!(plain_cost(1_000_000, 10) < 100_000_000);
    }

    #[test]
    fn ordinary_patterns_are_cheap() {
        let ip = b"10.20.30.40/24";
        assert!(cost(ip, b"^(%d+)%.(%d+)%.(%d+)%.(%d+)/(%d+)$") < 100);
        let long = vec![b'1'; 100_000];
        assert!(cost(&long, b"^(%d+)%.(%d+)$") < 1_000_000);
        assert!(cost(&long, b"^(%w+)=(%w+)$") < 1_000_000);
        let text = b"key = value with some words".repeat(1000);
        assert!(cost(&text, b"%s+") < 1_000_000);
        assert!(cost(&text, b"^%s*(.-)%s*$") < 10_000_000);
        assert!(cost(b"abc", b"[%]]") < 100);
    }

    #[test]
    fn backtracking_patterns_are_expensive() {
        let s = vec![b'a'; 10_000];
        assert!(cost(&s, b".-.-.-.-b") > 1_000_000_000);
        assert!(cost(&s, b"a*a*a*b") > 1_000_000_000);
        assert!(cost(&s, &b"a?".repeat(40)) > 1_000_000_000);
        let long = vec![b'a'; 1_000_000];
        assert!(cost(&long, b"a*b") > 1_000_000_000);
        // A literal that may match nothing does not stop the backtracking.
        let s = vec![b'a'; 1000];
        assert!(cost(&s, b"a*b*a*b*a*b*a*c") > 1_000_000_000);
        assert!(cost(&s, b"a*b?a*b-a*c") > 1_000_000_000);
    }
}
