//! CF2 numbers: integers stay integers (JSON keeps them so, clarifications §7); anything
//! with a fractional part is a float. Arithmetic is checked: an overflow is an error for the
//! caller to report, never a wrapped or infinite value.

use std::cmp::Ordering;
use std::fmt;

#[derive(Debug, Clone, Copy)]
pub enum Number {
    Int(i64),
    Float(f64),
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        self.compare(*other) == Some(Ordering::Equal)
    }
}

/// The exact order of integer `i` and float `f`.
fn int_float_cmp(i: i64, f: f64) -> Option<Ordering> {
    // 2^63, exactly representable: every i64 is below it and at or above its negation.
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() {
        return None;
    }
    if f >= TWO_63 {
        return Some(Ordering::Less);
    }
    if f < -TWO_63 {
        return Some(Ordering::Greater);
    }
    // |whole| <= 2^63 and whole is integral, so the conversion is exact (-2^63 included).
    let whole = f.trunc();
    match i.cmp(&(whole as i64)) {
        Ordering::Equal => 0.0.partial_cmp(&(f - whole)),
        unequal => Some(unequal),
    }
}

impl Number {
    /// The integer this number is, if it has no fractional part and fits (`3` and `3.0`,
    /// not `3.5`): a whole float counts as its integer wherever one is asked for, as in
    /// Perl (`$l[3.0]`).
    pub fn as_whole(self) -> Option<i64> {
        match self {
            Number::Int(i) => Some(i),
            Number::Float(f) => {
                // -2^63 <= f < 2^63 and integral: the conversion is exact.
                let in_range =
                    (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f);
                (in_range && f.fract() == 0.0).then_some(f as i64)
            }
        }
    }

    pub fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }

    /// Numeric comparison (`None` only for NaN, which never arises from checked arithmetic).
    /// An integer and a float compare by their exact values: converting the integer to a
    /// float would round one above 2^53 (`9007199254740993 == 9007199254740992.0` would hold).
    pub fn compare(self, other: Number) -> Option<Ordering> {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => Some(a.cmp(&b)),
            (Number::Int(a), Number::Float(b)) => int_float_cmp(a, b),
            (Number::Float(a), Number::Int(b)) => int_float_cmp(b, a).map(Ordering::reverse),
            (Number::Float(a), Number::Float(b)) => a.partial_cmp(&b),
        }
    }

    /// A float that holds an integral value in range becomes an `Int`; non-finite is `None`.
    pub fn normalize_float(f: f64) -> Option<Number> {
        if !f.is_finite() {
            return None;
        }
        Some(Number::Float(f))
    }

    fn float_op(a: Number, b: Number, f: impl Fn(f64, f64) -> f64) -> Option<Number> {
        Number::normalize_float(f(a.as_f64(), b.as_f64()))
    }

    pub fn checked_add(self, other: Number) -> Option<Number> {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => a.checked_add(b).map(Number::Int),
            (a, b) => Number::float_op(a, b, |x, y| x + y),
        }
    }

    pub fn checked_sub(self, other: Number) -> Option<Number> {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => a.checked_sub(b).map(Number::Int),
            (a, b) => Number::float_op(a, b, |x, y| x - y),
        }
    }

    pub fn checked_mul(self, other: Number) -> Option<Number> {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => a.checked_mul(b).map(Number::Int),
            (a, b) => Number::float_op(a, b, |x, y| x * y),
        }
    }

    /// Division; an exact integer quotient stays an integer (`6 / 2` is `3`, `7 / 2` is
    /// `3.5`). `None` for division by zero or overflow.
    pub fn checked_div(self, other: Number) -> Option<Number> {
        if other.as_f64() == 0.0 {
            return None;
        }
        match (self, other) {
            // i64::MIN / -1 overflows: an error like every other integer overflow.
            (Number::Int(a), Number::Int(b)) => match a.checked_rem(b) {
                None => None,
                Some(0) => a.checked_div(b).map(Number::Int),
                Some(_) => Number::float_op(self, other, |x, y| x / y),
            },
            (a, b) => Number::float_op(a, b, |x, y| x / y),
        }
    }

    pub fn checked_neg(self) -> Option<Number> {
        match self {
            Number::Int(a) => a.checked_neg().map(Number::Int),
            Number::Float(f) => Some(Number::Float(-f)),
        }
    }

    /// `f` rounded to 15 significant digits, as Perl's `%.15g` shows a number: the nearest
    /// float to that decimal. Every output and every conversion to text shows a float so,
    /// and a float so rounded reads back as itself (15 digits always survive a double).
    pub fn perl_rounded(f: f64) -> f64 {
        if !f.is_finite() || f == 0.0 {
            return f;
        }
        // Near the largest float, 15 digits round up past it: keep the float as it is.
        match format!("{f:.14e}").parse::<f64>() {
            Ok(r) if r.is_finite() => r,
            _ => f,
        }
    }

    /// Parses text that spells a number: what arithmetic accepts from text (clarifications
    /// §7). That is a number as CF2 writes one (`42`, `-3.5`: `-?[0-9]+(\.[0-9]+)?`), with
    /// any ASCII white space around it, as Perl allows (`read()` of a file holding `42` and
    /// a newline gives a number). No `+`, exponent, `.5`, `5.`, hex, `Inf` or `NaN`.
    pub fn parse_text(s: &str) -> Option<Number> {
        let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
        let digits = t.strip_prefix('-').unwrap_or(t);
        if digits.is_empty() {
            return None;
        }
        let (int_part, frac) = match digits.split_once('.') {
            Some((i, f)) => (i, Some(f)),
            None => (digits, None),
        };
        if int_part.is_empty() || !int_part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        match frac {
            None => t
                .parse::<i64>()
                .ok()
                .map(Number::Int)
                .or_else(|| t.parse::<f64>().ok().and_then(Number::normalize_float)),
            Some(f) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => {
                t.parse::<f64>().ok().and_then(Number::normalize_float)
            }
            Some(_) => None,
        }
    }

    /// The number as text, as Perl turns a number into text (`++`, interpolation, `join`,
    /// matching): like [`Display`](fmt::Display), but a float with no fraction has no `.`
    /// either (`1.5 * 2 ++ ''` is `3`, as in Perl). Only the cf2 format keeps the `.`, so that
    /// a float reads back as a float.
    pub fn to_text(&self) -> String {
        let s = self.to_string();
        match self {
            Number::Float(_) => match s.strip_suffix(".0") {
                Some("-0") => "0".to_string(),
                Some(whole) => whole.to_string(),
                None => s,
            },
            Number::Int(_) => s,
        }
    }
}

/// Decimal notation, as Perl shows a number: an integer in full; a float with 15
/// significant digits (`0.1 + 0.2` is `0.3`, [`Number::perl_rounded`]), never in exponent
/// form (CF2 has none), and always with a `.` so that it reads back as a float (`1e300` is
/// written out in full with `.0`). What is written reads back to a number written the same.
impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Int(i) => write!(f, "{i}"),
            Number::Float(x) => {
                let s = format!("{}", Number::perl_rounded(*x));
                if s.contains('.') || s.contains("inf") || s.contains("NaN") {
                    write!(f, "{s}")
                } else {
                    write!(f, "{s}.0")
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 15 digits, as Perl shows a number, except for the few largest floats, which 15
    /// digits would round past the largest (semantics §2).
    #[test]
    fn floats_show_15_digits_but_the_largest_read_back() {
        assert_eq!(Number::Float(1.0 / 3.0).to_text(), "0.333333333333333");
        assert_eq!(Number::perl_rounded(f64::MAX), f64::MAX);
        assert_eq!(Number::perl_rounded(-f64::MAX), -f64::MAX);
        assert_eq!(
            Number::perl_rounded(1.797693134862314e308),
            1.79769313486231e308
        );
    }

    #[test]
    fn integers_and_floats_compare_exactly() {
        use Ordering::*;
        let cmp = |i: i64, f: f64| Number::Int(i).compare(Number::Float(f));
        assert_eq!(cmp(3, 3.0), Some(Equal));
        assert_eq!(cmp(3, 3.5), Some(Less));
        assert_eq!(cmp(-2, -2.5), Some(Greater));
        assert_eq!(
            cmp(9_007_199_254_740_993, 9_007_199_254_740_992.0),
            Some(Greater)
        );
        assert_eq!(cmp(i64::MAX, 9_223_372_036_854_775_808.0), Some(Less));
        assert_eq!(cmp(i64::MIN, -9_223_372_036_854_775_808.0), Some(Equal));
        assert_eq!(cmp(i64::MIN, -1e19), Some(Greater));
        assert_eq!(
            Number::Float(0.5).compare(Number::Int(1)),
            Some(Less),
            "the float on the left"
        );
    }

    #[test]
    fn display_keeps_the_kind() {
        assert_eq!(Number::Int(123).to_string(), "123");
        assert_eq!(Number::Float(-45.67).to_string(), "-45.67");
        assert_eq!(Number::Float(3.0).to_string(), "3.0");
        assert_eq!(Number::Float(3.0).to_text(), "3");
        assert_eq!(Number::Float(-0.0).to_text(), "0");
        assert_eq!(Number::Float(2.5).to_text(), "2.5");
        assert_eq!(Number::Float(1e20).to_text(), "100000000000000000000");
        assert_eq!(Number::Int(10).to_text(), "10");
        assert!(Number::Float(1e300).to_string().ends_with(".0"));
        assert_eq!(Number::Float(0.1 + 0.2).to_string(), "0.3");
        assert_eq!(Number::Float(1.0 / 3.0).to_string(), "0.333333333333333");
        assert_eq!(Number::Float(-2.0 / 3.0).to_string(), "-0.666666666666667");
        assert_eq!(Number::Float(1e-7).to_string(), "0.0000001");
        assert_eq!(
            Number::Float(9007199254740993.0).to_string(),
            "9007199254740990.0"
        );
        assert_eq!(Number::Float(-0.0).to_string(), "-0.0");
    }

    #[test]
    fn perl_rounding_is_stable() {
        for x in [
            0.1 + 0.2,
            1.0 / 3.0,
            2.0 / 3.0,
            1e300 / 7.0,
            1e-300 / 3.0,
            123456.789e10,
        ] {
            let shown = Number::Float(x).to_string();
            let back: f64 = shown.parse().unwrap();
            assert_eq!(Number::Float(back).to_string(), shown, "{x}");
        }
    }

    #[test]
    fn arithmetic_is_checked() {
        assert_eq!(Number::Int(i64::MAX).checked_add(Number::Int(1)), None);
        assert_eq!(Number::Int(7).checked_div(Number::Int(0)), None);
        assert_eq!(
            Number::Int(6).checked_div(Number::Int(2)),
            Some(Number::Int(3))
        );
        assert_eq!(
            Number::Int(7).checked_div(Number::Int(2)),
            Some(Number::Float(3.5))
        );
    }

    #[test]
    fn text_that_spells_a_number() {
        assert_eq!(Number::parse_text("23"), Some(Number::Int(23)));
        assert_eq!(Number::parse_text("-3.5"), Some(Number::Float(-3.5)));
        assert_eq!(Number::parse_text("1e5"), None);
        assert_eq!(Number::parse_text("abc"), None);
        assert_eq!(Number::parse_text("1."), None);
        assert_eq!(Number::parse_text(" 3\n"), Some(Number::Int(3)));
        assert_eq!(Number::parse_text("\u{a0}3"), None);
        for no in ["+3", ".5", "0x10", "Inf", "NaN", "- 3", "1 2", ""] {
            assert_eq!(Number::parse_text(no), None, "{no:?}");
        }
    }
}
