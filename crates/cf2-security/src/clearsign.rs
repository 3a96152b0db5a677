//! A strict reader of clearsigned files (RFC 4880 §7, what `gpg --clearsign` writes), in the
//! manner of apt's `SplitClearSignedFile`: the file must be exactly one signed message —
//! blank lines, the `-----BEGIN PGP SIGNED MESSAGE-----` line, `Hash:` headers, a blank
//! line, the dash-escaped text, the signature block, then nothing but blank lines. Anything
//! else is refused, so the text cf2 compiles is the text gpg verified and nothing beside it.
//!
//! The text returned is what the signature covers: dash-escaping undone, line ends made
//! `\n`, and the spaces and tabs at the end of each line removed (RFC 4880 §7.1: they are
//! not signed, so they must not be compiled either). It is preceded by one empty line for
//! each line of the file before it, so that line numbers in messages are the file's; the
//! lines whose `- ` was removed are listed, so that columns on them can be the file's too.

const BEGIN_MESSAGE: &str = "-----BEGIN PGP SIGNED MESSAGE-----";
const BEGIN_SIGNATURE: &str = "-----BEGIN PGP SIGNATURE-----";
const END_SIGNATURE: &str = "-----END PGP SIGNATURE-----";

/// Why a file is not a clean clearsigned file (completes "it is not a clean clearsigned
/// file: ...").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotClean(pub String);

impl std::fmt::Display for NotClean {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Binary OpenPGP data (what `gpg --sign` writes) starts with a packet header, a byte with
/// its high bit set (RFC 4880 §4.2), and is not UTF-8 text.
fn is_binary_openpgp(data: &[u8]) -> bool {
    matches!(data.first(), Some(b) if *b >= 0x80 && std::str::from_utf8(data).is_err())
}

/// What a clearsigned file signs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedText {
    /// The signed text, after one empty line for each line of the file before it.
    pub text: Vec<u8>,
    /// The lines (1-based, of the file and of `text` alike) that were dash-escaped in the
    /// file: `text` has them without their leading `- `.
    pub dash_escaped: Vec<u32>,
}

/// The signed text of a clearsigned file.
pub fn signed_text(data: &[u8]) -> Result<SignedText, NotClean> {
    let bad = |m: &str| Err(NotClean(m.to_string()));
    let mut lines = data
        .split(|b| *b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let mut n = 0usize;
    // Blank lines, then the armour line.
    loop {
        let Some(line) = lines.next() else {
            return bad("it has no `-----BEGIN PGP SIGNED MESSAGE-----` line");
        };
        n += 1;
        if is_blank(line) {
            continue;
        }
        if trim_end(line) == BEGIN_MESSAGE.as_bytes() {
            break;
        }
        let after_mark = line.strip_prefix(b"\xEF\xBB\xBF");
        if n == 1 && after_mark.map(trim_end) == Some(BEGIN_MESSAGE.as_bytes()) {
            return bad("a byte order mark (U+FEFF) comes before `-----BEGIN PGP SIGNED MESSAGE-----`: gpg does not write one (an editor added it), so remove it");
        }
        let line = after_mark.unwrap_or(line);
        // `gpg --sign` writes an OpenPGP message (binary, or armoured with `--armor`):
        // the text is inside it, not beside a signature, so it cannot be read as text.
        if n == 1 && (trim_end(line) == b"-----BEGIN PGP MESSAGE-----" || is_binary_openpgp(data)) {
            return bad("it is an OpenPGP message, as `gpg --sign` writes, not a clearsigned text (sign it with `gpg --clearsign`)");
        }
        return Err(NotClean(format!("line {n} comes before `{BEGIN_MESSAGE}`")));
    }
    // Armour headers: only `Hash:`, up to a blank line.
    loop {
        let Some(line) = lines.next() else {
            return bad("it ends in the armour headers");
        };
        n += 1;
        if is_blank(line) {
            break;
        }
        if line.starts_with(b"Hash:") {
            continue;
        }
        return Err(NotClean(format!(
            "line {n} is an armour header other than `Hash:`"
        )));
    }
    // The signed text, dash-escaped.
    let first_text_line = n + 1;
    let mut text: Vec<&[u8]> = Vec::new();
    let mut dash_escaped = Vec::new();
    loop {
        let Some(line) = lines.next() else {
            return bad("it has no signature (no `-----BEGIN PGP SIGNATURE-----` line)");
        };
        n += 1;
        if trim_end(line) == BEGIN_SIGNATURE.as_bytes() {
            break;
        }
        if let Some(rest) = line.strip_prefix(b"- ") {
            dash_escaped.push(u32::try_from(n).unwrap_or(u32::MAX));
            text.push(trim_end(rest));
        } else if line.starts_with(b"-") {
            return Err(NotClean(format!(
                "line {n} starts with `-` but is not dash-escaped (a second message or signature inside the text?)"
            )));
        } else {
            text.push(trim_end(line));
        }
    }
    // The signature block.
    loop {
        let Some(line) = lines.next() else {
            return bad("the signature block has no `-----END PGP SIGNATURE-----` line");
        };
        n += 1;
        if trim_end(line) == END_SIGNATURE.as_bytes() {
            break;
        }
    }
    // Nothing after it.
    for line in lines {
        n += 1;
        if !is_blank(line) {
            return Err(NotClean(format!(
                "line {n} comes after the signature (only one signed message may be in the file)"
            )));
        }
    }
    // One empty line for each line before the text, so that positions in messages about
    // the compiled text are positions in the file.
    let mut out = vec![b'\n'; first_text_line - 1];
    for line in text {
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    Ok(SignedText {
        text: out,
        dash_escaped,
    })
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| b" \t\r".contains(b))
}

fn trim_end(line: &[u8]) -> &[u8] {
    let end = line
        .iter()
        .rposition(|b| !b" \t\r".contains(b))
        .map_or(0, |i| i + 1);
    &line[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIG: &str = "-----BEGIN PGP SIGNATURE-----\n\niQEz\n=abcd\n-----END PGP SIGNATURE-----\n";

    fn file(body: &str) -> String {
        format!("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n{body}{SIG}")
    }

    #[test]
    fn reads_the_signed_text() {
        let got =
            signed_text(file("A => 1\n- -not a header\nB => 'x'   \n- - x\n").as_bytes()).unwrap();
        assert_eq!(
            String::from_utf8(got.text).unwrap(),
            "\n\n\nA => 1\n-not a header\nB => 'x'\n- x\n"
        );
        // The lines of the file that lost their `- `.
        assert_eq!(got.dash_escaped, [5, 7]);
        let crlf = file("A => 1\r\n- -B\r\n").replace('\n', "\r\n");
        let got = signed_text(crlf.as_bytes()).unwrap();
        assert_eq!(got.text, b"\n\n\nA => 1\n-B\n");
        assert_eq!(got.dash_escaped, [5]);
        let blank = format!("\n\n{}\n\n", file("A => 1\n"));
        let got = signed_text(blank.as_bytes()).unwrap();
        assert_eq!(got.text, b"\n\n\n\n\nA => 1\n");
        assert!(got.dash_escaped.is_empty());
    }

    #[test]
    fn names_gpg_sign_output() {
        // A compressed-data packet, as `gpg --sign` starts its output.
        let binary = [0xA3, 0x01, 0x9B, 0xC0, 0xCC, 0xFF, b'\n', 0x00];
        let e = signed_text(&binary).unwrap_err();
        assert!(e.0.contains("`gpg --clearsign`"), "{e}");
    }

    #[test]
    fn refuses_anything_else() {
        let cases = [
            ("A => 1\n", "comes before"),
            ("\n \n", "no `-----BEGIN"),
            (&format!("X => 2\n{}", file("A => 1\n")), "before"),
            (&format!("{}X => 2\n", file("A => 1\n")), "after the signature"),
            (&file("A => 1\n-----BEGIN PGP SIGNED MESSAGE-----\n"), "not dash-escaped"),
            (
                &file("A => 1\n").replace("Hash: SHA256", "Hash: SHA256\nNotDashEscaped: yes"),
                "other than `Hash:`",
            ),
            (
                "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nA => 1\n",
                "no signature",
            ),
            (
                "-----BEGIN PGP MESSAGE-----\n\nowGbwMvMwCV2\n-----END PGP MESSAGE-----\n",
                "`gpg --sign`",
            ),
            (
                "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nA\n-----BEGIN PGP SIGNATURE-----\nxx\n",
                "no `-----END",
            ),
        ];
        for (text, want) in cases {
            let e = signed_text(text.as_bytes()).unwrap_err();
            assert!(e.0.contains(want), "{text:?}: {e}");
        }
    }
}
