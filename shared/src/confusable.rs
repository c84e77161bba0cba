//! Characters that read as other characters, folded before any word
//! matching ([`crate::sensitive::words`], and through it the risk rules and
//! sensitive-field detection).
//!
//! A page controls the text of its controls. "Dеlеtе аccount" with Cyrillic
//! `е` and `а`, "𝐃𝐞𝐥𝐞𝐭𝐞", "Ｄｅｌｅｔｅ", "De\u{301}lete" (a combining accent
//! that would otherwise split the word) and "ᴅᴇʟᴇᴛᴇ" all read as "Delete" to
//! a person; the rules must read them the same way. [`fold`] maps one
//! character to its Latin skeleton (in the spirit of Unicode's confusables
//! "skeleton", restricted to the letters that look like Latin ones) or drops
//! it when it is invisible or only decorates the previous letter.
//!
//! Beyond look-alikes, it folds what one script writes several ways, so a
//! keyword is written once: Arabic/Persian letter variants (alef with
//! hamza, Persian yeh and keheh, teh marbuta), Persian and Arabic-Indic
//! digits, and Vietnamese toned vowels; and it drops what changes nothing a
//! person reads: bidirectional marks, embeddings and isolates, the tatweel,
//! and Arabic vowel signs.
//!
//! The tables favour asking: a word written entirely in Cyrillic or Greek
//! is folded too (it becomes Latin-looking nonsense that matches nothing,
//! unless it *is* a look-alike of a keyword, which is exactly the case to
//! catch). ASCII is never touched, so the common path costs one comparison.

/// What one character becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    Keep(char),
    /// Invisible (zero-width space/joiners, word joiner, BOM, soft hyphen)
    /// or a combining mark: it must not split a word.
    Drop,
}

/// Zero-width and formatting characters that render as nothing: zero-width
/// space and (non-)joiners (the Persian half-space ZWNJ joins the word it
/// sits in), word joiner, BOM, soft hyphen, and the bidirectional marks,
/// embeddings and isolates that right-to-left text carries (LRM, RLM, ALM,
/// LRE…PDF, LRI…PDI), plus the Arabic tatweel (a stretching stroke).
const INVISIBLE: [char; 21] = [
    '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{00AD}', '\u{180E}', '\u{034F}', '\u{200E}',
    '\u{200F}', '\u{061C}', '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}',
    '\u{2068}', '\u{2069}', '\u{0640}',
];

/// Letters that look like a Latin letter (Cyrillic, Greek, Armenian, Latin
/// small capitals and IPA, letterlike symbols).
const LOOK_ALIKES: &[(char, char)] = &[
    // Cyrillic
    ('а', 'a'),
    ('в', 'b'),
    ('е', 'e'),
    ('ё', 'e'),
    ('һ', 'h'),
    ('і', 'i'),
    ('ї', 'i'),
    ('ј', 'j'),
    ('к', 'k'),
    ('ӏ', 'l'),
    ('м', 'm'),
    ('н', 'h'),
    ('о', 'o'),
    ('р', 'p'),
    ('ԛ', 'q'),
    ('г', 'r'),
    ('с', 'c'),
    ('ѕ', 's'),
    ('т', 't'),
    ('у', 'y'),
    ('ԝ', 'w'),
    ('х', 'x'),
    ('ԁ', 'd'),
    ('ь', 'b'),
    ('А', 'A'),
    ('В', 'B'),
    ('Е', 'E'),
    ('Ё', 'E'),
    ('Һ', 'H'),
    ('І', 'I'),
    ('Ї', 'I'),
    ('Ј', 'J'),
    ('К', 'K'),
    ('Ӏ', 'I'),
    ('М', 'M'),
    ('Н', 'H'),
    ('О', 'O'),
    ('Р', 'P'),
    ('Ԛ', 'Q'),
    ('С', 'C'),
    ('Ѕ', 'S'),
    ('Т', 'T'),
    ('У', 'Y'),
    ('Ү', 'Y'),
    ('Ԝ', 'W'),
    ('Х', 'X'),
    ('Ԁ', 'D'),
    ('Ь', 'b'),
    // Greek
    ('α', 'a'),
    ('β', 'b'),
    ('ε', 'e'),
    ('η', 'n'),
    ('ι', 'i'),
    ('κ', 'k'),
    ('ν', 'v'),
    ('ο', 'o'),
    ('ρ', 'p'),
    ('τ', 't'),
    ('υ', 'u'),
    ('χ', 'x'),
    ('γ', 'y'),
    ('ω', 'w'),
    ('ϲ', 'c'),
    ('ϳ', 'j'),
    ('Α', 'A'),
    ('Β', 'B'),
    ('Ε', 'E'),
    ('Ζ', 'Z'),
    ('Η', 'H'),
    ('Ι', 'I'),
    ('Κ', 'K'),
    ('Μ', 'M'),
    ('Ν', 'N'),
    ('Ο', 'O'),
    ('Ρ', 'P'),
    ('Τ', 'T'),
    ('Υ', 'Y'),
    ('Χ', 'X'),
    ('Ϲ', 'C'),
    // Armenian
    ('օ', 'o'),
    ('ս', 'u'),
    ('հ', 'h'),
    ('ո', 'n'),
    ('ց', 'g'),
    ('զ', 'q'),
    // Latin small capitals, IPA and other Latin look-alikes
    ('ᴀ', 'a'),
    ('ʙ', 'b'),
    ('ᴄ', 'c'),
    ('ᴅ', 'd'),
    ('ᴇ', 'e'),
    ('ғ', 'f'),
    ('ɢ', 'g'),
    ('ʜ', 'h'),
    ('ɪ', 'i'),
    ('ᴊ', 'j'),
    ('ᴋ', 'k'),
    ('ʟ', 'l'),
    ('ᴍ', 'm'),
    ('ɴ', 'n'),
    ('ᴏ', 'o'),
    ('ᴘ', 'p'),
    ('ʀ', 'r'),
    ('ꜱ', 's'),
    ('ᴛ', 't'),
    ('ᴜ', 'u'),
    ('ᴠ', 'v'),
    ('ᴡ', 'w'),
    ('ʏ', 'y'),
    ('ᴢ', 'z'),
    ('ı', 'i'),
    ('ȷ', 'j'),
    ('ɑ', 'a'),
    ('ɡ', 'g'),
    ('ɩ', 'i'),
    ('ɵ', 'o'),
    ('ʋ', 'u'),
    ('ſ', 's'),
    // Letterlike symbols (the holes of the mathematical alphabets)
    ('ℎ', 'h'),
    ('ℯ', 'e'),
    ('ℴ', 'o'),
    ('ℊ', 'g'),
    ('ℓ', 'l'),
    ('ℬ', 'B'),
    ('ℰ', 'E'),
    ('ℱ', 'F'),
    ('ℋ', 'H'),
    ('ℐ', 'I'),
    ('ℒ', 'L'),
    ('ℳ', 'M'),
    ('ℛ', 'R'),
    ('ℂ', 'C'),
    ('ℍ', 'H'),
    ('ℕ', 'N'),
    ('ℙ', 'P'),
    ('ℚ', 'Q'),
    ('ℝ', 'R'),
    ('ℤ', 'Z'),
    ('ℭ', 'C'),
    ('ℌ', 'H'),
    ('ℑ', 'I'),
    ('ℜ', 'R'),
    ('ℨ', 'Z'),
    ('\u{212A}', 'K'),
    ('\u{212B}', 'A'),
];

/// Latin letters with diacritics beyond Latin-1 (Latin Extended-A), lower
/// case, to their base letter. Latin-1 ones are in
/// [`crate::sensitive::fold_diacritic`].
const EXTENDED_A: &[(&str, char)] = &[
    ("āăą", 'a'),
    ("ćĉċč", 'c'),
    ("ďđ", 'd'),
    ("ēĕėęě", 'e'),
    ("ĝğġģ", 'g'),
    ("ĥħ", 'h'),
    ("ĩīĭįı", 'i'),
    ("ĵ", 'j'),
    ("ķ", 'k'),
    ("ĺļľŀł", 'l'),
    ("ńņňŉ", 'n'),
    ("ōŏőø", 'o'),
    ("ŕŗř", 'r'),
    ("śŝşšș", 's'),
    ("ţťŧț", 't'),
    ("ũūŭůűų", 'u'),
    ("ŵ", 'w'),
    ("ŷ", 'y'),
    ("źżž", 'z'),
];

/// Letters that Hindi, Bengali and Russian text writes two ways, to one:
/// the precomposed nukta letters to their base letter (the nukta itself is
/// dropped as a combining mark, so `ज़`, `ज़` and `ज` read alike),
/// candrabindu to anusvara (`हटाएँ`/`हटाएं`), and `й` to `и` (its breve,
/// written as a combining mark, is dropped too).
const SPELLING_VARIANTS: &[(char, char)] = &[
    ('\u{0958}', '\u{0915}'),
    ('\u{0959}', '\u{0916}'),
    ('\u{095A}', '\u{0917}'),
    ('\u{095B}', '\u{091C}'),
    ('\u{095C}', '\u{0921}'),
    ('\u{095D}', '\u{0922}'),
    ('\u{095E}', '\u{092B}'),
    ('\u{095F}', '\u{092F}'),
    ('\u{0901}', '\u{0902}'),
    ('\u{09DC}', '\u{09A1}'),
    ('\u{09DD}', '\u{09A2}'),
    ('\u{09DF}', '\u{09AF}'),
    ('\u{0981}', '\u{0982}'),
    ('й', 'и'),
    ('Й', 'И'),
];

/// Greek capitals with tonos or dialytika, to the plain capital (Greek
/// written in capitals drops its accents).
const GREEK_ACCENTED_CAPITALS: &[(char, char)] =
    &[('Ά', 'Α'), ('Έ', 'Ε'), ('Ή', 'Η'), ('Ί', 'Ι'), ('Ό', 'Ο'), ('Ύ', 'Υ'), ('Ώ', 'Ω'), ('Ϊ', 'Ι'), ('Ϋ', 'Υ')];

fn is_greek(c: char) -> bool {
    matches!(c as u32, 0x0370..=0x03FF | 0x1F00..=0x1FFF)
}

/// `s` with every Greek word put in capitals without accents (final sigma
/// included: `ς` → `Σ`), or `None` when `s` has no Greek. A Greek word is a
/// run of letters written all in Greek, or one with a Greek letter that
/// looks like no Latin letter (`δ`, `λ`, `π`, `σ`, `ή`…): a Latin `o` slipped
/// into `Αποστολή` does not make it Latin (its Latin letters are put in
/// capitals too). A Greek word then reads the same in any case, while a
/// Greek look-alike inside a Latin word (`Dεlεtε`) is left to [`fold`],
/// which reads it as the Latin letter it looks like. Greek capitals that
/// spell a Latin word (`ΡΑΥ`) still fold to it.
pub fn greek_runs_upper(s: &str) -> Option<String> {
    if !s.chars().any(is_greek) {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        let mut letters = run.chars().filter(|c| c.is_alphabetic());
        let all_greek = letters.clone().all(is_greek);
        let greek_only_letter = letters.any(|c| is_greek(c) && !LOOK_ALIKES.iter().any(|(k, _)| *k == c));
        if all_greek || greek_only_letter {
            for c in run.chars() {
                if c.is_alphabetic() {
                    for u in c.to_uppercase() {
                        out.push(GREEK_ACCENTED_CAPITALS.iter().find(|(k, _)| *k == u).map_or(u, |&(_, p)| p));
                    }
                } else {
                    out.push(c);
                }
            }
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in s.chars() {
        if c.is_alphanumeric() || matches!(fold(c), Fold::Drop) {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    Some(out)
}

/// Combining marks (they decorate the previous letter): Latin, Cyrillic,
/// the Arabic vowel signs (harakat, shadda, sukun, superscript alef) and
/// Quranic marks. Thai and Hangul marks are letters of their words and are
/// kept (see [`crate::sensitive::is_unspaced`]).
fn is_combining(c: char) -> bool {
    matches!(c as u32,
        0x0591..=0x05BD | 0x05BF | 0x05C1..=0x05C2 | 0x05C4..=0x05C5 | 0x05C7 // Hebrew points and accents
        | 0x093C | 0x09BC // Devanagari and Bengali nukta
        | 0x0300..=0x036F | 0x0483..=0x0489 | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F
        | 0x0610..=0x061A | 0x064B..=0x065F | 0x0670 | 0x06D6..=0x06DC | 0x06DF..=0x06E4 | 0x06E7..=0x06E8
        | 0x06EA..=0x06ED)
}

/// Letter variants that Arabic and Persian text writes interchangeably, to
/// one form: hamza-carrying and wasla alefs to bare alef, Persian yeh and
/// alef maksura to Arabic yeh, keheh to kaf, teh marbuta and heh with yeh
/// to heh, hamza on waw/yeh to the bare letter. A keyword is written once
/// and matches every spelling ("إرسال"/"ارسال", "پرداخت کنید"/"پرداخت كنيد").
const ARABIC_VARIANTS: &[(char, char)] = &[
    ('أ', 'ا'),
    ('إ', 'ا'),
    ('آ', 'ا'),
    ('ٱ', 'ا'),
    ('ی', 'ي'),
    ('ى', 'ي'),
    ('ئ', 'ي'),
    ('ک', 'ك'),
    ('ة', 'ه'),
    ('ۀ', 'ه'),
    ('ؤ', 'و'),
];

/// Vietnamese vowels with tone marks (Latin Extended Additional) and the
/// horned letters, lower case, to their base letter ("Xoá"/"Xóa" → "xoa",
/// "Đặt hàng" → "dat hang").
const VIETNAMESE: &[(&str, char)] = &[
    ("ạảấầẩẫậắằẳẵặ", 'a'),
    ("ẹẻẽếềểễệ", 'e'),
    ("ỉịĩ", 'i'),
    ("ọỏốồổỗộớờởỡợơ", 'o'),
    ("ụủứừửữựưǔ", 'u'),
    ("ỳỵỷỹ", 'y'),
];

/// Mathematical alphanumeric symbols (bold, italic, script, fraktur,
/// double-struck, sans-serif, monospace … letters and digits).
fn mathematical(c: char) -> Option<char> {
    let cp = c as u32;
    match cp {
        0x1D400..=0x1D6A3 => {
            let i = (cp - 0x1D400) % 52;
            let base = if i < 26 { b'A' + i as u8 } else { b'a' + (i - 26) as u8 };
            Some(base as char)
        }
        0x1D7CE..=0x1D7FF => Some((b'0' + ((cp - 0x1D7CE) % 10) as u8) as char),
        _ => None,
    }
}

/// The character as the word matchers should read it.
pub fn fold(c: char) -> Fold {
    if c.is_ascii() {
        return Fold::Keep(c);
    }
    let cp = c as u32;
    // Kana, Han, Hangul and the rest above U+3000 have no entry in the
    // tables but these ranges: answer them at once (they are most of an
    // East Asian text).
    if cp >= 0x3000
        && cp != 0xFEFF
        && !(0xFE20..=0xFE2F).contains(&cp)
        && !(0xFF01..=0xFF5E).contains(&cp)
        && !(0x1D400..=0x1D7FF).contains(&cp)
    {
        return Fold::Keep(c);
    }
    if INVISIBLE.contains(&c) || is_combining(c) {
        return Fold::Drop;
    }
    if let Some(&(_, l)) = SPELLING_VARIANTS.iter().find(|(k, _)| *k == c) {
        return Fold::Keep(l);
    }
    // Arabic-Indic and Persian digits read as ASCII digits.
    if (0x0660..=0x0669).contains(&cp) || (0x06F0..=0x06F9).contains(&cp) {
        return Fold::Keep((b'0' + (cp & 0xF) as u8) as char);
    }
    if (0x0600..=0x06FF).contains(&cp) {
        return Fold::Keep(ARABIC_VARIANTS.iter().find(|(k, _)| *k == c).map_or(c, |&(_, l)| l));
    }
    if ((0x1EA0..=0x1EF9).contains(&cp) || matches!(c, 'ơ' | 'ư' | 'ǔ'))
        && let Some(&(_, l)) = VIETNAMESE.iter().find(|(set, _)| set.contains(c))
    {
        return Fold::Keep(l);
    }
    // Full-width ASCII (Ａ–Ｚ, ａ–ｚ, ０–９ and punctuation).
    if (0xFF01..=0xFF5E).contains(&cp) {
        return Fold::Keep(char::from_u32(cp - 0xFF01 + 0x21).unwrap_or(c));
    }
    // Circled letters ⓐ–ⓩ, Ⓐ–Ⓩ.
    if (0x24B6..=0x24CF).contains(&cp) {
        return Fold::Keep((b'A' + (cp - 0x24B6) as u8) as char);
    }
    if (0x24D0..=0x24E9).contains(&cp) {
        return Fold::Keep((b'a' + (cp - 0x24D0) as u8) as char);
    }
    if let Some(m) = mathematical(c) {
        return Fold::Keep(m);
    }
    if let Some(&(_, l)) = LOOK_ALIKES.iter().find(|(k, _)| *k == c) {
        return Fold::Keep(l);
    }
    if let Some(&(_, l)) = EXTENDED_A.iter().find(|(set, _)| set.contains(c)) {
        return Fold::Keep(l);
    }
    Fold::Keep(c)
}

/// `s` with every character [`fold`]ed (for display-free comparisons).
pub fn skeleton(s: &str) -> String {
    s.chars()
        .filter_map(|c| match fold(c) {
            Fold::Keep(k) => Some(k),
            Fold::Drop => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_alike_spellings_read_as_latin() {
        for s in [
            "Dеlеtе аccount",                 // Cyrillic е, а
            "Dεlεtε αccount",                 // Greek ε, α
            "𝐃𝐞𝐥𝐞𝐭𝐞 𝐚𝐜𝐜𝐨𝐮𝐧𝐭",                 // mathematical bold
            "𝙳𝚎𝚕𝚎𝚝𝚎 𝚊𝚌𝚌𝚘𝚞𝚗𝚝",                 // monospace
            "Ｄｅｌｅｔｅ ａｃｃｏｕｎｔ",    // full width
            "ᴅᴇʟᴇᴛᴇ ᴀᴄᴄᴏᴜɴᴛ",                 // small capitals
            "De\u{301}le\u{300}te account",   // combining accents
            "Dėlėtė aççount",                 // Latin Extended-A, Latin-1
            "De\u{200B}le\u{00AD}te account", // invisible
            "Ⓓⓔⓛⓔⓣⓔ ⓐⓒⓒⓞⓤⓝⓣ",                 // circled
        ] {
            let folded: String = crate::sensitive::words(s).join(" ");
            assert_eq!(folded, "delete account", "{s:?}");
        }
    }

    #[test]
    fn right_to_left_text_reads_one_way() {
        let w = |s: &str| crate::sensitive::words(s).join(" ");
        // Bidi marks, isolates and tatweel vanish; harakat are dropped.
        assert_eq!(w("ح\u{200F}ذف"), "حذف");
        assert_eq!(w("\u{2067}حذف الحساب\u{2069}"), "حذف الحساب");
        assert_eq!(w("حــذف"), "حذف");
        assert_eq!(w("حَذْف"), "حذف");
        // Alef with hamza, teh marbuta, Persian yeh and keheh fold.
        assert_eq!(w("إزالة"), w("ازاله"));
        assert_eq!(w("پرداخت کنید"), w("پرداخت كنيد"));
        assert_eq!(w("تأیید"), w("تاييد"));
        assert_eq!(w("۵۰۰ ٣"), "500 3");
    }

    #[test]
    fn vietnamese_tones_and_capitals_fold() {
        let w = |s: &str| crate::sensitive::words(s).join(" ");
        assert_eq!(w("Đặt hàng"), "dat hang");
        assert_eq!(w("ĐẶT HÀNG"), "dat hang");
        assert_eq!(w("Xo\u{301}a"), w("Xóa"));
        assert_eq!(w("Gửi"), "gui");
        assert_eq!(w("USUŃ"), w("usuń"));
        assert_eq!(w("HESABI SİL"), "hesabi sil");
    }

    #[test]
    fn greek_reads_alike_in_any_case_and_hebrew_and_indic_spellings_fold() {
        let w = |s: &str| crate::sensitive::words(s).join(" ");
        for (a, b) in [
            ("Διαγραφή λογαριασμού", "ΔΙΑΓΡΑΦΗ ΛΟΓΑΡΙΑΣΜΟΥ"),
            ("διαγραφή λογαριασμού", "ΔΙΑΓΡΑΦΗ ΛΟΓΑΡΙΑΣΜΟΎ"),
            ("Ναι", "ΝΑΙ"),
            ("ναι", "ΝΑΙ"),
            ("Πληρωμής", "ΠΛΗΡΩΜΗΣ"),
            ("υπογραφή", "ΥΠΟΓΡΑΦΗ"),
            ("μ\u{301}ενού", "ΜΕΝΟΥ"),
            ("מְחַק", "מחק"),
            ("हटाएँ", "हटाएं"),
            ("ज\u{93C}रूर", "\u{095B}रूर"),
            ("ज़रूर", "जरूर"),
            ("সরান", "সরান"),
            ("Изтрии\u{306}", "ИЗТРИЙ"),
        ] {
            assert_eq!(w(a), w(b), "{a} / {b}");
        }
        // Mixed case, and a Latin look-alike slipped into a Greek word.
        assert_eq!(w("ΔιΑγΡαΦή"), w("Διαγραφή"));
        assert_eq!(w("Απoστολή"), w("Αποστολή"));
        assert_eq!(w("Πληρωμή"), w("ΠΛΗΡΩΜΗ"));
        // Greek look-alikes inside or as Latin words still read as Latin.
        assert_eq!(w("Dεlεtε"), "delete");
        assert_eq!(w("Pαy"), "pay");
        assert_eq!(w("ΡΑΥ"), "pay");
        assert_eq!(w("ραυ"), "pay");
        // A virama does not split a word.
        assert_eq!(crate::sensitive::words("क्रेडिट कार्ड").len(), 2);
    }

    #[test]
    fn ascii_and_ordinary_letters_are_kept() {
        assert_eq!(skeleton("Delete account"), "Delete account");
        assert_eq!(skeleton("Löschen"), "Löschen", "Latin-1 diacritics are folded later, by words()");
        assert_eq!(crate::sensitive::words("Löschen Straße"), ["loschen", "straße"]);
        assert_eq!(skeleton("削除"), "削除");
    }
}
